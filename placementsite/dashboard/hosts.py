"""Dashboard: the Hosts page (reports, sync state, stale and disabled hosts, plugin errors).

The providers selector gives the page of hosts, the allocations
selector the classes over capacity; the page puts the two together.
"""

from dataclasses import replace

from allocations.selectors.provider_pages import over_capacity
from providers.filtersets import ComputeNodeFilter
from providers.selectors.compute_nodes import HOST_STATES, host_rows, stale_after
from providers.selectors.dashboard import host_list_page

from .rendering import PROVIDERS, render_page, searched, staff_required

STATES = [("", "all"), *HOST_STATES]


@staff_required("providers.view_computenode", *PROVIDERS, "allocations.view_allocation")
def host_list(request):
    """The hosts /api/compute-nodes/ would list for the same query (``q``, ``state`` and the
    API's other filters), a page at a time."""
    query = searched(request.GET, max_length=200)
    hosts = ComputeNodeFilter(query, queryset=host_rows())
    state = query.get("state", "")
    state = state if state in dict(STATES) else ""
    page = host_list_page(hosts=hosts.qs, page_number=request.GET.get("page"))
    flagged = over_capacity(
        root_ids=[r.node.provider.root_id for r in page.object_list if r.node.provider_id]
    )
    rows = [
        replace(row, over=flagged.get(row.node.provider.root_id, []))
        if row.node.provider_id
        else row
        for row in page.object_list
    ]
    context = {
        "page": page,
        "rows": rows,
        "q": query["q"],
        "state": state,
        "states": STATES,
        "stale_minutes": int(stale_after().total_seconds() // 60),
    }
    return render_page(request, "host_list.html", "hosts", context)
