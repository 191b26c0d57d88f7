"""Dashboard: the Pools page (resource pools: capacity, usage, members, staleness, sync state
and the history of their inventory changes).

The providers selector gives the pools with their members and changes, the allocations
selector their capacity and usage; the page puts the two together.
"""

from allocations.selectors.usage import inventory_usages_by_provider
from providers.selectors.dashboard import pool_rows
from providers.selectors.resource_pools import pool_stale_after

from .views import PROVIDERS, render_page, staff_required


@staff_required("providers.view_resourcepool", *PROVIDERS, "allocations.view_allocation")
def pool_list(request):
    q = request.GET.get("q", "")[:200]
    rows = pool_rows(q=q)
    usages = inventory_usages_by_provider([r.pool.provider_id for r in rows if r.pool.provider_id])
    context = {
        "rows": [(row, usages.get(row.pool.provider_id, [])) for row in rows],
        "q": q,
        "stale_minutes": int(pool_stale_after().total_seconds() // 60),
    }
    return render_page(request, "pool_list.html", "pools", context)
