"""Reads of the scheduler: candidates from the engine (in process), host states, filters and
weighers, and the explain funnel. Nothing here writes; claims are in scheduling.services.

One selection is a fixed number of queries whatever the number of hosts: the engine's, then
those of the host states (scheduling.selectors.pass_hosts: names, aggregates, and each further
fact once for every host, when a plugin first reads it). Filters and weighers work on the host
states in memory.
"""

import logging
import random
import time
import uuid as uuidlib
from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from django.conf import settings

from placementsite.core import uuids
from placementsite.core.exceptions import InvalidRequest, Unavailable
from placementsite.core.gc_pause import cyclic_gc_paused
from providers import request_groups
from providers.models import ResourceProvider
from providers.plugins.builtin import PCI_NO_NUMA_TRAIT
from providers.selectors.fit import FitRequestError, fit_report

from .. import candidates as engine
from ..candidates import CandidateRequest, CandidatesById
from ..extra_specs import FlavorRequest
from ..models import Flavor, Server, ServerGroup
from ..plugins import (
    BaseFilter,
    BaseWeigher,
    Code,
    CycleState,
    HostState,
    PluginFailed,
    Status,
    configured_filters,
    configured_weighers,
)
from .names import target_host_roots
from .pass_hosts import PassTreeFacts, hosts_of_pass
from .pools import STEP_NAME as POOLS_STEP
from .pools import HostRef, pools_taken, without_unavailable_pools

logger = logging.getLogger("placement.scheduler")

# The funnel's step of hosts refused by their host-level limits (scheduling.host_limits).
HOST_LIMITS_STEP = "host_limits"

# How many names an explain answer lists per step (the counts cover every host).
EXPLAIN_SHOWN = 50


TIME_BUDGET_EXCEEDED = "scheduler.time_budget_exceeded"


class TimeBudgetExceeded(Unavailable):
    """A scheduling request ran past PLACEMENT_SCHEDULER_TIME_BUDGET: stopped, nothing kept."""

    code = TIME_BUDGET_EXCEEDED


def _deadline() -> float:
    return time.monotonic() + settings.PLACEMENT_SCHEDULER_TIME_BUDGET


@dataclass
class SchedulingSpec:
    """One request for instances of a flavor, as filters and weighers read it."""

    flavor: Flavor
    flavor_request: FlavorRequest
    project_id: str = ""
    user_id: str = ""
    hints: dict[str, Any] = field(default_factory=dict)
    availability_zone: str = ""
    count: int = 1
    index: int = 0  # which instance of the request is being placed
    # The server group the instances join (scheduling.models.ServerGroup), its members' hosts
    # as the pass read them ({host uuid: count}), and the server a move leaves out of them.
    group: ServerGroup | None = None
    group_hosts: Counter[str] = field(default_factory=Counter)
    moving_server: uuidlib.UUID | str | None = None
    # What each instance asks beyond its flavor (in ``flavor_request`` already), kept to be
    # recorded on the servers.
    requested_resources: list[Mapping[str, Any]] = field(default_factory=list)
    # The current pass's state for its plugins (their pre_filter answers).
    cycle: CycleState = field(default_factory=CycleState, repr=False)
    # When the request's time budget (PLACEMENT_SCHEDULER_TIME_BUDGET) runs out.
    deadline: float = field(default_factory=_deadline, repr=False)
    _hosts_of: dict[tuple[str, ...], set[str]] = field(default_factory=dict, repr=False)

    @property
    def aggregate_specs(self) -> dict[str, str]:
        return self.flavor_request.aggregate_specs

    @property
    def resources(self) -> dict[str, int]:
        return self.flavor_request.resources

    def check_time(self) -> None:
        """Raise TimeBudgetExceeded once the request's time budget is spent."""
        if time.monotonic() > self.deadline:
            raise TimeBudgetExceeded(
                f"Scheduling took longer than its budget of "
                f"{settings.PLACEMENT_SCHEDULER_TIME_BUDGET:g} s; nothing was scheduled."
            )

    def hint_list(self, name: str) -> list[str]:
        value = self.hints.get(name)
        if not value:
            return []
        return [value] if isinstance(value, str) else [str(v) for v in value]

    def hosts_of(self, servers: Iterable[str]) -> set[str]:
        """Host uuids of the given server uuids (one query per distinct list)."""
        key = tuple(sorted(servers))
        if key not in self._hosts_of:
            named = [found for found in map(uuids.parse, key) if found is not None]
            self._hosts_of[key] = {
                str(uuid)
                for uuid in Server.objects.filter(uuid__in=named)
                .exclude(host=None)
                .values_list("host__uuid", flat=True)
            }
        return self._hosts_of[key]


