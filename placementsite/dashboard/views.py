"""Dashboard pages: each parses its query string, calls selectors and renders a template.

Every page needs a logged-in staff user holding the view permissions of what
the page shows (as the admin would ask): anonymous visitors are sent to the
Django admin login, other users get a 403.
"""

from urllib.parse import urlencode

from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_safe

from allocations.selectors import consumer_pages, project_pages, provider_pages
from allocations.selectors import overview as overview_reads
from allocations.selectors.usage import class_usage_summary
from placementsite import selectors as service_health
from placementsite.core.gc_pause import cyclic_gc_paused
from providers import capacity
from providers.selectors import dashboard as provider_reads
from providers.selectors import fit
from providers.selectors.resource_pools import pool_members_by_host
from scheduling.selectors import candidates_preview
from scheduling.selectors import dashboard as flavor_reads

from . import exports
from .actions import host_context
from .forms import (
    CandidateOptionsForm,
    ConsumerFilterForm,
    ProviderFilterForm,
    request_forms,
    request_groups_of,
    request_query,
)
from .rendering import render_page, staff_required

# How many providers the "try a request" page lists per group in each table.
FIT_ROWS_SHOWN = 100
# How many allocation candidates the page shows (the engine stops there).
CANDIDATES_SHOWN = 20

REASON_LABELS = {
    capacity.EXCEEDS_CAPACITY: "not enough free capacity",
    capacity.ABOVE_MAX_UNIT: "request exceeds max_unit",
    capacity.BELOW_MIN_UNIT: "request below min_unit",
    capacity.NOT_A_STEP: "not a multiple of step_size",
    fit.NO_INVENTORY: "no inventory of a requested class",
    fit.MISSING_TRAIT: "missing a required trait",
    fit.FORBIDDEN_TRAIT: "has a forbidden trait",
    fit.NOT_A_MEMBER: "not in a required aggregate",
    fit.FORBIDDEN_AGGREGATE: "in a forbidden aggregate",
}


# The view permissions of what each kind of page shows.
PROVIDERS = ("providers.view_resourceprovider", "providers.view_inventory")
USAGE = (*PROVIDERS, "allocations.view_allocation")
CONSUMERS = ("allocations.view_consumer", "allocations.view_allocation")
# Usage by project names the projects.
PROJECT_SHARES = (*USAGE, "allocations.view_project")


# The rendering path every page shares (kept here under the names the page modules import).
_render = render_page


def _aggregate_names(request, uuids):
    """Names, zones and metadata of aggregates, for those who may see them."""
    if not request.user.has_perm("scheduling.view_aggregatemetadata"):
        return {}
    return flavor_reads.aggregate_names(uuids)


def _consumer_names(request, uuids):
    """The servers (name, flavor, project) behind consumers, for those who may see them."""
    if not request.user.has_perm("scheduling.view_server"):
        return {}
    return flavor_reads.consumer_names(uuids)


def _page_number(request):
    return request.GET.get("page") or 1


# --- overview -------------------------------------------------------------------------------

# Colours of the projects in the usage-share bars (the rest is grey), by rank.
SHARE_COLOURS = 5


@staff_required(*USAGE)
def overview(request):
    now = timezone.now()
    beat_started = service_health.beat_started_at()
    tasks = [(task, task.state(now, beat_started)) for task in service_health.task_health()]
    return _render(
        request,
        "overview.html",
        "overview",
        {
            "class_usages": class_usage_summary(),
            # Shares by project, for those who may see projects.
            "project_shares": (
                overview_reads.usage_share_by_project(top=SHARE_COLOURS)
                if request.user.has_perms(PROJECT_SHARES)
                else None
            ),
            "tasks": tasks,
            "beat_started": beat_started,
            "provider_counts": provider_reads.provider_counts(),
            "allocation_counts": overview_reads.allocation_counts(),
            "fullest": overview_reads.fullest_providers(limit=10),
            # "Fits N more" per flavor, for those who may see flavors: counted after the
            # page by fits.js, as on the Flavors page.
            "flavor_fits": (
                [(flavor, None) for flavor in flavor_reads.flavors_to_count()]
                if request.user.has_perm("scheduling.view_flavor")
                else None
            ),
        },
    )


# --- providers ------------------------------------------------------------------------------


