"""Reads of the scheduler: candidates from the engine (in process), host states, filters and
weighers, and the explain funnel. Nothing here writes; claims are in scheduling.services.

One selection is a fixed number of queries whatever the number of hosts: the engine's, then
those of the host states (scheduling.selectors.host_states: names, aggregates, and each further
fact once for every host, when a plugin first reads it). Filters and weighers work on the host
states in memory.
"""

import logging
import random
from collections import Counter
from dataclasses import dataclass, field

from django.conf import settings

from placementsite.core import uuids
from placementsite.core.exceptions import InvalidRequest
from placementsite.core.gc_pause import cyclic_gc_paused
from providers import request_groups
from providers.models import ResourceProvider
from providers.selectors.fit import FitRequestError, fit_report

from .. import candidates as engine
from ..models import Server
from ..plugins import HostState, configured_filters, configured_weighers, normalise
from .host_states import host_states
from .pools import STEP_NAME as POOLS_STEP
from .pools import pools_taken, without_unavailable_pools

logger = logging.getLogger("placement.scheduler")

# How many names an explain answer lists per step (the counts cover every host).
EXPLAIN_SHOWN = 50


@dataclass
class SchedulingSpec:
    """One request for instances of a flavor, as filters and weighers read it."""

    flavor: object  # scheduling.models.Flavor
    flavor_request: object  # scheduling.extra_specs.FlavorRequest
    project_id: str = ""
    user_id: str = ""
    hints: dict = field(default_factory=dict)
    availability_zone: str = ""
    count: int = 1
    index: int = 0  # which instance of the request is being placed
    # The server group the instances join (scheduling.models.ServerGroup), its members' hosts
    # as the pass read them ({host uuid: count}), and the server a move leaves out of them.
    group: object = None
    group_hosts: Counter = field(default_factory=Counter)
    moving_server: object = None
    _hosts_of: dict = field(default_factory=dict, repr=False)

    @property
    def aggregate_specs(self):
        return self.flavor_request.aggregate_specs

    @property
    def resources(self):
        return self.flavor_request.resources

    def hint_list(self, name):
        value = self.hints.get(name)
        if not value:
            return []
        return [value] if isinstance(value, str) else [str(v) for v in value]

    def hosts_of(self, servers):
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
    parts: list = field(default_factory=list, repr=False)  # [(name, raw, normalised, mult)]
    index: int = 0

    @property
    def weights(self):
        """``{weigher name: {"raw", "normalised", "weighted"}}`` for this host."""
        return {
            name: {
                "raw": raw[self.index],
                "normalised": normalised[self.index],
                "weighted": multiplier * normalised[self.index],
            }
            for name, raw, normalised, multiplier in self.parts
        }


@dataclass
class FilterStep:
    name: str
    passed: int
    dropped: list  # [(HostState, reason)]
    error: str = ""


@dataclass
class Selection:
    """What one scheduling pass found, best host first."""

    candidate_hosts: int
    filters: list  # [FilterStep]
    weighed: list  # [WeighedHost], best first
    chosen: WeighedHost | None = None

    def attempt_order(self):
        """The chosen host, then every other in weighed order."""
        if self.chosen is None:
            return []
        return [self.chosen] + [w for w in self.weighed if w is not self.chosen]


# --- filtering and weighing ---------------------------------------------------


def _filter(hosts, spec):
    steps = []
    for plugin in configured_filters():
        kept, dropped = [], []
        try:
            if not plugin.applies(spec):
                steps.append(FilterStep(plugin.name, len(hosts), []))
                continue
            for host in hosts:
                reason = plugin.check(host, spec)
                (kept if reason is None else dropped).append((host, reason))
        except Exception as exc:  # a broken plugin must not break scheduling
            logger.exception("Scheduler filter %s failed; skipped for this request", plugin.name)
            steps.append(
                FilterStep(plugin.name, len(hosts), [], error=f"{type(exc).__name__}: {exc}")
            )
            continue
        hosts = [host for host, _reason in kept]
        steps.append(FilterStep(plugin.name, len(hosts), dropped))
    return hosts, steps


