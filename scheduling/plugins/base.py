"""What a filter or weigher sees, and the classes plugins derive from.

A plugin implements one extension point (kube-scheduler's shape): a filter says why a host is
refused (or None), a weigher gives a raw score; scores are normalised over the hosts of the
request before the configured multiplier applies, so multipliers compare like with like.
"""

from dataclasses import dataclass, field


@dataclass
class HostState:
    """One host (a root provider) as the scheduler sees it for one request.

    ``aggregates`` are the aggregate uuids of the root; ``aggregate_metadata`` the
    :class:`~scheduling.models.AggregateMetadata` of those aggregates as dicts (``name``,
    ``availability_zone``, ``metadata``). ``enabled``, ``disabled_reason`` and ``stale`` come from
    the host's compute report (providers made through the Placement API alone have none and count as
    enabled hosts).

    The rest is read from ``tree`` (what one scheduling pass knows of all its hosts' trees),
    each part for every host of the pass at once, the first time any host is asked for it:
    ``inventories`` maps each provider of the tree to ``{class: {"capacity", "used"}}``
    (capacity after reserved and allocation ratio), ``traits`` each provider to its trait
    names, ``providers`` lists ``(uuid, parent uuid)`` in id order, ``report`` is the host's
    latest compute report or None, and ``candidates`` are the engine's allocation requests
    that land on this host (``({provider uuid: {class: amount}}, {suffix: [uuids]})``).
    """

    uuid: str
    name: str
    id: int
    aggregates: frozenset = frozenset()
    aggregate_metadata: list = field(default_factory=list)
    enabled: bool = True
    disabled_reason: str = ""
    forced_down: bool = False
    stale: bool = False
    tree: object = field(default=None, repr=False)

    @property
    def availability_zone(self):
        """The zone of the first of the host's aggregates (by id) that names one, or ""."""
        for meta in self.aggregate_metadata:
            if meta["availability_zone"]:
                return meta["availability_zone"]
        return ""

    @property
    def report(self):
        """The host's compute report (``providers.models.ComputeNode``), or None."""
        return self.tree.report(self.id)

    @property
    def candidates(self):
        return self.tree.candidates(self.id)

    @property
    def providers(self):
        return self.tree.providers(self.id)

    @property
    def inventories(self):
        return self.tree.inventories(self.id)

    @property
    def traits(self):
        return self.tree.traits(self.id)

    def _totals(self):
        # {class: [capacity, used]} over the tree; weighers ask for it thousands of times.
        found = self.__dict__.get("_class_totals")
        if found is None:
            found = self.__dict__["_class_totals"] = self.tree.totals(self.id)
        return found

    def capacity(self, resource_class):
        """Usable units of a class over the whole tree."""
        return self._totals().get(resource_class, (0, 0))[0]

    def used(self, resource_class):
        return self._totals().get(resource_class, (0, 0))[1]

    def free(self, resource_class):
        """Free units of a class over the whole tree (0 when the host has none)."""
        capacity, used = self._totals().get(resource_class, (0, 0))
        return capacity - used

    @property
    def resource_classes(self):
        return sorted(self._totals())

    @property
    def extended_resources(self):
        """Free units of every custom class (compute units and the like)."""
        return {
            name: self.free(name) for name in self.resource_classes if name.startswith("CUSTOM_")
        }

    @property
    def all_traits(self):
        return frozenset(name for names in self.traits.values() for name in names)


class BaseFilter:
    """Refuses hosts. ``args`` are the ``:``-separated words after the name in
    PLACEMENT_SCHEDULER_FILTERS (``extended_resource:CUSTOM_CU:100``)."""

    name = ""  # the name it was configured by, set by the loader

    def __init__(self, *args):
        if args:
            raise ValueError(f"takes no arguments, got {':'.join(args)}")

    def applies(self, spec):
        """Whether this request gives the filter anything to check (a hint filter without its
        hint does not): a filter that does not apply keeps every host without being asked
        about each one. Most filters always apply."""
        return True

    def check(self, host, spec):
        """``None`` when ``host`` may take the instance ``spec`` describes, else why not."""
        raise NotImplementedError


class BaseWeigher:
    """Scores hosts: higher is preferred once multiplied (a negative multiplier inverts it)."""

    name = ""
    multiplier = 1.0

    def __init__(self, *args):
        if args:
            raise ValueError(f"takes no arguments, got {':'.join(args)}")

    def weigh(self, host, spec):
        """A raw score; normalised to 0..1 over the request's hosts before the multiplier."""
        raise NotImplementedError


def normalise(values):
    """Min-max normalisation to 0..1 (all equal: all 0), as Nova's weighers do."""
    if not values:
        return []
    low, high = min(values), max(values)
    if high == low:
        return [0.0 for _ in values]
    return [(v - low) / (high - low) for v in values]
