"""``GET /allocation_candidates``: parse the query, ask the engine, render per microversion."""

import math
import time

import orjson

from placementsite.core.api.errors import HTTPBadRequest
from placementsite.core.api.microversion import since
from placementsite.core.api.views import PlacementView
from placementsite.core.gc_pause import cyclic_gc_paused
from placementsite.core.replicas import tolerates_replica_lag
from providers import query_params as qp
from providers import request_groups

from .. import candidates as engine
from .. import metrics, policies


def allocation_requests_repr(found, version):
    """The ``allocation_requests`` list: one dict per candidate, built once from its ids. A
    candidate given as its provider's id (one provider giving every amount: see
    scheduling.candidates.AnsweredCandidate) is the same JSON in each but for that uuid: its
    text, rendered once around a placeholder, is joined around each uuid instead; one given
    as a tuple of providers (a host and a sharing provider) is the text of its shape
    (:func:`_picked_texts`) with their uuids."""
    uuids, names = found.uuids, found.class_names
    around = _alone_text(found, version)
    fragment = orjson.Fragment
    picked_text = _picked_texts(found, version)
    repr_of = _candidate_repr(version)
    return [
        fragment(uuids[c].join(around))
        if type(c) is int
        else picked_text(c)
        if type(c) is tuple
        else repr_of(c, uuids, names)
        for c in found.candidates
    ]


def _candidate_repr(version):
    """What renders a :class:`~scheduling.candidates.Candidate` at ``version``."""
    if version < (1, 12):
        return _listed_repr
    if version < (1, 34):
        return _allocations_only
    return _with_mappings


def _listed_repr(candidate, uuids, names):
    """A candidate as ``allocation_requests`` lists it before 1.12."""
    return {
        "allocations": [
            {"resource_provider": {"uuid": uuid}, "resources": entry["resources"]}
            for uuid, entry in _allocations_repr(candidate[0], uuids, names).items()
        ]
    }


def _allocations_only(candidate, uuids, names):
    """A candidate as ``allocation_requests`` lists it from 1.12 to 1.33."""
    return {"allocations": _allocations_repr(candidate[0], uuids, names)}


def _picked_texts(found, version):
    """What gives the JSON text (an orjson Fragment) of a candidate given as a tuple of
    providers, one per slot. The text depends only on its shape (which slots share a
    provider, and the providers' id order: allocations list them in id order, mappings in
    slot order): each shape's is rendered once, its providers' uuids as format fields, and
    filled with each candidate's uuids.

    Most such candidates are a host and the same sharing providers (an aggregate's disk):
    the text of the other providers (the first one's slots blank) is also kept split where
    the first one's uuid goes, for the range of ids the first one may have with that shape,
    and joined around each host's uuid, as a one-provider candidate's is."""
    uuids, names, slots = found.uuids, found.class_names, found.slots
    repr_of = _candidate_repr(version)
    fragment = orjson.Fragment
    templates = {}
    around_first = {}  # the others (the first one's slots None) -> [(low, high, parts)]

    def filled(picked):
        distinct = sorted(set(picked))
        shape = tuple(map(distinct.index, picked))
        template = templates.get(shape)
        if template is None:
            template = templates[shape] = _picked_template(repr_of, slots, shape, names)
        return template, distinct

    def remembered(picked, others):
        template, distinct = filled(picked)
        first = picked[0]
        parts = template.format(
            *[_UUID_PLACEHOLDER if p == first else uuids[p] for p in distinct]
        ).split(_UUID_PLACEHOLDER)
        if len(around_first) < _MOST_REMEMBERED:
            rank = distinct.index(first)
            low = distinct[rank - 1] if rank else -1
            high = distinct[rank + 1] if rank + 1 < len(distinct) else math.inf
            around_first.setdefault(others, []).append((low, high, parts))
        return uuids[first].join(parts)

    def text(picked):
        first = picked[0]
        others = tuple([None if p == first else p for p in picked])
        for low, high, parts in around_first.get(others, ()):
            if low < first < high:
                return fragment(uuids[first].join(parts))
        return fragment(remembered(picked, others))

    return text


# The most distinct sets of other providers whose texts _picked_texts keeps around the
# first one's uuid (a host's own providers in several slots make each tree's distinct).
_MOST_REMEMBERED = 64