@staff_required(*USAGE)
def provider_list(request):
    form = ProviderFilterForm(request.GET)
    sort = request.GET.get("sort", "")[:300]
    if provider_pages.parse_provider_sort(sort) is None:
        sort = ""
    fmt = exports.requested(request)
    if fmt:
        filters = form.filters()
        rows = exports.every_row(
            lambda n, size: provider_pages.provider_list_page(filters, n, size, sort=sort)
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
    page = provider_pages.provider_list_page(form.filters(), _page_number(request), sort=sort)
    choices = provider_reads.provider_filter_choices()
    return _render(
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
    detail = provider_pages.provider_detail(uuid)
    if detail is None:
        raise Http404("No such resource provider.")
    provider = detail.provider
    pools = (
        pool_members_by_host(root_ids=[provider.id]).get(provider.id, [])
        if provider.parent_id is None and request.user.has_perm("providers.view_resourcepool")
        else []
    )
    return _render(
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


# --- consumers and projects -----------------------------------------------------------------


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
            lambda n, size: consumer_pages.consumer_list_page(filters, n, per_page=size)
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
    page = consumer_pages.consumer_list_page(filters, _page_number(request))
    return _render(
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
    detail = consumer_pages.consumer_detail(uuid)
    if detail is None:
        raise Http404("No such consumer.")
    names = _consumer_names(request, [detail.consumer.uuid])
    return _render(
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
    usage = project_pages.project_usage_page(q=q, page_number=_page_number(request))
    return _render(request, "project_list.html", "projects", {"usage": usage, "q": q})


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
        in_use_only=not show_all, q=q, page_number=_page_number(request)
    )
    return _render(
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
    return _render(
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
    page = provider_reads.aggregates_with_counts(page_number=_page_number(request))
    return _render(
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
    detail = provider_pages.aggregate_detail(uuid, _page_number(request))
    if detail is None:
        raise Http404("No such aggregate.")
    names = _aggregate_names(request, [detail.aggregate.uuid])
    return _render(
        request,
        "aggregate_detail.html",
        "aggregates",
        {"detail": detail, "named": names.get(str(detail.aggregate.uuid))},
    )


# --- search ---------------------------------------------------------------------------------

SEARCH_ROWS = 20


@staff_required(*PROVIDERS, *CONSUMERS, "allocations.view_project")
def search(request):
    """One box across providers (name or uuid), consumers (uuid) and projects (id)."""
    q = request.GET.get("q", "").strip()[:255]
    providers = provider_reads.providers_matching(q, limit=SEARCH_ROWS)
    consumers = consumer_pages.consumers_matching(q, limit=SEARCH_ROWS)
    projects = project_pages.projects_matching(q, limit=SEARCH_ROWS)
    found = len(providers) + len(consumers) + len(projects)
    if found == 1:  # one answer: go straight to it
        if providers:
            return redirect("dashboard:provider", providers[0][0])
        if consumers:
            return redirect("dashboard:consumer", consumers[0][0])
        return redirect(
            f"{reverse('dashboard:consumers')}?{urlencode({'project': projects[0][0]})}"
        )
    return _render(
        request,
        "search.html",
        "search",
        {
            "search_q": q,
            "providers": providers,
            "consumers": consumers,
            "projects": projects,
            "found": found,
            "rows_shown": SEARCH_ROWS,
        },
    )


# --- try a request --------------------------------------------------------------------------


TRY = (*PROVIDERS, "providers.view_trait", "providers.view_aggregate")


@staff_required(*TRY)
def try_request(request):
    """The why-not report of the request the query string names; its allocation candidates
    come after the page (:func:`try_candidates`, fetched by try.js): each is a full read of
    the providers, and the two together were over the page's budget at 10,000 providers."""
    submitted = "submit" in request.GET
    unnumbered, numbered = request_forms(request.GET if submitted else None)
    options = CandidateOptionsForm(request.GET if submitted else None)
    error = None
    results = None
    candidates_url = None
    forms_valid = unnumbered.is_valid() and all(form.is_valid() for form in numbered)
    if submitted and forms_valid and options.is_valid():
        groups = request_groups_of(request_query(unnumbered, numbered))
        if not any(group.asks_something() for group in groups.values()):
            error = "Ask for something: resources, traits or aggregates in at least one group."
        else:
            try:
                # It reads every provider into many small objects: the cyclic collector
                # would walk the whole process several times meanwhile.
                with cyclic_gc_paused():
                    results = fit.fit_report(groups, shown=FIT_ROWS_SHOWN)
                for report in results:
                    report.reason_counts = [
                        (REASON_LABELS.get(kind, kind), count)
                        for kind, count in report.reason_counts
                    ]
                    report.host_reason_counts = [
                        (REASON_LABELS.get(kind, kind), count)
                        for kind, count in report.host_reason_counts
                    ]
                    report.left_out = _children_under_hosts(report.left_out)
                candidates_url = f"{reverse('dashboard:try_candidates')}?{request.GET.urlencode()}"
            except fit.FitRequestError as exc:
                error = str(exc)
    elif submitted:
        error = "Some fields are not valid: see the messages under them in the form above."
    return _render(
        request,
        "try_request.html",
        "try",
        {
            "unnumbered": unnumbered,
            "numbered": list(enumerate(numbered, start=1)),
            "options": options,
            "submitted": submitted,
            "error": error,
            "results": results,
            "rows_shown": FIT_ROWS_SHOWN,
            "candidates_url": candidates_url,
        },
    )


@require_safe
@staff_required(*TRY)
def try_candidates(request):
    """The *Try a request* page's allocation candidates for the request its query string
    names (an HTML fragment the page's try.js puts in place; a 400 with the reason for a
    request the page would refuse)."""
    unnumbered, numbered = request_forms(request.GET)
    options = CandidateOptionsForm(request.GET)
    candidates = candidates_note = error = None
    forms_valid = unnumbered.is_valid() and all(form.is_valid() for form in numbered)
    if not (forms_valid and options.is_valid()):
        error = "Some fields are not valid: see the messages under them in the form."
    else:
        groups = request_groups_of(request_query(unnumbered, numbered))
        asked = {suffix: group for suffix, group in groups.items() if group.asks_something()}
        if not asked:
            error = "Ask for something: resources, traits or aggregates in at least one group."
        else:
            try:
                fit.resolve_request(asked)  # an unknown name is a message, as on the page
                with cyclic_gc_paused():
                    candidates, candidates_note = _candidates(groups, options)
            except fit.FitRequestError as exc:
                error = str(exc)
    return render(
        request,
        "dashboard/_try_candidates.html",
        {
            "error": error,
            "candidates": candidates,
            "candidates_note": candidates_note,
            "candidates_shown": CANDIDATES_SHOWN,
            "units": provider_reads.class_units() if candidates else {},
        },
        status=400 if error else 200,
    )


def _children_under_hosts(left_out):
    """``left_out`` ((ProviderRef, reasons), by name) with each tree's providers together,
    the host first, trees in the order their first provider came."""
    first_seen = {}
    for ref, _reasons in left_out:
        first_seen.setdefault(ref.root_id or ref.id, len(first_seen))
    return sorted(
        left_out,
        key=lambda item: (first_seen[item[0].root_id or item[0].id], not item[0].is_root),
    )


def _candidates(groups, options):
    """The allocation candidates engine's answer, as GET /allocation_candidates gives it."""
    asked = {suffix: group for suffix, group in groups.items() if group.asks_something()}
    if not all(group.resources for group in asked.values()):
        # Placement refuses such a request ("All request groups must specify resources").
        return None, "Allocation candidates need resources in every group that asks something."
    numbered = [suffix for suffix in asked if suffix]
    policy = options.cleaned_data["group_policy"] if len(numbered) > 1 else None
    found = candidates_preview(groups=asked, group_policy=policy, limit=CANDIDATES_SHOWN)
    return _by_host(found), None


def _by_host(candidates):
    """Candidates grouped by the host they land on: ``[(host uuid, host name, [candidate])]``
    where each candidate is ``[(uuid, name, resources, is_sharing)]``, the host's own tree
    first and sharing providers after (one query for the hosts of the providers shown)."""
    hosts = provider_reads.hosts_of({uuid for c in candidates for uuid, _n, _r in c})
    grouped = {}
    for candidate in candidates:
        parts = [
            (uuid, name, res, hosts.get(uuid, (None, name, False))) for uuid, name, res in candidate
        ]
        own = [p for p in parts if not p[3][2]] or parts
        host_uuid, host_name, _sharing = own[0][3]
        ordered = sorted(parts, key=lambda p: (p[3][2], p[1]))
        entry = grouped.setdefault(host_uuid or own[0][0], [host_uuid or own[0][0], host_name, []])
        entry[2].append([(uuid, name, res, info[2]) for uuid, name, res, info in ordered])
    return [tuple(entry) for entry in grouped.values()]
