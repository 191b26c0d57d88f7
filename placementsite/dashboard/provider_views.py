"""Dashboard pages of what the providers app holds: Providers (list with filters, sorts and
exports; one provider with its tree, inventories, usage, consumers, pools and host), Traits,
Resource classes and Aggregates (list and detail).

Names, zones and metadata of aggregates come from the scheduler's selectors, for those who may
see them.
"""

from django.http import Http404

from allocations.selectors import provider_pages
from providers.selectors import dashboard as provider_reads
from providers.selectors.resource_pools import pool_members_by_host
from scheduling.selectors import dashboard as flavor_reads

from . import exports
from .actions import host_context
from .forms import ProviderFilterForm
from .rendering import PROVIDERS, USAGE, page_number, render_page, staff_required


def _aggregate_names(request, uuids):
    """Names, zones and metadata of aggregates, for those who may see them."""
    if not request.user.has_perm("scheduling.view_aggregatemetadata"):
        return {}
    return flavor_reads.aggregate_names(uuids=uuids)


# --- providers ------------------------------------------------------------------------------


@staff_required(*USAGE)
def provider_list(request):
    form = ProviderFilterForm(request.GET)
    sort = request.GET.get("sort", "")[:300]
    if provider_pages.parse_provider_sort(sort=sort) is None:
        sort = ""
    fmt = exports.requested(request)
    if fmt:
        filters = form.filters()
        rows = exports.every_row(
            lambda n, size: provider_pages.provider_list_page(
                filters=filters, page_number=n, per_page=size, sort=sort
            )
        )
        return exports.response(
            fmt,
            "providers",
            PROVIDER_COLUMNS,
            (
                {
                    "name": row.name,
                    "uuid": row.uuid,
                    "parent_uuid": row.parent_uuid,
                    "root_uuid": row.root_uuid,
                    "tree_size": row.tree_size,
                    "sharing": row.is_sharing,
                    "traits": row.trait_count,
                    "aggregates": row.aggregate_count,
                    "generation": row.generation,
                    "inventories": exports.usage_map(row.inventories),
                }
                for row in rows
            ),
        )
    page = provider_pages.provider_list_page(
        filters=form.filters(), page_number=page_number(request), sort=sort
    )
    choices = provider_reads.provider_filter_choices()
    return render_page(
        request,
        "provider_list.html",
        "providers",
        {
            "form": form,
            "page": page,
            "choices": choices,
            "sort": sort,
            "sort_class": sort.partition(":")[2],
            "class_sorts": _sort_options(choices.resource_classes, sort),
        },
    )


PROVIDER_COLUMNS = [
    "name",
    "uuid",
    "parent_uuid",
    "root_uuid",
    "tree_size",
    "sharing",
    "traits",
    "aggregates",
    "generation",
    "inventories",  # a host's: its whole tree's
]


def _sort_options(class_names, current):
    """The orders the provider list's "Sort by" menu offers: the current one (a column
    header's), then most/least free and fullest/emptiest per class."""
    options = []
    if current and ":" not in current:
        options.append(
            (
                current,
                f"{current.lstrip('-')} ({'descending' if current[0] == '-' else 'ascending'})",
            )
        )
    for name in class_names:
        options += [
            (f"-free:{name}", f"most free {name} first"),
            (f"free:{name}", f"least free {name} first"),
            (f"-utilisation:{name}", f"fullest {name} first"),
            (f"utilisation:{name}", f"emptiest {name} first (by %)"),
        ]
    return options


@staff_required(*USAGE, "allocations.view_consumer")
def provider_detail(request, uuid):
    detail = provider_pages.provider_detail(uuid=uuid)
    if detail is None:
        raise Http404("No such resource provider.")
    provider = detail.provider
    pools = (
        pool_members_by_host(root_ids=[provider.id]).get(provider.id, [])
        if provider.parent_id is None and request.user.has_perm("providers.view_resourcepool")
        else []
    )
    return render_page(
        request,
        "provider_detail.html",
        "providers",
        {
            "detail": detail,
            "pools": pools,
            "aggregate_names": _aggregate_names(request, detail.aggregates),
            **host_context(request, provider),
        },
    )


# --- traits, resource classes, aggregates ---------------------------------------------------


@staff_required("providers.view_trait")
def trait_list(request):
    q = request.GET.get("q", "")[:255]
    show_all = request.GET.get("all") == "1"
    fmt = exports.requested(request)
    if fmt:
        rows = exports.every_row(
            lambda n, size: provider_reads.traits_with_counts(
                in_use_only=not show_all, q=q, page_number=n, per_page=size
            )
        )
        return exports.response(
            fmt,
            "traits",
            ["name", "custom", "providers"],
            ({"name": t.name, "custom": t.is_custom, "providers": t.provider_count} for t in rows),
        )
    page = provider_reads.traits_with_counts(
        in_use_only=not show_all, q=q, page_number=page_number(request)
    )
    return render_page(
        request, "trait_list.html", "traits", {"page": page, "q": q, "show_all": show_all}
    )


@staff_required("providers.view_resourceclass", *USAGE)
def resource_class_list(request):
    # As on the traits page: the classes some provider has, unless asked for all of them.
    show_all = request.GET.get("all") == "1"
    classes = provider_pages.resource_classes_with_counts()
    total = len(classes)
    if not show_all:
        classes = [rc for rc in classes if rc.provider_count or rc.used]
    fmt = exports.requested(request)
    if fmt:
        return exports.response(
            fmt,
            "resource-classes",
            ["name", "custom", "unit", "providers", "used"],
            (
                {
                    "name": rc.name,
                    "custom": rc.is_custom,
                    "unit": rc.unit,
                    "providers": rc.provider_count,
                    "used": rc.used,
                }
                for rc in classes
            ),
        )
    return render_page(
        request,
        "resource_class_list.html",
        "resource_classes",
        {"classes": classes, "show_all": show_all, "total": total},
    )


@staff_required("providers.view_aggregate")
def aggregate_list(request):
    fmt = exports.requested(request)
    if fmt:
        rows = exports.every_row(
            lambda n, size: provider_reads.aggregates_with_counts(page_number=n, per_page=size)
        )
        return exports.response(
            fmt,
            "aggregates",
            ["uuid", "name", "availability_zone", "metadata", "members"],
            _aggregate_export_rows(request, rows),
        )
    page = provider_reads.aggregates_with_counts(page_number=page_number(request))
    return render_page(
        request,
        "aggregate_list.html",
        "aggregates",
        {
            "page": page,
            "names": _aggregate_names(request, [a.uuid for a in page.object_list]),
            "show_names": request.user.has_perm("scheduling.view_aggregatemetadata"),
        },
    )


def _aggregate_export_rows(request, rows):
    for batch in exports.in_batches(rows):
        names = _aggregate_names(request, [a.uuid for a in batch])
        for a in batch:
            named = names.get(str(a.uuid))
            yield {
                "uuid": a.uuid,
                "name": named.name if named else "",
                "availability_zone": named.availability_zone if named else "",
                "metadata": named.metadata if named else {},
                "members": a.member_count,
            }


@staff_required("providers.view_aggregate", *PROVIDERS)
def aggregate_detail(request, uuid):
    detail = provider_pages.aggregate_detail(uuid=uuid, page_number=page_number(request))
    if detail is None:
        raise Http404("No such aggregate.")
    names = _aggregate_names(request, [detail.aggregate.uuid])
    return render_page(
        request,
        "aggregate_detail.html",
        "aggregates",
        {"detail": detail, "named": names.get(str(detail.aggregate.uuid))},
    )