def _picked_template(repr_of, slots, shape, names):
    """The text of a candidate of ``shape`` (each slot's provider by its rank in id order)
    with ``{rank}`` format fields for the uuids (a uuid, class name or suffix has no brace
    or ``<``: the placeholders are found and the JSON's braces doubled safely)."""
    placeholders = {rank: f"<provider {rank}>" for rank in set(shape)}
    candidate = engine.picked_candidate(slots, shape)
    text = orjson.dumps(repr_of(candidate, placeholders, names)).decode()
    text = text.replace("{", "{{").replace("}", "}}")
    for rank, placeholder in placeholders.items():
        text = text.replace(placeholder, f"{{{rank}}}")
    return text


# Stands for the provider's uuid in the text of a one-provider candidate (see _alone_text):
# no class name, suffix or key of the JSON can hold it.
_UUID_PLACEHOLDER = "<provider uuid>"


def _alone_text(found, version):
    """The JSON text of a candidate given as its provider's id, at ``version``, split where
    that provider's uuid goes: the dict :func:`allocation_requests_repr` builds for any
    other candidate, encoded by orjson as the whole answer is (a uuid needs no escaping)."""
    uuid = _UUID_PLACEHOLDER
    resources = {found.class_names[class_id]: amount for class_id, amount in found.alone_amounts}
    if version < (1, 12):
        alone = {"allocations": [{"resource_provider": {"uuid": uuid}, "resources": resources}]}
    else:
        alone = {"allocations": {uuid: {"resources": resources}}}
        if version >= (1, 34):
            alone["mappings"] = {suffix: [uuid] for suffix in found.alone_suffixes}
    return orjson.dumps(alone).decode().split(uuid)


def _with_mappings(candidate, uuids, names):
    """A candidate (a Candidate) as ``allocation_requests`` lists it from 1.34."""
    allocations, mappings = candidate
    return {
        "allocations": _allocations_repr(allocations, uuids, names),
        "mappings": {suffix: [uuids[p] for p in ps] for suffix, ps in mappings},
    }


def _allocations_repr(allocations, uuids, names):
    """``{provider uuid: {"resources": {class name: amount}}}`` of one candidate's
    allocations (in provider order: a provider's classes follow each other)."""
    by_provider = {}
    last = None
    for (provider_id, class_id), amount in allocations:
        if provider_id != last:
            last = provider_id
            resources = {}
            by_provider[uuids[provider_id]] = {"resources": resources}
        resources[names[class_id]] = amount
    return by_provider


def provider_summaries_repr(summaries, version, requested):
    """The ``provider_summaries`` dict, keyed by provider uuid."""
    found = {}
    with_traits = version >= (1, 17)
    with_tree = version >= (1, 29)
    all_classes = version >= (1, 27)
    for uuid, parent_uuid, root_uuid, resources, traits in summaries:
        if not all_classes:
            resources = {name: value for name, value in resources.items() if name in requested}
        data = {"resources": resources}
        if with_traits:
            data["traits"] = traits
        if with_tree:
            data["parent_provider_uuid"] = parent_uuid
            data["root_provider_uuid"] = root_uuid
        found[uuid] = data
    return found


@tolerates_replica_lag()
class AllocationCandidatesView(PlacementView):
    @since("1.10")
    def get(self, request):
        started = time.perf_counter()
        with cyclic_gc_paused():
            response = self._get(request)
        metrics.observe_candidates(time.perf_counter() - started, self.returned)
        return response

    def _get(self, request):
        self.authorize(request, policies.ALLOCATION_CANDIDATES_LIST)
        version = request.microversion
        query = request.GET
        qp.validate_query(query, qp.candidates_query_schema(tuple(version)))
        candidate_request = request_groups.parse_candidate_request(query, version)
        try:
            found = engine.candidates_for_request(candidate_request)
        except request_groups.UnknownResourceClass as exc:
            raise HTTPBadRequest(f"Invalid resource class in resources parameter: {exc}") from None
        # An unknown trait is answered in its own words (UnknownTrait, a domain error).
        self.returned = len(found.candidates)
        return self.respond_encoded(
            request,
            {
                "allocation_requests": allocation_requests_repr(found, version),
                "provider_summaries": provider_summaries_repr(
                    found.provider_summaries, version, found.requested_classes
                ),
            },
        )