def _weigh(hosts, spec):
    scores = [0.0] * len(hosts)
    parts = []
    for plugin in configured_weighers():
        try:
            raw = [float(plugin.weigh(host, spec)) for host in hosts]
        except Exception:
            logger.exception("Scheduler weigher %s failed; skipped for this request", plugin.name)
            continue
        normalised = normalise(raw)
        multiplier = plugin.multiplier
        for index, norm in enumerate(normalised):
            scores[index] += multiplier * norm
        parts.append((plugin.name, raw, normalised, multiplier))
    weighed = [
        WeighedHost(host, score, parts, index)
        for index, (host, score) in enumerate(zip(hosts, scores, strict=True))
    ]
    weighed.sort(key=lambda w: (-w.score, w.host.name))
    return weighed


def candidates_for(spec):
    """The engine's answer for the spec's flavor; unknown names are a 400."""
    try:
        return engine.find_candidates(spec.flavor_request.candidate_request)
    except request_groups.UnknownResourceClass as exc:
        raise InvalidRequest(
            f"Flavor {spec.flavor.name} asks for {exc}", code="scheduler.invalid_flavor"
        ) from None
    except request_groups.UnknownTrait as exc:
        raise InvalidRequest(
            f"Flavor {spec.flavor.name} asks for {exc}", code="scheduler.invalid_flavor"
        ) from None


def select_hosts(spec):
    """One scheduling pass: candidates, host states, filters, weighers and the pick (a random
    one among the best ``PLACEMENT_SCHEDULER_HOST_SUBSET_SIZE``)."""
    with cyclic_gc_paused():
        found, pools_dropped = without_unavailable_pools(candidates_for(spec))
        hosts = host_states(found)
        candidate_hosts = len(hosts) + len(pools_dropped)
        hosts, steps = _filter(hosts, spec)
        if pools_dropped:  # before the filters: hosts whose only pools are stale or disabled
            steps.insert(
                0, FilterStep(POOLS_STEP, candidate_hosts - len(pools_dropped), pools_dropped)
            )
        weighed = _weigh(hosts, spec)
    selection = Selection(candidate_hosts=candidate_hosts, filters=steps, weighed=weighed)
    if weighed:
        subset = max(1, settings.PLACEMENT_SCHEDULER_HOST_SUBSET_SIZE)
        selection.chosen = random.choice(weighed[:subset])
    return selection


# --- explain --------------------------------------------------------------------


def _host_ref(host):
    return {"host": host.name, "host_uuid": host.uuid}


def first_allocations(host):
    """The allocation request a claim on ``host`` uses: the engine's first for that host; None
    when every one of them is stale (the host's tree changed since the pass read it)."""
    candidates = host.candidates
    return candidates[0][0] if candidates else None


def _group_funnel(spec):
    groups = spec.flavor_request.candidate_request.groups
    try:
        reports = fit_report(groups, shown=EXPLAIN_SHOWN)
    except FitRequestError as exc:
        return [{"group": "", "error": str(exc)}]
    return [
        {
            "group": report.suffix,
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
    ]


def _by_reason(dropped):
    """``[{"reason", "count", "hosts": [name, ...]}]`` of a filter's refusals, the commonest
    reason first; each lists up to EXPLAIN_SHOWN of its hosts."""
    groups = {}
    for host, refusal in dropped:
        reason = getattr(refusal, "reason", refusal)  # a filter's text, or a Status holding it
        group = groups.setdefault(reason, {"reason": reason, "count": 0, "hosts": []})
        group["count"] += 1
        if len(group["hosts"]) < EXPLAIN_SHOWN:
            group["hosts"].append(host.name)
    return sorted(groups.values(), key=lambda g: (-g["count"], g["reason"]))


def explain(spec, selection=None):
    """The funnel from every provider to the chosen host, as plain JSON-able data: how many
    each resource group keeps and why the others fail, then each filter's refusals, then the
    weighed hosts with each weigher's part of the score."""
    selection = selection or select_hosts(spec)
    return {
        "providers": ResourceProvider.objects.count(),
        "hosts": ResourceProvider.objects.filter(parent__isnull=True).count(),
        "groups": _group_funnel(spec),
        "candidate_hosts": selection.candidate_hosts,
        "filters": [
            {
                "name": step.name,
                "passed": step.passed,
                "dropped_count": len(step.dropped),
                "dropped": [
                    {**_host_ref(host), "reason": reason}
                    for host, reason in step.dropped[:EXPLAIN_SHOWN]
                ],
                "dropped_by_reason": _by_reason(step.dropped),
                **({"error": step.error} if step.error else {}),
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
                "allocations": first_allocations(selection.chosen.host),
                "pools": pools_taken(first_allocations(selection.chosen.host)),
            }
            if selection.chosen
            else None
        ),
    }