@dataclass
class WeighedHost:
    host: HostState
    score: float
    # What each weigher gave every host of the pass, and this host's place in those lists:
    # the per-host dicts of :attr:`weights` are built only for the hosts an answer shows.
    # [(name, raw, normalised, multipliers)]
    parts: list[tuple[str, list[float], list[float], list[float]]] = field(
        default_factory=list, repr=False
    )
    index: int = 0

    @property
    def weights(self) -> dict[str, dict[str, float]]:
        """``{weigher name: {"raw", "normalised", "weighted"}}`` for this host."""
        return {
            name: {
                "raw": raw[self.index],
                "normalised": normalised[self.index],
                "weighted": multipliers[self.index] * normalised[self.index],
            }
            for name, raw, normalised, multipliers in self.parts
        }


@dataclass
class FilterStep:
    name: str
    passed: int
    dropped: list[tuple[HostState | HostRef, Status]]


@dataclass
class Selection:
    """What one scheduling pass found, best host first."""

    candidate_hosts: int
    filters: list[FilterStep]
    weighed: list[WeighedHost]  # best first
    chosen: WeighedHost | None = None
    # Whether the pass's bound (PLACEMENT_SCHEDULER_MAX_PLACEMENT_RESULTS), or its reading of
    # a target host's tree alone, cut the engine's read: hosts beyond those judged may exist.
    limited: bool = False

    def attempt_order(self) -> list[WeighedHost]:
        """The chosen host, then every other in weighed order."""
        if self.chosen is None:
            return []
        return [self.chosen] + [w for w in self.weighed if w is not self.chosen]


# --- filtering and weighing ---------------------------------------------------


def _applies(plugin: BaseFilter, spec: SchedulingSpec) -> bool:
    try:
        return plugin.applies(spec)
    except Exception as exc:
        raise _failed(plugin, "filter", exc) from exc


def _check(plugin: BaseFilter, host: HostState, spec: SchedulingSpec) -> Status:
    """The filter's Status for the host; one that raises or answers an error fails closed."""
    try:
        status = Status.of(plugin.check(host, spec))
    except Exception as exc:
        raise _failed(plugin, "filter", exc) from exc
    if status.code is Code.ERROR:
        logger.error("Scheduler filter %s answered an error: %s", plugin.name, status.reason)
        raise PluginFailed(plugin.name, "filter", status.reason)
    return status


def _failed(plugin: BaseFilter | BaseWeigher, kind: str, exc: Exception) -> PluginFailed:
    logger.exception("Scheduler %s %s failed; the request fails closed", kind, plugin.name)
    return PluginFailed(plugin.name, kind, f"{type(exc).__name__}: {exc}")


def pre_filter(*, spec: SchedulingSpec, filters: Iterable[BaseFilter]) -> list[BaseFilter]:
    """Run each applicable filter's pre-filter once for the pass; returns those filters."""
    spec.cycle = CycleState()
    applicable = []
    for plugin in filters:
        if not _applies(plugin, spec):
            continue
        try:
            spec.cycle[plugin.name] = plugin.pre_filter(spec)
        except Exception as exc:
            raise _failed(plugin, "filter", exc) from exc
        applicable.append(plugin)
    return applicable


def _filter(
    hosts: list[HostState], spec: SchedulingSpec, applicable: Collection[BaseFilter]
) -> tuple[list[HostState], list[FilterStep]]:
    steps: list[FilterStep] = []
    for plugin in configured_filters():
        if plugin not in applicable:
            steps.append(FilterStep(plugin.name, len(hosts), []))
            continue
        kept: list[HostState] = []
        dropped: list[tuple[HostState | HostRef, Status]] = []
        spec.check_time()
        for host in hosts:
            spec.check_time()
            status = _check(plugin, host, spec)
            if status.ok:
                kept.append(host)
            else:
                dropped.append((host, status))
        hosts = kept
        steps.append(FilterStep(plugin.name, len(hosts), dropped))
    return hosts, steps


