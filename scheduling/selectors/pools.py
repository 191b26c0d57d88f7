"""Resource pools in a scheduling pass: candidates taking from a pool that is stale or
disabled are left out (a host that has no other candidate is dropped, the pool named as the
reason), and the pools a chosen candidate takes from are named in explain.

The engine (and ``GET /allocation_candidates``) still sees every sharing provider, as
Placement does; the scheduler's own pass, like its filters, is what leaves them out.
"""

from collections.abc import Collection, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any
from uuid import UUID

from providers.request_groups import RequestGroup
from providers.selectors.resource_pools import (
    pools_of_providers,
    provider_aggregate_uuids,
    sharing_provider_uuids,
    unavailable_pools,
)

from .. import queries
from ..candidates import CandidateRequest, CandidatesById
from .pass_hosts import Candidate, candidate_root

if TYPE_CHECKING:  # the scheduler imports this module
    from .scheduler import SchedulingSpec

STEP_NAME = "resource_pools"


@dataclass(frozen=True)
class HostRef:
    """A host dropped before its host state was built: what explain shows of it."""

    name: str
    uuid: str


def without_unavailable_pools(
    *, found: CandidatesById
) -> tuple[CandidatesById, list[tuple[HostRef, str]]]:
    """``(found, dropped)``: the engine's answer without the candidates that take from an
    unavailable pool, and ``[(HostRef, reason)]`` of the hosts left with no candidate."""
    if not found.sharing:
        return found, []
    unavailable = unavailable_pools(provider_ids=found.sharing)
    if not unavailable:
        return found, []
    kept: list[Candidate] = []
    reasons: dict[int, set[str]] = {}
    for candidate in found.candidates:
        bad = {p for (p, _c), _a in candidate.allocations} & unavailable.keys()
        if bad:
            root = candidate_root(found=found, candidate=candidate)
            reasons.setdefault(root, set()).update(unavailable[p] for p in bad)
        else:
            kept.append(candidate)
    kept_roots = {candidate_root(found=found, candidate=candidate) for candidate in kept}
    gone = [root for root in reasons if root not in kept_roots]
    dropped = [
        (HostRef(name, str(uuid)), "; ".join(sorted(reasons[pk])))
        for pk, uuid, name in (queries.provider_names(gone) if gone else [])
    ]
    return replace(found, candidates=kept), sorted(dropped, key=lambda d: d[0].name)


def pools_taken(*, allocations: Mapping[str, Any] | None) -> list[dict[str, str]]:
    """``[{"name", "uuid", "kind"}]`` of the pools an allocation request
    (``{provider uuid: {class: amount}}``) takes from."""
    return pools_of_providers(uuids=list(allocations or {}))


def spec_within_pools(
    *, spec: "SchedulingSpec", held: Mapping[str, Mapping[str, int]]
) -> "tuple[SchedulingSpec, dict[str, dict[str, int]]] | None":
    """For a move of a server holding ``held`` (``{provider uuid: {class: amount}}``):
    ``(spec, kept)`` where ``spec`` asks only for hosts sharing the server's pools (their
    aggregates), without the classes the server holds on them, and ``kept`` is what the
    server keeps on each pool (``{pool uuid: {class: the request's amount}}``), to be added
    to the destination's allocations. A pool's classes are taken out of whichever groups ask
    them (the flavor's, or a boot's ``_REQUESTED`` group, which goes when it asks nothing
    more). None when the server holds no pool (or the request would ask nothing else)."""
    pools = sharing_provider_uuids(uuids=list(held))
    request = spec.flavor_request.candidate_request
    if not pools or request is None or "" not in request.groups:
        return None
    tied = {suffix for suffixes in request.same_subtree for suffix in suffixes}
    asked = {suffix: dict(group.resources) for suffix, group in request.groups.items()}
    kept: dict[str, dict[str, int]] = {}
    member_of = list(request.groups[""].member_of)
    for pool in sorted(pools):
        aggregates = provider_aggregate_uuids(uuid=pool)
        amounts = _taken_out(asked, held[pool], tied) if aggregates else {}
        if amounts:
            kept[pool] = amounts
            member_of.append(frozenset(UUID(a) for a in aggregates))
    if not kept or not asked[""]:
        return None
    taken = {
        suffix: set(group.resources) - set(asked[suffix])
        for suffix, group in request.groups.items()
    }

    def within(request: CandidateRequest) -> CandidateRequest:
        """The variant's (page size's) request without what the pools keep."""
        groups: dict[str, RequestGroup] = {}
        for suffix, group in request.groups.items():
            resources = {k: v for k, v in group.resources.items() if k not in taken[suffix]}
            if resources or not suffix:
                groups[suffix] = replace(group, resources=resources)
        groups[""] = replace(groups[""], member_of=tuple(member_of))
        return replace(request, groups=groups)

    flavor_request = spec.flavor_request.with_requests(within)
    return replace(spec, flavor_request=flavor_request, _hosts_of={}), kept


def _taken_out(
    asked: dict[str, dict[str, int]], on_pool: Mapping[str, int], tied: Collection[str]
) -> dict[str, int]:
    """Take out of ``asked`` (``{suffix: {class: amount}}``, changed in place) the classes
    the server holds on a pool (``on_pool``), in every group asking them, at the request's
    amounts (a resize's new ones: the claim checks the pool has room for any growth);
    returns ``{class: amount taken}``. Groups tied by ``same_subtree`` stay whole."""
    taken: dict[str, int] = {}
    for suffix in sorted(asked):
        if suffix in tied:
            continue
        for name in sorted(set(asked[suffix]) & set(on_pool)):
            taken[name] = taken.get(name, 0) + asked[suffix].pop(name)
    return taken
