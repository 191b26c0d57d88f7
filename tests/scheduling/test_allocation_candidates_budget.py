"""GET /allocation_candidates: a wide tree cannot hold a worker (pruning and a work budget)."""

import logging
import uuid

import pytest

from providers.models import Inventory
from tests.factories import make_provider

ROOT = str(uuid.UUID(int=200))
SAME_SUBTREE = (
    f"resources_A=VCPU:1&in_tree_A={ROOT}&resources_B=VCPU:1&in_tree_B={ROOT}"
    f"&resources_C=VCPU:1&in_tree_C={ROOT}&same_subtree=_A,_B,_C&group_policy=none"
)


@pytest.fixture
def wide_root(db):
    """A root without inventory and 200 children with VCPU 8 each."""
    root = make_provider("wide-root", uuid=ROOT)
    return [make_provider(parent=root, inventories={"VCPU": 8}) for _ in range(200)]


def _cut_warnings(caplog):
    return [r for r in caplog.records if r.name == "placement.candidates" and "cut" in r.message]


def test_same_subtree_on_a_wide_tree_is_pruned_while_combining(api, wide_root, settings, caplog):
    # 200 ** 3 = 8,000,000 combinations exist; pruning as each group is added examines about
    # 3 * 200 of them (for each child taken by _A, _B and _C can only take the same child). A
    # budget far below the full product proves it, whatever the machine's speed.
    settings.PLACEMENT_ALLOCATION_CANDIDATES_MAX_EXAMINED = 1_000
    settings.PLACEMENT_ALLOCATION_CANDIDATES_TIME_BUDGET = -1
    with caplog.at_level(logging.WARNING, logger="placement.candidates"):
        response = api.get(f"/allocation_candidates?{SAME_SUBTREE}")
    assert response.status == 200
    requests = response.json["allocation_requests"]
    assert len(requests) == 200
    child_uuids = {str(child.uuid) for child in wide_root}
    for request in requests:
        # Every candidate puts the three groups on one child (siblings share no subtree).
        (provider,) = request["allocations"]
        assert provider in child_uuids
        assert request["allocations"][provider]["resources"] == {"VCPU": 3}
        assert request["mappings"] == {"_A": [provider], "_B": [provider], "_C": [provider]}
    assert {next(iter(r["allocations"])) for r in requests} == child_uuids
    assert not _cut_warnings(caplog)


def test_same_subtree_with_a_common_ancestor_among_the_groups_is_kept(api, db):
    # Pruning must not drop a partial combination that a later group completes: _A and _B on
    # two sibling children, _C on their parent (an ancestor of both).
    root = make_provider("root", inventories={"DISK_GB": 100})
    children = [make_provider(parent=root, inventories={"VCPU": 1}) for _ in range(2)]
    response = api.get(
        "/allocation_candidates?resources_A=VCPU:1&resources_B=VCPU:1&resources_C=DISK_GB:1"
        "&same_subtree=_A,_B,_C&group_policy=none"
    )
    assert response.status == 200
    mappings = [r["mappings"] for r in response.json["allocation_requests"]]
    child_a, child_b = (str(c.uuid) for c in children)
    assert {(m["_A"][0], m["_B"][0], m["_C"][0]) for m in mappings} == {
        (child_a, child_b, str(root.uuid)),
        (child_b, child_a, str(root.uuid)),
    }


def test_combination_budget_answers_with_what_was_found_and_logs_the_cut(
    api, wide_root, settings, caplog
):
    # Without same_subtree every combination is valid: 8,000,000 of them, more than the cap.
    settings.PLACEMENT_ALLOCATION_CANDIDATES_MAX_EXAMINED = 1_000
    settings.PLACEMENT_ALLOCATION_CANDIDATES_TIME_BUDGET = -1
    query = "resources_A=VCPU:1&resources_B=VCPU:1&resources_C=VCPU:1&group_policy=none"
    with caplog.at_level(logging.WARNING, logger="placement.candidates"):
        response = api.get(f"/allocation_candidates?{query}")
    assert response.status == 200
    found = len(response.json["allocation_requests"])
    assert 0 < found < 1_000
    (warning,) = _cut_warnings(caplog)
    assert "1000 combinations examined" in warning.getMessage()
    assert f"the {found} found so far" in warning.getMessage()


def test_rejected_combinations_count_against_the_budget(api, wide_root, settings, caplog):
    # same_subtree asks for one child, isolate for three different providers: every
    # combination is rejected (200 tried for _A, each with the one child left for _B), and
    # rejected ones are what the budget must count.
    Inventory.objects.filter(resource_provider__in=wide_root).update(total=1)
    settings.PLACEMENT_ALLOCATION_CANDIDATES_MAX_EXAMINED = 300
    settings.PLACEMENT_ALLOCATION_CANDIDATES_TIME_BUDGET = -1
    query = f"{SAME_SUBTREE}".replace("group_policy=none", "group_policy=isolate")
    with caplog.at_level(logging.WARNING, logger="placement.candidates"):
        response = api.get(f"/allocation_candidates?{query}")
    assert response.status == 200
    assert response.json["allocation_requests"] == []
    assert len(_cut_warnings(caplog)) == 1


def test_time_budget_answers_with_what_was_found_and_logs_the_cut(api, wide_root, settings, caplog):
    settings.PLACEMENT_ALLOCATION_CANDIDATES_MAX_EXAMINED = -1
    settings.PLACEMENT_ALLOCATION_CANDIDATES_TIME_BUDGET = 0  # spent at the first look
    settings.PLACEMENT_MAX_ALLOCATION_CANDIDATES = -1
    query = "resources_A=VCPU:1&resources_B=VCPU:1&resources_C=VCPU:1&group_policy=none"
    with caplog.at_level(logging.WARNING, logger="placement.candidates"):
        response = api.get(f"/allocation_candidates?{query}")
    assert response.status == 200
    assert len(response.json["allocation_requests"]) < 1024
    (warning,) = _cut_warnings(caplog)
    assert "time budget spent" in warning.getMessage()