def _weigh(hosts: list[HostState], spec: SchedulingSpec) -> list[WeighedHost]:
    scores = [0.0] * len(hosts)
    parts = []
    for plugin in configured_weighers():
        spec.check_time()
        try:
            raw = plugin.weigh_hosts(hosts, spec)
            normalised = plugin.normalise(raw)
            multipliers = plugin.multipliers(hosts)
        except Exception as exc:
            raise _failed(plugin, "weigher", exc) from exc
        for index, norm in enumerate(normalised):
            scores[index] += multipliers[index] * norm
        parts.append((plugin.name, raw, normalised, multipliers))
    weighed = [
        WeighedHost(host, score, parts, index)
        for index, (host, score) in enumerate(zip(hosts, scores, strict=True))
    ]
    weighed.sort(key=lambda w: (-w.score, w.host.name))
    return weighed


def _requires(request: CandidateRequest, trait: str) -> bool:
    """Whether some group of ``request`` can only be met by providers having ``trait``."""
    return any(frozenset({trait}) in group.required_traits for group in request.groups.values())


def max_placement_results() -> int | None:
    """The bound of a boot's or a move's pass (PLACEMENT_SCHEDULER_MAX_PLACEMENT_RESULTS);
    None: unbounded."""
    bound = settings.PLACEMENT_SCHEDULER_MAX_PLACEMENT_RESULTS
    return bound if bound > 0 else None


def candidates_for(
    *, spec: SchedulingSpec, limit: int | None = None, alone_apart: bool = False
) -> CandidatesById:
    """The engine's answer for the spec's flavor (its variants in order, see
    :func:`~scheduling.candidates.find_candidates_in_order`), at most ``limit`` candidates
    per variant (the first trees by id); unknown names are a 400.

    A bounded read (a boot's or a move's) for a ``target_host`` reads that host's tree alone
    (and the sharing providers): the host filter would leave no other, and the first trees by
    id may not hold it (at 100,000 hosts the bound then cut the read and the pass planned
    again over every host, 4 s). Capacity and explain (no bound) still judge every host.
    ``alone_apart``: a what-if count's read (see
    :func:`~scheduling.candidates.find_candidates`)."""
    target = spec.hints.get("target_host") if limit else None
    roots = target_host_roots(target=target) if target else None
    requests = [
        replace(variant.candidate_request, limit=limit, roots=roots)
        if limit
        else variant.candidate_request
        for variant in spec.flavor_request.variants
    ]
    try:
        try:
            return engine.find_candidates_in_order(requests, capped=False, alone_apart=alone_apart)
        except request_groups.UnknownTrait as exc:
            # PCI NUMA affinity's legacy variant requires the pci plugin's trait, which the
            # sync creates with the first device reporting no NUMA node: before that (or after
            # an operator deleted it, unused) no device has it, so that variant finds nothing
            # and is left out (a read never writes: explain and capacity may run on a replica).
            if exc.names != [PCI_NO_NUMA_TRAIT]:
                raise
            return engine.find_candidates_in_order(
                [r for r in requests if not _requires(r, PCI_NO_NUMA_TRAIT)], capped=False
            )
    except request_groups.UnknownResourceClass as exc:
        raise InvalidRequest(
            f"Flavor {spec.flavor.name} asks for {exc}", code="scheduler.invalid_flavor"
        ) from None
    except request_groups.UnknownTrait as exc:
        raise InvalidRequest(
            f"Flavor {spec.flavor.name} asks for {exc}", code="scheduler.invalid_flavor"
        ) from None


