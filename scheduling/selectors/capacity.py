"""What-if capacity: how many more instances of a flavor fit, per host and in total.

Claims nothing and builds no combinations: a fixed number of set-based queries read the
inventory rows that can take one instance's amount (the engine's own selection, so allocation
ratios, reserved, min/max unit and step size are the capacity model's), then a pass in Python
counts instances per host:

* the unsuffixed group: each class may come from any provider of the tree or a sharing
  provider anchored to it, so per class the host can take ``sum(free // amount)`` and the host
  the least of its classes;
* a granular group lands on one provider: ``sum over providers of min(free // amount)``;
* per host the least over groups, and never more than each class's free units over the tree
  divided by what one instance asks of it in all groups;
* the total is the sum over hosts, bounded per class by the free units of every provider
  counted (a sharing provider serves several hosts but its units only once: a resource
  pool's units are counted once, and a stale or disabled pool's not at all).

With one group (a flavor without granular extra specs) the count is exact; with several groups
asking the same class it is an upper bound (``group_policy=isolate`` is not modelled).
"""

from collections import defaultdict
from dataclasses import dataclass

from placementsite.core.exceptions import InvalidRequest
from providers.capacity import usable_units
from providers.request_groups import UnknownResourceClass, UnknownTrait, resolve_groups
from providers.selectors import compute_nodes
from providers.selectors import resource_providers as rp_selectors
from providers.selectors.resource_pools import unavailable_pool_provider_ids

from .. import queries
from ..extra_specs import translate_flavor

_COLUMNS = (
    "resource_provider_id",
    "root_id",
    "resource_class_id",
    "total",
    "reserved",
    "allocation_ratio",
    "used",
)


@dataclass(frozen=True)
class HostCapacity:
    uuid: str
    name: str
    fits: int


@dataclass(frozen=True)
class FlavorCapacity:
    flavor: str
    total: int
    hosts: list  # [HostCapacity], most room first


def _rows(resolved, unsuffixed):
    providers = rp_selectors.providers_meeting(
        resolved, aggregates_via_root=unsuffixed, traits_on_provider=not unsuffixed
    )
    queryset = rp_selectors.fitting_inventories(resolved, providers).values_list(*_COLUMNS)
    return queries.fetch(*queryset.query.sql_with_params())


def _roots_with_traits(required, provider_ids, root_of):
    """Roots where the unsuffixed group's required traits are met by some provider used."""
    if not required:
        return None
    have = defaultdict(set)
    wanted = set().union(*required)
    for provider_id, trait_id in queries.provider_traits(provider_ids, wanted):
        have[root_of[provider_id]].add(trait_id)
    return {root for root, traits in have.items() if all(any_of & traits for any_of in required)}


def flavor_capacity(*, flavor, aggregate=None):
    """:class:`FlavorCapacity` of ``flavor``, optionally only on hosts in ``aggregate``."""
    request = translate_flavor(
        flavor, aggregates=[aggregate] if aggregate else ()
    ).candidate_request
    try:
        resolved = resolve_groups(request.groups)
    except (UnknownResourceClass, UnknownTrait) as exc:
        # A class or trait deleted since the flavor was written.
        raise InvalidRequest(
            f"Flavor {flavor.name} asks for {exc}", code="scheduler.invalid_flavor"
        ) from None
    no_pools = unavailable_pool_provider_ids()
    anchors = defaultdict(set)
    for sharing_id, root_id in queries.sharing_anchors():
        anchors[sharing_id].add(root_id)

    per_instance = defaultdict(int)  # class id -> units one instance asks in all groups
    for rg in resolved.values():
        for class_id, amount in rg.resources.items():
            per_instance[class_id] += amount
    shared_class = len(per_instance) < sum(len(rg.resources) for rg in resolved.values())
    # (provider id, class id) -> free units of every inventory counted (once, whichever
    # groups read it)
    free = {}
    provider_roots = {}
    group_counts = []  # per group: {root id: instances}
    allowed = None  # roots meeting the unsuffixed group's required traits (None: any)
    for suffix, rg in resolved.items():
        # (provider id, class id) -> instances that inventory can take, and the providers' roots
        takes = {}
        root_of = {}
        amounts = rg.resources
        for provider_id, root_id, class_id, total, reserved, ratio, used in _rows(rg, not suffix):
            if provider_id in no_pools:  # a stale or disabled pool gives nothing
                continue
            root_of[provider_id] = root_id
            units = usable_units(total, reserved, ratio) - used
            takes[(provider_id, class_id)] = units // amounts[class_id]
            free[(provider_id, class_id)] = units
        provider_roots.update(root_of)
        group_counts.append(_group_counts(takes, rg, not suffix, anchors, root_of))
        if not suffix:
            allowed = _roots_with_traits(rg.required_traits, list(root_of), root_of)
    fits = _per_host(group_counts, allowed)
    # Disabled and stale hosts take nothing (hosts without a report count as enabled).
    for root_id in set(compute_nodes.unavailable_root_ids()) & set(fits):
        del fits[root_id]
    if shared_class:
        _cap_by_host_units(fits, free, anchors, provider_roots, per_instance)
    total = sum(fits.values())
    if anchors:
        total = _cap_by_class_units(total, free, per_instance)
    return FlavorCapacity(flavor=flavor.name, total=total, hosts=_hosts(fits))


