"""same_subtree while combining: ``GET /allocation_candidates`` keeps exactly the candidates
where, for each constraint, one provider of its groups is an ancestor (or self) of the
others, in the order the request without the constraint lists them.

Property test (seeded, bounded): on random small clouds (two or three trees one to three levels deep, two or
three children a level, VCPU, MEMORY_MB and SRIOV_NET_VF on random providers, some of them
used, traits) and random requests (two to four granular groups, one or two constraints over
them, overlapping sometimes, group_policy none or isolate, sometimes an unsuffixed group or a
class asked by two groups), the answer with the constraints is the answer without them
filtered by the rule (the same order), and a tree's options tried one by one against a
constraint or looked up from each ancestor (scheduling.candidates' FEW_SUBTREE_OPTIONS) give
the same bytes. Runs on whichever database the suite runs on (PostgreSQL and SQLite both).
"""

import random

import pytest

from scheduling import candidates as engine
from tests.factories import make_allocation, make_consumer, make_provider, trait

pytestmark = pytest.mark.django_db

SEEDS = range(24)
REQUESTS_PER_CLOUD = 6
SUFFIXES = ["_A", "_B", "_C", "_D"]
GROUPS = ["VCPU:1", "VCPU:1,MEMORY_MB:256", "MEMORY_MB:256", "SRIOV_NET_VF:1"]


def _inventories(rng):
    inventories = {}
    for name, totals in (("VCPU", [1, 2, 4]), ("MEMORY_MB", [256, 1024]), ("SRIOV_NET_VF", [1, 2])):
        if rng.random() < 0.45:
            inventories[name] = rng.choice(totals)
    return inventories


def _provider(rng, parent):
    inventories = _inventories(rng)
    provider = make_provider(
        parent=parent,
        inventories=inventories,
        traits=["CUSTOM_X"] if rng.random() < 0.3 else [],
    )
    if inventories and rng.random() < 0.2:
        taken = {name: rng.randint(1, total) for name, total in inventories.items()}
        make_allocation(provider, make_consumer(), taken)
    return provider


def _tree(rng, parent, depth):
    for _child in range(rng.randint(2, 3)):
        child = _provider(rng, parent)
        if depth > 1 and rng.random() < 0.5:
            _tree(rng, child, depth - 1)


def _cloud(rng):
    trait("CUSTOM_X")
    for _index in range(rng.randint(2, 3)):
        _tree(rng, _provider(rng, None), rng.randint(1, 3))


def _constraints(rng, suffixes):
    """One or two same_subtree constraints of two or more of ``suffixes``."""
    constraints = []
    for _index in range(rng.choice([1, 1, 2])):
        constraints.append(sorted(rng.sample(suffixes, rng.randint(2, len(suffixes)))))
    return constraints


def _request(rng):
    """``(query without same_subtree, [constraints as lists of suffixes])``."""
    suffixes = SUFFIXES[: rng.choice([2, 2, 3, 3, 4])]
    params = [f"resources{suffix}={rng.choice(GROUPS)}" for suffix in suffixes]
    if rng.random() < 0.2:
        params.append(f"required{rng.choice(suffixes)}=CUSTOM_X")
    if len(suffixes) < 4 and rng.random() < 0.25:
        params.insert(0, f"resources={rng.choice(['VCPU:1', 'MEMORY_MB:256'])}")
    params.append(f"group_policy={rng.choice(['none', 'isolate'])}")
    return "&".join(params), _constraints(rng, suffixes)


def _with(query, constraints):
    return query + "".join(f"&same_subtree={','.join(c)}" for c in constraints)


def _keeps(request, constraints, parent_of):
    """Whether a candidate's mappings meet every constraint (a provider of the constraint's
    groups is an ancestor or self of all of them)."""
    mappings = request["mappings"]

    def lineage(uuid):
        chain = set()
        while uuid is not None:
            chain.add(uuid)
            uuid = parent_of[uuid]
        return chain

    for constraint in constraints:
        providers = {p for suffix in constraint for p in mappings[suffix]}
        if not any(all(top in lineage(p) for p in providers) for top in providers):
            return False
    return True


@pytest.mark.parametrize("seed", SEEDS)
def test_same_subtree_is_the_unconstrained_answer_filtered(api, settings, monkeypatch, seed):
    rng = random.Random(seed)
    settings.PLACEMENT_RANDOMIZE_ALLOCATION_CANDIDATES = False
    settings.PLACEMENT_MAX_ALLOCATION_CANDIDATES = -1
    _cloud(rng)
    for _ in range(REQUESTS_PER_CLOUD):
        query, constraints = _request(rng)
        unconstrained = api.get(f"/allocation_candidates?{query}")
        assert unconstrained.status == 200, (seed, query, unconstrained)
        summaries = unconstrained.json["provider_summaries"]
        parent_of = {uuid: s["parent_provider_uuid"] for uuid, s in summaries.items()}
        expected = [
            r
            for r in unconstrained.json["allocation_requests"]
            if _keeps(r, constraints, parent_of)
        ]
        url = f"/allocation_candidates?{_with(query, constraints)}"
        answers = []
        for few in (0, 1, 1000):  # looked up from ancestors, mixed, tried one by one
            monkeypatch.setattr(engine, "FEW_SUBTREE_OPTIONS", few)
            answers.append(api.get(url))
        constrained = answers[0]
        assert constrained.status == 200, (seed, url, constrained)
        assert constrained.json["allocation_requests"] == expected, (seed, url)
        for other in answers[1:]:
            assert other.content == constrained.content, (seed, url)