class SchedulingPass:
    """One scheduling pass (as Nova's ``HostState.consume_from_request`` between the instances
    of one request): the engine's candidates and the host states are read once, and every
    placement made in the pass, real (a boot's instances) or simulated (capacity, explain),
    consumes from them in memory, so instance k sees instances 1..k-1 without a query.

    A host keeps the engine's candidates that still fit what the pass has taken (in the
    engine's order: what the engine would answer for that usage), so "first candidate" and
    "fits" mean here what they mean in a fresh pass after real claims.
    """

    def __init__(
        self,
        spec: SchedulingSpec,
        *,
        leave_out: Collection[int] = (),
        limit: int | None = None,
        alone_apart: bool = False,
    ) -> None:
        """``limit``: at most that many candidates per flavor variant (a boot's or a move's
        bound, see :func:`max_placement_results`); capacity and explain judge every host.
        ``alone_apart`` (capacity's count): the candidate of a host taking everything from
        its root alone is left unbuilt by the engine and counted by :meth:`fill` from the
        free units (built when anything else asks for it)."""
        self.spec = spec
        with cyclic_gc_paused():
            # Candidates taking from a stale or disabled pool are left out: hosts left with
            # none are the pools step's refusals.
            self.found, self.pools_dropped = without_unavailable_pools(
                found=candidates_for(spec=spec, limit=limit, alone_apart=alone_apart)
            )
            spec.check_time()
            self.hosts = [h for h in hosts_of_pass(found=self.found) if h.id not in leave_out]
        self.tree: PassTreeFacts | None = self.hosts[0].tree if self.hosts else None
        self.filters = pre_filter(spec=spec, filters=configured_filters()) if self.hosts else []

    def fitting_hosts(self) -> tuple[list[HostState], list[HostState]]:
        """The hosts with a candidate that still fits, and those without one any more."""
        if self.tree is None or (not self.tree.consumed and not self.tree.has_limits()):
            return list(self.hosts), []
        kept: list[HostState] = []
        dropped: list[HostState] = []
        for host in self.hosts:
            (kept if self.tree.first_fitting(host.id) is not None else dropped).append(host)
        return kept, dropped

    def over_host_limits(self, gone: Iterable[HostState]) -> list[tuple[HostState, Status]]:
        """``[(host, Status)]`` of the hosts in ``gone`` refused by their host-level limits
        (scheduling.host_limits) rather than by their providers' free units."""
        refused: list[tuple[HostState, Status]] = []
        tree = self._trees()
        for host in gone:
            why = tree.host_limit_refusal(host.id)
            if why is not None:
                refused.append((host, Status.unschedulable(why)))
        return refused

    def select(self) -> Selection:
        """Filters and weighers over the hosts that still fit, and the pick (a random one
        among the best ``PLACEMENT_SCHEDULER_HOST_SUBSET_SIZE``)."""
        with cyclic_gc_paused():
            if self.tree is not None:
                self.tree.build_alone()
            hosts, gone = self.fitting_hosts()
            dropped: list[tuple[HostState | HostRef, Status]] = [
                (host, Status.unschedulable(why)) for host, why in self.pools_dropped
            ]
            over_limits = self.over_host_limits(gone) if gone else []
            candidate_hosts = len(hosts) + len(dropped) + len(over_limits)
            hosts, steps = _filter(hosts, self.spec, self.filters)
            if over_limits:  # hosts whose reservation, held for the whole host, refuses
                passed = candidate_hosts - len(dropped) - len(over_limits)
                steps.insert(0, FilterStep(HOST_LIMITS_STEP, passed, list(over_limits)))
            if dropped:  # before the filters: hosts whose only pools are stale or disabled
                steps.insert(0, FilterStep(POOLS_STEP, candidate_hosts - len(dropped), dropped))
            weighed = _weigh(hosts, self.spec)
        selection = Selection(
            candidate_hosts=candidate_hosts,
            filters=steps,
            weighed=weighed,
            limited=self.found.limited,
        )
        if weighed:
            subset = max(1, settings.PLACEMENT_SCHEDULER_HOST_SUBSET_SIZE)
            selection.chosen = random.choice(weighed[:subset])
        return selection

    def _trees(self) -> PassTreeFacts:
        """The pass's trees: asked only of a pass that has hosts."""
        assert self.tree is not None
        return self.tree

    def take(self, host: HostState) -> dict[str, dict[str, int]] | None:
        """Consume ``host``'s first fitting candidate; returns it as a client sees it, or
        None when it is stale (a provider of it deleted since the engine read it)."""
        tree = self._trees()
        tree.build_alone()
        candidate = tree.first_fitting(host.id)
        if candidate is None:
            return None
        allocations = tree.render(candidate)
        if allocations is None:
            return None
        tree.consume(candidate)
        return allocations[0]

    def place(self, selection: Selection | None = None) -> "Placement":
        """Place one instance in memory: ``Placement`` (its selection, host, allocations and
        alternates), or one whose ``host`` is None when nothing fits. ``selection``: this
        pass's current selection when the caller has made it already."""
        selection = selection or self.select()
        for weighed in selection.attempt_order():
            alternates = _alternates(selection, weighed)
            allocations = self.take(weighed.host)
            if allocations is not None:
                return Placement(selection, weighed.host, allocations, alternates)
            logger.info("The tree of %s changed since it was read; next host", weighed.host.name)
        return Placement(selection, None, None, [])

    def fill(self) -> dict[int, tuple[HostState, int]]:
        """Place instances until none fits: ``{host id: (host, instances)}`` (hosts taking
        none left out).

        Hosts interact only through the sharing providers they draw from; the rest of a
        host's fill is its own. So each host is filled alone with its first fitting candidate
        while every filter keeps it (filters judge one host), letting the sharing providers'
        units go below zero: when none does, no host ever found a pool short, and that is what
        any order of real boots ends with. When a pool runs short, the order decides who gets
        it: the pass is read again and filled one instance at a time in the scheduler's own
        order (bounded by the time budget).
        """
        if self.tree is None:
            return {}
        sharing = self.found.sharing
        self.tree.unbounded = frozenset(sharing)
        try:
            placed = self._fill_each_host()
        except _OnlyShared:
            placed = None
        finally:
            self.tree.unbounded = frozenset()
        free = self.tree.free() if self.tree.consumed else {}
        # The sharing providers' slots looked up (every slot is of a class the request asks),
        # not found among the 300,000 of 100,000 hosts.
        classes = self.found.class_names
        if placed is not None and not any(
            free.get((provider_id, class_id), 0) < 0
            for provider_id in sharing
            for class_id in classes
        ):
            return placed
        return SchedulingPass(self.spec)._fill_in_order()

    def _fill_each_host(self) -> dict[int, tuple[HostState, int]]:
        placed = {}
        # Filters that do not read usage judge a host once for the whole fill; then each
        # candidate is repeated as often as it fits, in one step.
        once = not any(getattr(plugin, "reads_usage", True) for plugin in self.filters)
        tree = self._trees()
        if once and tree.flat():
            return self._fill_flat(tree)
        tree.build_alone()
        with cyclic_gc_paused():
            for host in self.hosts:
                self.spec.check_time()
                count = self._fill_host(tree, host, once=once)
                if count:
                    placed[host.id] = (host, count)
        return placed

    def _fill_flat(self, tree: PassTreeFacts) -> dict[int, tuple[HostState, int]]:
        """:meth:`_fill_each_host` of a flat pass whose filters read no usage: the filters
        judge every host first (their answers do not change as hosts fill), then the hosts
        they keep are filled in one loop (:meth:`PassTreeFacts.fill_flat`)."""
        filters, spec = self.filters, self.spec
        kept: dict[int, HostState] = {}
        for host in self.hosts:
            spec.check_time()
            for plugin in filters:
                if not _check(plugin, host, spec).ok:
                    break
            else:
                kept[host.id] = host
        counts = tree.fill_flat(kept)
        if counts is None:
            raise _OnlyShared
        return {root_id: (kept[root_id], count) for root_id, count in counts.items()}

    def _fill_host(self, tree: PassTreeFacts, host: HostState, *, once: bool) -> int:
        """How many instances ``host`` takes, filled alone while every filter keeps it
        (``once``: the filters read no usage, so they judge it once for the whole fill);
        _OnlyShared when nothing but the sharing providers bounds it."""
        filters = self.filters
        if once:
            if not all(_check(plugin, host, self.spec).ok for plugin in filters):
                return 0
            count = tree.fill_alone(host.id)
            if count is None:
                raise _OnlyShared
            return count
        count = 0
        while (candidate := tree.first_fitting(host.id)) is not None and all(
            _check(plugin, host, self.spec).ok for plugin in filters
        ):
            if tree.times_fitting(candidate) is None:
                raise _OnlyShared
            tree.consume(candidate)
            count += 1
        return count

    def _fill_in_order(self) -> dict[int, tuple[HostState, int]]:
        placed: dict[int, tuple[HostState, int]] = {}
        if self.tree is None:
            return placed
        while True:
            self.spec.check_time()
            placement = self.place()
            if placement.host is None:
                return placed
            host, count = placed.get(placement.host.id, (placement.host, 0))
            placed[host.id] = (host, count + 1)


