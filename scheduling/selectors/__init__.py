"""Reads over the allocation candidates engine for edges other than the API."""

from providers.request_groups import RequestGroup

from .. import queries
from ..candidates import CandidateRequest, find_candidates


def candidates_preview(
    *, groups: dict[str, RequestGroup], group_policy: str | None = None, limit: int = 20
) -> list[list[tuple[str, str, dict[str, int]]]]:
    """The first ``limit`` allocation candidates for ``groups`` (suffix -> RequestGroup).

    Each candidate is a list of ``(provider uuid, provider name, {class: amount})``
    in name order: the same answer ``GET /allocation_candidates`` gives, trees
    and sharing providers combined, with names for people to read.
    """
    found = find_candidates(CandidateRequest(groups=groups, group_policy=group_policy, limit=limit))
    # Names only for the providers shown (the engine answers by id).
    shown = {pk for allocations, _m in found.candidates for (pk, _c), _a in allocations}
    rows = queries.provider_names(shown) if shown else []
    uuids = {pk: uuid for pk, uuid, _name in rows}
    names = {uuid: name for _pk, uuid, name in rows}
    previews = []
    for candidate in found.candidates:
        allocations = found.render(candidate, uuids).allocations
        previews.append(
            sorted(
                ((uuid, names[uuid], resources) for uuid, resources in allocations.items()),
                key=lambda item: item[1],
            )
        )
    return previews
