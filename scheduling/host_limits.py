"""The host's reservation, held for the host as a whole.

A host whose memory (or CPUs) sits on its NUMA cells' providers gives each cell its full
amount: the host's reservation (``PLACEMENT_RESERVED``, e.g. 512 MB of ``MEMORY_MB``) is not
carved out of one cell, as Nova's per-cell fit never subtracts it. Instead the host keeps it
as Nova's whole-host Placement query does: the cells' usage of the class, added up, stays
within the cells' total minus the host's reservation (times the cells' allocation ratio).

The rule has one home, :func:`limits_of`, and two readers: the scheduling pass (boots,
explain and capacity alike: :class:`scheduling.selectors.pass_hosts.PassTreeFacts`) and the
claim (:func:`claim_checked`, under the host root's row lock, so that concurrent boots on two
cells of one host cannot both take the host's last units).
"""

import re
from collections import defaultdict

from django.conf import settings

from placementsite.core.exceptions import Conflict
from providers.capacity import usable_units

HOST_LIMIT_EXCEEDED = "scheduler.host_limit_exceeded"


class HostLimitExceeded(Conflict):
    """A claim would take the host past its host-level limit."""

    code = HOST_LIMIT_EXCEEDED


MEMPAGE = re.compile(r"^CUSTOM_MEMPAGE_(\d+)KB$")


def as_memory(name, amount):
    """``(class, amount)`` as the host-wide rule counts it: a cell's huge pages are memory too
    (Nova's whole-host MEMORY_MB holds page-size instances alike), in MB."""
    match = MEMPAGE.match(name)
    if match:
        return "MEMORY_MB", amount * int(match.group(1)) // 1024
    return name, amount


def limits_of(rows, has_cells):
    """``{class: limit}`` of one host from its inventory ``rows`` (``(provider is the root,
    class, total, reserved, ratio)``): only classes held by the NUMA cells alone (none on the
    root) of a host that reports cells, and only where the host's reservation is more than
    what the cells reserve themselves (an operator's per-cell reserved counts toward it)."""
    if not has_cells:
        return {}
    held = defaultdict(lambda: [0, 0, None, False])  # total, reserved, ratio, on root
    for on_root, name, total, reserved, ratio in rows:
        if MEMPAGE.match(name):  # pages widen the memory total, never set its ratio
            name, total = as_memory(name, total)
            held[name][0] += total
            continue
        entry = held[name]
        entry[0] += total
        entry[1] += reserved
        entry[2] = ratio if entry[2] is None else min(entry[2], ratio)
        entry[3] = entry[3] or on_root
    reservation = settings.PLACEMENT_RESERVED
    limits = {}
    for name, (total, reserved, ratio, on_root) in held.items():
        wanted = int(reservation.get(name, 0))
        if on_root or ratio is None or wanted <= reserved:
            continue
        limits[name] = max(0, usable_units(total, wanted, ratio))
    return limits


def refusal(limits, used, asked):
    """Why taking ``asked`` (``{class: amount}``) on a host using ``used`` would pass its
    limits, or None."""
    for name, limit in sorted(limits.items()):
        amount = asked.get(name, 0)
        if amount and used.get(name, 0) + amount > limit:
            return (
                f"{name}: the host's NUMA cells would use {used.get(name, 0) + amount} of the "
                f"{limit} the host allows (its total minus the host's reservation)"
            )
    return None


def _host_facts(root_id):
    """``(limits, used)`` of the host ``root_id`` as the database holds them now."""
    from . import queries

    rows = queries.tree_inventories_with_usage([root_id])
    limits = limits_of(
        [
            (pid == root_id, name, total, res, ratio)
            for _r, pid, name, total, res, ratio, _u in rows
        ],
        True,
    )
    used = defaultdict(int)
    for _root, _provider, name, _total, _reserved, _ratio, amount in rows:
        name, amount = as_memory(name, int(amount))
        used[name] += amount
    return limits, used


def claim_checked(allocations_by_consumer):
    """In the claim's transaction, after its allocations are written: lock each host root
    with NUMA cells the claim takes from (in id order) and refuse (HostLimitExceeded) when
    the host's usage, the claim's included, passes its limit. Committed claims of other
    transactions are seen once the root's lock is ours (each statement reads what was
    committed before it began). A claim on roots alone costs one statement."""
    from django.db.models import F

    from providers.models import ComputeNode, ResourceProvider

    provider_uuids = {p for allocations in allocations_by_consumer for p in allocations}
    if not provider_uuids:
        return
    below_roots = set(
        ResourceProvider.objects.filter(uuid__in=provider_uuids)
        .exclude(id=F("root_id"))
        .values_list("root_id", flat=True)
    )
    if not below_roots:
        return
    root_ids = sorted(
        root_id
        for root_id, topology in ComputeNode.objects.filter(
            provider_id__in=below_roots
        ).values_list("provider_id", "numa_topology")
        if (topology or {}).get("cells")
    )
    if not root_ids:
        return
    list(
        ResourceProvider.objects.select_for_update()
        .filter(id__in=root_ids)
        .order_by("id")
        .values_list("id", flat=True)
    )
    for root_id in root_ids:
        limits, used = _host_facts(root_id)
        for name, limit in sorted(limits.items()):
            if used.get(name, 0) > limit:
                raise HostLimitExceeded(
                    f"{name}: the host's NUMA cells would use {used[name]} of the {limit} "
                    "the host allows (its total minus the host's reservation)"
                )