class _OnlyShared(Exception):
    """A host's fill is bounded by sharing providers alone: fill in the scheduler's order."""


@dataclass
class Placement:
    """One instance placed in a pass: where, with which allocations, and the alternates."""

    selection: Selection
    host: HostState | None
    allocations: dict[str, dict[str, int]] | None  # {provider uuid: {class: amount}}
    alternates: list[dict[str, Any]]  # [{"host", "host_uuid", "allocations"}]


def _alternates(selection: Selection, claimed: WeighedHost) -> list[dict[str, Any]]:
    """Other hosts that also fit, in weighed order, each with its first allocations."""
    keep = max(0, settings.PLACEMENT_SCHEDULER_MAX_ATTEMPTS - 1)
    found: list[dict[str, Any]] = []
    for weighed in selection.attempt_order():
        if len(found) >= keep:
            break
        if weighed is claimed:
            continue
        allocations = first_allocations(host=weighed.host)
        if allocations is not None:
            found.append(
                {
                    "host": weighed.host.name,
                    "host_uuid": weighed.host.uuid,
                    "allocations": allocations,
                }
            )
    return found


def select_hosts(*, spec: SchedulingSpec, limit: int | None = None) -> Selection:
    """One scheduling pass for one instance (moves and the hosts' tests use it), over at most
    ``limit`` candidates per flavor variant."""
    return SchedulingPass(spec, limit=limit).select()


