"""Reads over the allocation candidates engine for edges other than the API."""

from ..candidates import CandidateRequest, candidates_for_request


def candidates_preview(*, groups, group_policy=None, limit=20):
    """The first ``limit`` allocation candidates for ``groups`` (suffix -> RequestGroup).

    Each candidate is a list of ``(provider uuid, provider name, {class: amount})``
    in name order: the same answer ``GET /allocation_candidates`` gives, trees
    and sharing providers combined, with names for people to read.
    """
    found = candidates_for_request(
        CandidateRequest(groups=groups, group_policy=group_policy, limit=limit)
    )
    names = {uuid: name for uuid, (_id, name) in found.providers.items()}
    return [
        sorted(
            ((uuid, names.get(uuid, uuid), resources) for uuid, resources in allocations.items()),
            key=lambda item: item[1],
        )
        for allocations, _mappings in found.allocation_requests
    ]
