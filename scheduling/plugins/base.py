"""What a filter or weigher sees, and the classes plugins derive from.

Filters borrow the shape of the kube-scheduler framework's PreFilter and Filter extension
points: a filter answers a typed :class:`Status` for a host (fits, unschedulable, unresolvable
or error, after the framework's status codes; or, as before, None for "fits" and a string for
"unschedulable, because..."), after an optional ``pre_filter`` that computes what the whole
pass needs once (hint host lists, zone members) into the pass's :class:`CycleState`.

Weighers are Nova's, not the kube-scheduler's scoring: a weigher gives a raw score per host,
which :func:`normalise` maps to 0..1 over the pass's hosts by min-max, as Nova's
``nova.weights.normalize`` does (``minval``/``maxval`` fix either bound; all scores equal give
0), or which is taken as it is with ``normalised = True`` (already 0..1); then the multiplier
applies, so multipliers compare like with like.

A plugin that raises, or a filter answering ``Status.error``, fails the request closed
(:class:`PluginFailed`), never "every host kept".
"""

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from placementsite.core.exceptions import Unavailable

PLUGIN_FAILED = "scheduler.plugin_failed"


class Code(Enum):
    FITS = "fits"
    # Refused now, might fit another time (not enough free, hint not met).
    UNSCHEDULABLE = "unschedulable"
    # Can never take this request as the host is (not in the zone, no aggregate with the spec).
    UNRESOLVABLE = "unresolvable"
    # The filter could not decide: the request fails closed.
    ERROR = "error"


@dataclass(frozen=True)
class Status:
    """A filter's answer for one host."""

    code: Code
    reason: str = ""

    @classmethod
    def fits(cls):
        return FITS

    @classmethod
    def unschedulable(cls, reason):
        return cls(Code.UNSCHEDULABLE, reason)

    @classmethod
    def unresolvable(cls, reason):
        return cls(Code.UNRESOLVABLE, reason)

    @classmethod
    def error(cls, reason):
        return cls(Code.ERROR, reason)

    @property
    def ok(self):
        return self.code is Code.FITS

    @classmethod
    def of(cls, answer):
        """A filter's answer as a Status (None: fits; text: unschedulable with that reason)."""
        if answer is None:
            return FITS
        if isinstance(answer, Status):
            return answer
        return cls(Code.UNSCHEDULABLE, str(answer))


FITS = Status(Code.FITS)


class PluginFailed(Unavailable):
    """A filter or weigher raised (or answered ``Status.error``): the request fails closed,
    naming the plugin."""

    code = PLUGIN_FAILED

    def __init__(self, plugin, kind, error):
        super().__init__(f"Scheduler {kind} {plugin} failed: {error}. Nothing was scheduled.")
        self.plugin = plugin


class CycleState(dict):
    """What one scheduling pass keeps for its plugins: ``pre_filter`` answers by plugin name."""

    def of(self, plugin):
        return self.get(plugin.name)


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
    # The pass's scheduling.selectors.pass_hosts.PassTreeFacts (None for a host state made by
    # hand); Any: that module imports this one.
    tree: Any = field(default=None, repr=False)

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
    # Whether the answer may change as the host fills (it reads usage or free amounts): a
    # simulated fill then asks again after every instance placed. False only for a filter
    # that reads the host's fixed facts (zone, aggregates, enabled, name) and the request.
    reads_usage = True

    def __init__(self, *args):
        if args:
            raise ValueError(f"takes no arguments, got {':'.join(args)}")

    def applies(self, spec):
        """Whether this request gives the filter anything to check (a hint filter without its
        hint does not): a filter that does not apply keeps every host without being asked
        about each one. Most filters always apply."""
        return True

    def pre_filter(self, spec):
        """What the pass needs computed once for every host (None: nothing); the filter reads
        it back with ``spec.cycle.of(self)`` in :meth:`check`."""
        return None

    def check(self, host, spec):
        """A :class:`Status` for ``host`` taking the instance ``spec`` describes (``None``
        means fits, a string unschedulable for that reason)."""
        raise NotImplementedError


class BaseWeigher:
    """Scores hosts: higher is preferred once multiplied (a negative multiplier inverts it).

    Normalisation, declared per weigher as Nova's: ``minval``/``maxval`` fix the bounds that
    map to 0 and 1 (None: the lowest/highest score of the pass's hosts); ``normalised = True``
    takes the raw score as it is (already 0..1). ``aggregate_multiplier_key`` names the
    aggregate metadata key overriding the multiplier for hosts in that aggregate (Nova's
    ``weight_multiplier(host_state)``; the lowest value wins when several aggregates set it).
    """

    name = ""
    multiplier = 1.0
    minval = None
    maxval = None
    normalised = False
    aggregate_multiplier_key = None

    def weight_multiplier(self, host):
        key = self.aggregate_multiplier_key
        if key:
            values = []
            for meta in host.aggregate_metadata:
                try:
                    values.append(float(meta["metadata"][key]))
                except (KeyError, TypeError, ValueError):
                    continue
            if values:
                return min(values)
        return self.multiplier

    def multipliers(self, hosts):
        """:meth:`weight_multiplier` of each host, in order (a host in no aggregate has the
        plain multiplier: not asked one by one unless a subclass redefines the method)."""
        if type(self).weight_multiplier is not BaseWeigher.weight_multiplier:
            return [self.weight_multiplier(host) for host in hosts]
        plain = self.multiplier
        if not self.aggregate_multiplier_key:
            return [plain] * len(hosts)
        ask = self.weight_multiplier
        return [ask(host) if host.aggregate_metadata else plain for host in hosts]

    def weigh_hosts(self, hosts, spec):
        """The raw score of each host, in order, as floats."""
        weigh = self.weigh
        return [float(weigh(host, spec)) for host in hosts]

    def normalise(self, values):
        if self.normalised:
            return [float(v) for v in values]
        return normalise(values, minval=self.minval, maxval=self.maxval)

    def __init__(self, *args):
        if args:
            raise ValueError(f"takes no arguments, got {':'.join(args)}")

    def weigh(self, host, spec):
        """A raw score; normalised to 0..1 over the request's hosts before the multiplier."""
        raise NotImplementedError


def normalise(values, minval=None, maxval=None):
    """Min-max normalisation to 0..1 (all equal: all 0), as Nova's weighers do; ``minval`` and
    ``maxval`` fix either bound instead of the values'."""
    if not values:
        return []
    low = min(values) if minval is None else minval
    high = max(values) if maxval is None else maxval
    if high == low:
        return [0.0 for _ in values]
    return [(v - low) / (high - low) for v in values]