# --- explain --------------------------------------------------------------------


def _host_ref(host: HostState | HostRef) -> dict[str, str]:
    return {"host": host.name, "host_uuid": host.uuid}


def first_allocations(*, host: HostState) -> dict[str, dict[str, int]] | None:
    """The allocation request a claim on ``host`` uses: the engine's first for that host; None
    when every one of them is stale (the host's tree changed since the pass read it)."""
    candidates = host.candidates
    return candidates[0].allocations if candidates else None


def _group_funnel(spec: SchedulingSpec) -> list[dict[str, Any]]:
    """Per request group, how many providers fit it and why the others do not; a flavor of
    several variants (page sizes) gives each variant's groups, each naming its variant."""
    variants = spec.flavor_request.variants
    funnel: list[dict[str, Any]] = []
    for variant in variants:
        named = {"variant": variant.label} if len(variants) > 1 or variant.label else {}
        try:
            reports = fit_report(groups=variant.candidate_request.groups, shown=EXPLAIN_SHOWN)
        except FitRequestError as exc:
            funnel.append({"group": "", **named, "error": str(exc)})
            continue
        funnel.extend(
            {
                "group": report.suffix,
                **named,
                "resources": dict(report.group.resources),
                "fitting": report.fitting_count,
                "left_out": report.left_out_count,
                "reasons": dict(report.reason_counts),
                "left_out_examples": [
                    {
                        "provider": ref.name,
                        "uuid": str(ref.uuid),
                        "reasons": [reason.text for reason in reasons],
                    }
                    for ref, reasons in report.left_out
                ],
            }
            for report in reports
        )
    return funnel


def _by_reason(
    dropped: Iterable[tuple[HostState | HostRef, Status | str]],
) -> list[dict[str, Any]]:
    """``[{"reason", "count", "hosts": [name, ...]}]`` of a filter's refusals, the commonest
    reason first; each lists up to EXPLAIN_SHOWN of its hosts."""
    groups: dict[str, dict[str, Any]] = {}
    for host, refusal in dropped:
        # A filter's text, or a Status holding it.
        reason = refusal.reason if isinstance(refusal, Status) else refusal
        group = groups.setdefault(reason, {"reason": reason, "count": 0, "hosts": []})
        group["count"] += 1
        if len(group["hosts"]) < EXPLAIN_SHOWN:
            group["hosts"].append(host.name)
    return sorted(groups.values(), key=lambda g: (-g["count"], g["reason"]))


