"""Dashboard: the Hosts page (reports, sync state, stale and disabled hosts, plugin errors).

Kept apart from views.py. Over-capacity is composed here: the providers
selector gives each tree's usable capacity, the allocations selector the usage.
"""

from django.core.paginator import Paginator
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone

from allocations.selectors.usage import usage_grouped
from providers.selectors.compute_nodes import host_rows, stale_after, tree_capacities

from .views import PROVIDERS, staff_required

HOSTS_PER_PAGE = 50
STATES = [
    ("", "all"),
    ("stale", "stale"),
    ("disabled", "disabled"),
    ("errors", "sync errors"),
    ("pending", "waiting for sync"),
]


def over_capacity(root_ids):
    """``{root_id: ["VCPU on host_NUMA0: 40 used of 32", ...]}`` where usage exceeds capacity
    (an inventory lowered below its usage, as Placement allows)."""
    capacities = tree_capacities(root_ids=root_ids)
    provider_ids = sorted({provider_id for _, provider_id, _, _ in capacities})
    usage = {
        (provider_id, name): used
        for provider_id, name, used in usage_grouped(
            "resource_provider_id", "resource_class__name", resource_provider_id__in=provider_ids
        )
    }
    found = {}
    for root_id, provider_id, name, usable in capacities:
        used = usage.get((provider_id, name), 0)
        if used > usable:
            found.setdefault(root_id, []).append(f"{name}: {used} used of {usable}")
    return found


@staff_required("providers.view_computenode", *PROVIDERS, "allocations.view_allocation")
def host_list(request):
    q = request.GET.get("q", "")[:200]
    state = request.GET.get("state", "")
    state = state if state in dict(STATES) else ""
    page = Paginator(host_rows(q=q, state=state), HOSTS_PER_PAGE).get_page(request.GET.get("page"))
    cutoff = timezone.now() - stale_after()
    hosts = list(page.object_list)
    flagged = over_capacity([h.provider.root_id for h in hosts if h.provider_id])
    rows = [
        {
            "node": host,
            "stale": host.reported_at is None or host.reported_at < cutoff,
            "in_sync": host.provider_id is not None and host.synced_hash == host.report_hash,
            "over": flagged.get(host.provider.root_id, []) if host.provider_id else [],
        }
        for host in hosts
    ]
    context = {
        "section": "hosts",
        "admin": reverse("admin:index"),
        "page": page,
        "rows": rows,
        "q": q,
        "state": state,
        "states": STATES,
        "stale_minutes": int(stale_after().total_seconds() // 60),
    }
    return render(request, "dashboard/host_list.html", context)