def _cap_by_host_units(fits, free, anchors, provider_roots, per_instance):
    """Two groups asking one class share its units: no host takes more than they allow."""
    root_units = defaultdict(int)
    for (provider_id, class_id), units in free.items():
        for root_id in anchors.get(provider_id) or (provider_roots[provider_id],):
            root_units[(root_id, class_id)] += max(units, 0)
    for root_id in fits:
        for class_id, amount in per_instance.items():
            fits[root_id] = min(fits[root_id], root_units[(root_id, class_id)] // amount)


def _cap_by_class_units(total, free, per_instance):
    """A sharing provider was counted for every host it serves: its units count once."""
    class_units = defaultdict(int)
    for (_provider_id, class_id), units in free.items():
        class_units[class_id] += max(units, 0)
    for class_id, amount in per_instance.items():
        total = min(total, class_units[class_id] // amount)
    return total


def _group_counts(takes, rg, unsuffixed, anchors, root_of):
    """``{root id: instances}`` for one group from what each inventory can take."""
    wanted = len(rg.resources)
    if unsuffixed:
        # Each class may come from any provider of the tree: sum per class, least class wins.
        per_class = defaultdict(int)
        for (provider_id, class_id), n in takes.items():
            for root_id in anchors.get(provider_id) or (root_of[provider_id],):
                per_class[(root_id, class_id)] += n
        least, classes = {}, defaultdict(int)
        for (root_id, _class_id), n in per_class.items():
            classes[root_id] += 1
            if root_id not in least or n < least[root_id]:
                least[root_id] = n
        return {root_id: n for root_id, n in least.items() if classes[root_id] == wanted}
    # A granular group lands on one provider having every class of the group.
    per_provider = defaultdict(list)
    for (provider_id, _class_id), n in takes.items():
        per_provider[provider_id].append(n)
    counts = defaultdict(int)
    for provider_id, ns in per_provider.items():
        if len(ns) == wanted:
            for root_id in anchors.get(provider_id) or (root_of[provider_id],):
                counts[root_id] += min(ns)
    return counts


def _per_host(group_counts, allowed):
    if not group_counts:
        return {}
    if len(group_counts) == 1:
        (counts,) = group_counts
        if allowed is None:
            return dict(counts)
        return {root: n for root, n in counts.items() if root in allowed}
    roots = set(group_counts[0])
    for counts in group_counts[1:]:
        roots &= set(counts)
    if allowed is not None:
        roots &= allowed
    return {root: min(counts[root] for counts in group_counts) for root in roots}


def _hosts(fits):
    wanted = [root for root, n in fits.items() if n > 0]
    rows = sorted(
        (-fits[pk], name, uuid)
        for pk, uuid, name in (queries.provider_names(wanted) if wanted else [])
    )
    return [HostCapacity(uuid, name, -negative) for negative, name, uuid in rows]
