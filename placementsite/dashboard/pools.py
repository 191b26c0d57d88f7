"""Dashboard: the Pools page (resource pools: capacity, usage, members, staleness, sync state
and the history of their inventory changes) and its actions: disable a pool with a reason,
enable it, delete an unused one.

The providers selector gives the pools with their members and changes, the allocations
selector their capacity and usage; the page puts the two together. Each action needs the
admin's permission for the same change and the policy rule of the API's endpoint
(``PATCH``/``DELETE /api/resource-pools/{name}/``); the rules (a pool in use is not deleted)
are the providers services'.
"""

from typing import NamedTuple

from django.contrib import messages
from django.urls import reverse

from allocations.selectors.usage import inventory_usages_by_provider
from providers import policies as provider_policies
from providers.filtersets import ResourcePoolFilter
from providers.selectors.dashboard import PoolRow, pool_rows
from providers.selectors.resource_pools import pool_stale_after
from providers.services import resource_pools as pool_services

from .actions import REASON_MAX, action, back, policy_allows, policy_required, run_service
from .rendering import PROVIDERS, render_page, searched, staff_required

POOL_CHANGE = ("providers.view_resourcepool", "providers.change_resourcepool")
POOL_DELETE = ("providers.view_resourcepool", "providers.delete_resourcepool")
UPDATE_RULE = f"{provider_policies.RESOURCE_POOLS}:update"
DELETE_RULE = f"{provider_policies.RESOURCE_POOLS}:delete"


class PoolWithUsage(NamedTuple):
    """A row of the Pools page: the pool, the usage of each of its inventories and whether
    nothing is allocated from it (only then may it be deleted)."""

    row: PoolRow
    usages: list  # [InventoryUsage]
    unused: bool


@staff_required("providers.view_resourcepool", *PROVIDERS, "allocations.view_allocation")
def pool_list(request):
    query = searched(request.GET, max_length=200)
    rows = pool_rows(pools=ResourcePoolFilter(query).qs)
    usages = inventory_usages_by_provider(
        provider_ids=[r.pool.provider_id for r in rows if r.pool.provider_id]
    )
    user = request.user
    context = {
        "rows": [
            PoolWithUsage(row, used, unused=not any(u.used for u in used))
            for row in rows
            for used in [usages.get(row.pool.provider_id, [])]
        ],
        "q": query["q"],
        "stale_minutes": int(pool_stale_after().total_seconds() // 60),
        "can_change_pools": user.has_perms(POOL_CHANGE) and policy_allows(user, UPDATE_RULE),
        "can_delete_pools": user.has_perms(POOL_DELETE) and policy_allows(user, DELETE_RULE),
    }
    return render_page(request, "pool_list.html", "pools", context)


def _pools_page():
    return reverse("dashboard:pools")


def _call(request, call, message):
    run_service(request, call, message)
    return back(request, _pools_page())


@action(*POOL_CHANGE, what="change resource pools")
def pool_disable(request, name):
    policy_required(request, UPDATE_RULE, what="change resource pools")
    reason = request.POST.get("reason", "").strip()
    if not reason:
        messages.error(request, f"Say why pool {name} is disabled (the reason is shown to all).")
        return back(request, _pools_page())
    if len(reason) > REASON_MAX:
        messages.error(request, f"The reason is longer than {REASON_MAX} characters.")
        return back(request, _pools_page())
    return _call(
        request,
        lambda: pool_services.resource_pool_set_enabled(name=name, enabled=False, reason=reason),
        f"Pool {name} is disabled: {reason}",
    )


@action(*POOL_CHANGE, what="change resource pools")
def pool_enable(request, name):
    policy_required(request, UPDATE_RULE, what="change resource pools")
    return _call(
        request,
        lambda: pool_services.resource_pool_set_enabled(name=name, enabled=True),
        f"Pool {name} is enabled.",
    )


@action(*POOL_DELETE, what="delete resource pools")
def pool_delete(request, name):
    policy_required(request, DELETE_RULE, what="delete resource pools")
    return _call(
        request,
        lambda: pool_services.resource_pool_delete(name=name),
        f"Pool {name} is deleted, with its provider.",
    )