def explain(
    *,
    spec: SchedulingSpec,
    selection: Selection | None = None,
    count: int = 1,
    model: SchedulingPass | None = None,
) -> dict[str, Any]:
    """The funnel from every host to the chosen one, as plain JSON-able data, and where
    ``count`` instances would go.

    ``funnel`` counts hosts at every step (each step's ``passed`` and ``dropped_count`` add up
    to what entered it): the hosts, those with allocation candidates, then each filter.
    ``groups`` keeps the per-provider view below it (how many providers each resource group
    keeps and why the others fail), ``weighed`` each weigher's part of the score. Then the
    pass places ``count`` instances in memory, as a boot would: ``placeable`` of them fit,
    ``placements`` names their hosts in order.
    """
    if selection is None:
        model = model or SchedulingPass(spec)
        selection = model.select()
    hosts_total = ResourceProvider.objects.filter(parent__isnull=True).count()
    answer = {
        "providers": ResourceProvider.objects.count(),
        "hosts": hosts_total,
        "groups": _group_funnel(spec),
        **({"notes": list(spec.flavor_request.notes)} if spec.flavor_request.notes else {}),
        "candidate_hosts": selection.candidate_hosts,
        "funnel": _host_funnel(hosts_total, selection, model),
        "filters": [
            {
                "name": step.name,
                "passed": step.passed,
                "dropped_count": len(step.dropped),
                "dropped": [
                    {**_host_ref(host), "reason": status.reason, "status": status.code.value}
                    for host, status in step.dropped[:EXPLAIN_SHOWN]
                ],
                "dropped_by_reason": _by_reason(step.dropped),
            }
            for step in selection.filters
        ],
        "weighed": [
            {**_host_ref(w.host), "score": w.score, "weights": w.weights}
            for w in selection.weighed[:EXPLAIN_SHOWN]
        ],
        "chosen": (
            {
                **_host_ref(selection.chosen.host),
                "allocations": first_allocations(host=selection.chosen.host),
                "pools": pools_taken(allocations=first_allocations(host=selection.chosen.host)),
            }
            if selection.chosen
            else None
        ),
    }
    if model is not None:
        placements: list[str] = []
        for index in range(count):
            spec.index = index
            spec.check_time()
            placement = model.place(selection if index == 0 else None)
            if placement.host is None:
                break
            placements.append(placement.host.name)
        answer.update(count=count, placeable=len(placements), placements=placements)
    return answer


def _host_funnel(
    hosts_total: int, selection: Selection, model: SchedulingPass | None = None
) -> list[dict[str, Any]]:
    """Hosts at every step: all of them, those with candidates, then after each filter. The
    resources step names (some of) the hosts without a candidate; why each of their providers
    does not fit is in ``groups``."""
    steps: list[dict[str, Any]] = [{"step": "hosts", "passed": hosts_total}]
    entering = hosts_total
    resources: dict[str, Any] = {
        "step": "resources",
        "entered": entering,
        "passed": selection.candidate_hosts,
        "dropped_count": entering - selection.candidate_hosts,
    }
    if model is not None and resources["dropped_count"]:
        kept = [host.id for host in model.hosts]
        by_pools = [host.uuid for host, _why in model.pools_dropped]
        resources["dropped"] = [
            {"host": name, "host_uuid": str(uuid)}
            for name, uuid in ResourceProvider.objects.filter(parent__isnull=True)
            .exclude(id__in=kept)
            .exclude(uuid__in=by_pools)
            .order_by("name")
            .values_list("name", "uuid")[:EXPLAIN_SHOWN]
        ]
    steps.append(resources)
    entering = selection.candidate_hosts
    for step in selection.filters:
        reasons: dict[str, int] = {}
        for _host, status in step.dropped:
            reasons[status.code.value] = reasons.get(status.code.value, 0) + 1
        steps.append(
            {
                "step": step.name,
                "entered": entering,
                "passed": step.passed,
                "dropped_count": len(step.dropped),
                "reasons": reasons,
            }
        )
        entering = step.passed
    return steps
