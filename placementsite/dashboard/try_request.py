"""Dashboard: the *Try a request* page (the why-not report of a request for resources, traits
and aggregates: which providers and hosts fit, and why the others do not) and its allocation
candidates (an HTML fragment fetched after the page by try.js, grouped by host).
"""

from typing import NamedTuple

from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_safe

from placementsite.core.gc_pause import cyclic_gc_paused
from providers import capacity
from providers.selectors import dashboard as provider_reads
from providers.selectors import fit
from scheduling.selectors import candidates_preview

from .forms import CandidateOptionsForm, request_forms, request_groups_of, request_query
from .rendering import PROVIDERS, render_page, staff_required

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
                    results = fit.fit_report(groups=groups, shown=FIT_ROWS_SHOWN)
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
    return render_page(
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
                fit.resolve_request(groups=asked)  # an unknown name is a message, as on the page
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

    def tree_then_host_first(entry):
        ref, _reasons = entry
        return first_seen[ref.root_id or ref.id], not ref.is_root

    return sorted(left_out, key=tree_then_host_first)


def _candidates(groups, options):
    """The allocation candidates engine's answer, as GET /allocation_candidates gives it."""
    asked = {suffix: group for suffix, group in groups.items() if group.asks_something()}
    if not all(group.resources for group in asked.values()):
        # Placement refuses such a request ("All request groups must specify resources").
        return None, "Allocation candidates need resources in every group that asks something."
    numbered = [suffix for suffix in asked if suffix]
    policy = options.cleaned_data["group_policy"] if len(numbered) > 1 else None
    found = candidates_preview(groups=asked, group_policy=policy, limit=CANDIDATES_SHOWN)
    return _host_candidates(found), None


class CandidatePart(NamedTuple):
    """One provider of a candidate and what it gives."""

    uuid: str
    name: str
    resources: dict  # {class name: amount}
    sharing: bool


class HostCandidates(NamedTuple):
    """The candidates that land on one host (the root of their own providers)."""

    host_uuid: str
    host_name: str
    candidates: list  # [[CandidatePart]]: the host's own tree first, then sharing providers


def _host_candidates(candidates):
    """The candidates grouped by the host they land on, a :class:`HostCandidates` per host
    in the order their first candidate came (one query for the hosts of the providers)."""
    hosts = provider_reads.hosts_of(uuids={uuid for c in candidates for uuid, _n, _r in c})

    def host_of(uuid, name):
        """``(host uuid, host name, is sharing)`` of a provider (unknown: itself, unshared)."""
        return hosts.get(uuid, (None, name, False))

    grouped = {}
    for candidate in candidates:
        parts = []
        for uuid, name, resources in candidate:
            _host_uuid, _host_name, sharing = host_of(uuid, name)
            parts.append(CandidatePart(uuid, name, resources, sharing))
        own = next((part for part in parts if not part.sharing), parts[0])
        host_uuid, host_name, _sharing = host_of(own.uuid, own.name)
        key = host_uuid or own.uuid
        entry = grouped.setdefault(key, HostCandidates(key, host_name, []))
        entry.candidates.append(sorted(parts, key=lambda part: (part.sharing, part.name)))
    return list(grouped.values())
