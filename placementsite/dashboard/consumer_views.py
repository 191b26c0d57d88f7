"""Dashboard pages of consumers and projects: Consumers (list with filters and exports, with
the servers behind them for those who may see servers; one consumer with its allocations) and
Projects (usage by project).
"""

from django.http import Http404

from allocations.selectors import consumer_pages, project_pages
from scheduling.selectors import dashboard as flavor_reads

from . import exports
from .forms import ConsumerFilterForm
from .rendering import CONSUMERS, PROVIDERS, USAGE, page_number, render_page, staff_required


def _consumer_names(request, uuids):
    """The servers (name, flavor, project) behind consumers, for those who may see them."""
    if not request.user.has_perm("scheduling.view_server"):
        return {}
    return flavor_reads.consumer_names(uuids=uuids)


@staff_required(*CONSUMERS, "allocations.view_project")
def consumer_list(request):
    form = ConsumerFilterForm(request.GET, type_names=consumer_pages.consumer_type_names())
    data = form.cleaned_data if form.is_valid() else {}
    filters = consumer_pages.ConsumerFilters(
        **{name: data.get(name, "") for name in ("q", "project", "user", "consumer_type")}
    )
    fmt = exports.requested(request)
    if fmt:
        rows = exports.every_row(
            lambda n, size: consumer_pages.consumer_list_page(
                filters=filters, page_number=n, per_page=size
            )
        )
        return exports.response(
            fmt,
            "consumers",
            CONSUMER_COLUMNS,
            (
                {
                    "uuid": c.uuid,
                    "server": names.server_name if names else "",
                    "flavor": names.flavor if names else "",
                    "project": c.project,
                    "user": c.user,
                    "consumer_type": c.consumer_type or "",
                    "generation": c.generation,
                    "hosts": [name for _uuid, name in c.hosts],
                    "resources": dict(c.resources),
                    "created_at": c.created_at,
                    "updated_at": c.updated_at,
                }
                for c, names in _with_names(request, rows)
            ),
        )
    page = consumer_pages.consumer_list_page(filters=filters, page_number=page_number(request))
    return render_page(
        request,
        "consumer_list.html",
        "consumers",
        {
            "form": form,
            "page": page,
            "names": _consumer_names(request, [c.uuid for c in page.object_list]),
            "show_servers": request.user.has_perm("scheduling.view_server"),
        },
    )


def _with_names(request, rows):
    """``(consumer row, ConsumerName or None)`` of ``rows``, names read a batch at a time."""
    for batch in exports.in_batches(rows):
        names = _consumer_names(request, [row.uuid for row in batch])
        yield from ((row, names.get(str(row.uuid))) for row in batch)


CONSUMER_COLUMNS = [
    "uuid",
    "server",
    "flavor",
    "project",
    "user",
    "consumer_type",
    "generation",
    "hosts",
    "resources",
    "created_at",
    "updated_at",
]


@staff_required(*CONSUMERS, *PROVIDERS)
def consumer_detail(request, uuid):
    detail = consumer_pages.consumer_detail(uuid=uuid)
    if detail is None:
        raise Http404("No such consumer.")
    names = _consumer_names(request, [detail.consumer.uuid])
    return render_page(
        request,
        "consumer_detail.html",
        "consumers",
        {"detail": detail, "server": names.get(str(detail.consumer.uuid))},
    )


@staff_required("allocations.view_project", *USAGE)
def project_list(request):
    q = request.GET.get("q", "")[:255]
    fmt = exports.requested(request)
    if fmt:
        rows = exports.every_row(
            lambda n, size: project_pages.project_usage_page(q=q, page_number=n, per_page=size).page
        )
        return exports.response(
            fmt,
            "projects",
            ["project", "consumers", "users", "usage"],
            (
                {
                    "project": p.external_id,
                    "consumers": p.consumer_count,
                    "users": p.user_count,
                    "usage": p.usage,
                }
                for p in rows
            ),
        )
    usage = project_pages.project_usage_page(q=q, page_number=page_number(request))
    return render_page(request, "project_list.html", "projects", {"usage": usage, "q": q})
