"""Resource pools in a scheduling pass: candidates taking from a pool that is stale or
disabled are left out (a host that has no other candidate is dropped, the pool named as the
reason), and the pools a chosen candidate takes from are named in explain.

The engine (and ``GET /allocation_candidates``) still sees every sharing provider, as
Placement does; the scheduler's own pass, like its filters, is what leaves them out.
"""

from dataclasses import dataclass, replace

from providers.selectors.resource_pools import pools_of_providers, unavailable_pools

from .. import queries
from .host_states import candidate_root

STEP_NAME = "resource_pools"


@dataclass(frozen=True)
class HostRef:
    """A host dropped before its host state was built: what explain shows of it."""

    name: str
    uuid: str


def without_unavailable_pools(found):
    """``(found, dropped)``: the engine's answer without the candidates that take from an
    unavailable pool, and ``[(HostRef, reason)]`` of the hosts left with no candidate."""
    if not found.sharing:
        return found, []
    unavailable = unavailable_pools(provider_ids=found.sharing)
    if not unavailable:
        return found, []
    kept, reasons = [], {}
    for candidate in found.candidates:
        bad = {p for (p, _c), _a in candidate[0]} & unavailable.keys()
        if bad:
            root = candidate_root(found, candidate)
            reasons.setdefault(root, set()).update(unavailable[p] for p in bad)
        else:
            kept.append(candidate)
    kept_roots = {candidate_root(found, candidate) for candidate in kept}
    gone = [root for root in reasons if root not in kept_roots]
    dropped = [
        (HostRef(name, str(uuid)), "; ".join(sorted(reasons[pk])))
        for pk, uuid, name in (queries.provider_names(gone) if gone else [])
    ]
    return replace(found, candidates=kept), sorted(dropped, key=lambda d: d[0].name)


def pools_taken(allocations):
    """``[{"name", "uuid", "kind"}]`` of the pools an allocation request
    (``{provider uuid: {class: amount}}``) takes from."""
    return pools_of_providers(uuids=list(allocations or {}))
