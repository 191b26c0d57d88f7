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
  counted (a sharing provider serves several hosts but its units only once).

With one group (a flavor without granular extra specs) the count is exact; with several groups
asking the same class it is an upper bound (``group_policy=isolate`` is not modelled).
"""

from collections import defaultdict
from dataclasses import dataclass

from providers.capacity import usable_units
from providers.models import ResourceProvider
from providers.request_groups import resolve_groups
from providers.selectors import compute_nodes
from providers.selectors import resource_providers as rp_selectors

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
    resolved = resolve_groups(request.groups)
    anchors = defaultdict(set)
    for sharing_id, root_id in queries.sharing_anchors():
        anchors[sharing_id].add(root_id)

    per_instance = defaultdict(int)  # class id -> units one instance asks in all groups
    free = {}  # (provider id, class id) -> free units
    root_of = {}
    group_counts = []  # per group: {root id: instances}
    allowed = None  # roots meeting the unsuffixed group's required traits (None: any)
    for suffix, rg in resolved.items():
        per_provider = defaultdict(dict)  # provider id -> class id -> instances it can take
        for provider_id, root_id, class_id, total, reserved, ratio, used in _rows(rg, not suffix):
            root_of[provider_id] = root_id
            units = usable_units(total, reserved, ratio) - used
            free[(provider_id, class_id)] = units
            per_provider[provider_id][class_id] = units // rg.resources[class_id]
        for class_id, amount in rg.resources.items():
            per_instance[class_id] += amount
        group_counts.append(_group_counts(per_provider, rg, not suffix, anchors, root_of))
        if not suffix:
            met = _roots_with_traits(rg.required_traits, list(per_provider), root_of)
            if met is not None:
                allowed = met
    fits = _per_host(group_counts, allowed)
    # Disabled and stale hosts take nothing (hosts without a report count as enabled).
    for root_id in set(compute_nodes.unavailable_root_ids()) & set(fits):
        del fits[root_id]
    _bound_by_class(fits, free, per_instance, anchors, root_of)
    total = sum(fits.values())
    if any(provider_id in anchors for provider_id, _c in free):
        # A sharing provider was counted for every host it serves: its units count once.
        for class_id, amount in per_instance.items():
            units = sum(u for (p, c), u in free.items() if c == class_id and u > 0)
            total = min(total, units // amount)
    return FlavorCapacity(flavor=flavor.name, total=total, hosts=_hosts(fits))


def _group_counts(per_provider, rg, unsuffixed, anchors, root_of):
    counts = defaultdict(int)
    if unsuffixed:
        by_root = defaultdict(lambda: defaultdict(int))
        for provider_id, classes in per_provider.items():
            for root_id in anchors.get(provider_id) or {root_of[provider_id]}:
                for class_id, n in classes.items():
                    by_root[root_id][class_id] += n
        for root_id, classes in by_root.items():
            if len(classes) == len(rg.resources):
                counts[root_id] = min(classes.values())
    else:
        for provider_id, classes in per_provider.items():
            if len(classes) == len(rg.resources):
                for root_id in anchors.get(provider_id) or {root_of[provider_id]}:
                    counts[root_id] += min(classes.values())
    return counts


def _per_host(group_counts, allowed):
    roots = set(group_counts[0]) if group_counts else set()
    for counts in group_counts[1:]:
        roots &= set(counts)
    if allowed is not None:
        roots &= allowed
    return {root: min(counts[root] for counts in group_counts) for root in roots}


def _bound_by_class(fits, free, per_instance, anchors, root_of):
    """No host takes more than its free units of a class over what one instance asks in all."""
    units = defaultdict(int)  # (root id, class id) -> free units
    for (provider_id, class_id), n in free.items():
        for root_id in anchors.get(provider_id) or {root_of[provider_id]}:
            units[(root_id, class_id)] += max(n, 0)
    for root_id in fits:
        for class_id, amount in per_instance.items():
            fits[root_id] = min(fits[root_id], units[(root_id, class_id)] // amount)


def _hosts(fits):
    wanted = [root for root, n in fits.items() if n > 0]
    names = {
        row[0]: row[1:]
        for row in ResourceProvider.objects.filter(id__in=wanted).values_list("id", "uuid", "name")
    }
    return sorted(
        (HostCapacity(str(names[r][0]), names[r][1], fits[r]) for r in wanted if r in names),
        key=lambda h: (-h.fits, h.name),
    )
