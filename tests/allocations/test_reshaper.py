"""POST /reshaper (1.30+): inventories and allocations of a tree replaced atomically."""

import pytest

from tests.conftest import new_uuid
from tests.factories import make_allocation, make_consumer, make_provider

from .helpers import generation, snapshot

pytestmark = pytest.mark.django_db


@pytest.fixture
def tree():
    """A compute node with VGPU inventory in use, and an empty child to move it to."""
    root = make_provider("cn1", inventories={"VCPU": 8, "VGPU": 4})
    child = make_provider("cn1-gpu", parent=root)
    instance = make_consumer(project="p", user="u", consumer_type="INSTANCE", generation=1)
    make_allocation(root, instance, {"VCPU": 2, "VGPU": 1})
    return root, child, instance


def consumer_entry(allocations, generation=1, consumer_type=None):
    entry = {
        "allocations": {str(rp): {"resources": res} for rp, res in allocations.items()},
        "project_id": "p",
        "user_id": "u",
        "consumer_generation": generation,
    }
    if consumer_type:
        entry["consumer_type"] = consumer_type
    return entry


def move_vgpu_body(root, child, instance, *, root_gen=None, child_gen=None, consumer_type=None):
    return {
        "inventories": {
            str(root.uuid): {
                "resource_provider_generation": root.generation if root_gen is None else root_gen,
                "inventories": {"VCPU": {"total": 8}},
            },
            str(child.uuid): {
                "resource_provider_generation": child.generation
                if child_gen is None
                else child_gen,
                "inventories": {"VGPU": {"total": 4}},
            },
        },
        "allocations": {
            str(instance.uuid): consumer_entry(
                {root.uuid: {"VCPU": 2}, child.uuid: {"VGPU": 1}}, consumer_type=consumer_type
            )
        },
    }


def test_reshape_moves_inventory_and_allocations_to_a_child(api_at, tree):
    root, child, instance = tree
    r = api_at("1.30").post("/reshaper", move_vgpu_body(root, child, instance))
    assert r.status == 204
    assert api_at("1.30").get(f"/resource_providers/{root.uuid}/usages").json["usages"] == {
        "VCPU": 2
    }
    assert api_at("1.30").get(f"/resource_providers/{child.uuid}/usages").json["usages"] == {
        "VGPU": 1
    }
    got = api_at("1.30").get(f"/allocations/{instance.uuid}").json
    assert got["consumer_generation"] == 2
    assert got["allocations"][str(child.uuid)]["resources"] == {"VGPU": 1}


def test_reshape_bumps_every_provider_generation(api_at, tree):
    root, child, instance = tree
    before = generation(root), generation(child)
    api_at("1.30").post("/reshaper", move_vgpu_body(root, child, instance))
    assert generation(root) > before[0]
    assert generation(child) > before[1]


def test_reshape_with_stale_provider_generation_is_409_and_changes_nothing(api_at, tree):
    root, child, instance = tree
    before = snapshot()
    r = api_at("1.30").post("/reshaper", move_vgpu_body(root, child, instance, child_gen=7))
    assert r.status == 409
    assert r.error_code == "placement.concurrent_update"
    assert f"resource provider generation conflict for provider {child.uuid}" in r.error["detail"]
    assert snapshot() == before


def test_reshape_with_stale_consumer_generation_is_409_and_changes_nothing(api_at, tree):
    root, child, instance = tree
    data = move_vgpu_body(root, child, instance)
    data["allocations"][str(instance.uuid)]["consumer_generation"] = 0
    before = snapshot()
    r = api_at("1.30").post("/reshaper", data)
    assert r.status == 409
    assert "consumer generation conflict" in r.error["detail"]
    assert snapshot() == before


def test_reshape_over_capacity_is_409_and_changes_nothing(api_at, tree):
    root, child, instance = tree
    data = move_vgpu_body(root, child, instance)
    data["inventories"][str(child.uuid)]["inventories"] = {"VGPU": {"total": 4, "reserved": 4}}
    before = snapshot()
    r = api_at("1.30").post("/reshaper", data)
    assert r.status == 409
    assert "Unable to allocate inventory" in r.error["detail"]
    assert snapshot() == before


def test_reshape_removing_inventory_others_still_use_is_409_inventory_inuse(api_at, tree):
    root, child, instance = tree
    bystander = make_consumer()
    make_allocation(root, bystander, {"VGPU": 1})
    before = snapshot()
    r = api_at("1.30").post("/reshaper", move_vgpu_body(root, child, instance))
    assert r.status == 409
    assert r.error_code == "placement.inventory.inuse"
    assert snapshot() == before


def test_reshape_unknown_inventory_provider_is_400(api_at, tree):
    root, child, instance = tree
    missing = new_uuid()
    data = move_vgpu_body(root, child, instance)
    data["inventories"][missing] = {"resource_provider_generation": 0, "inventories": {}}
    r = api_at("1.30").post("/reshaper", data)
    assert r.status == 400
    assert r.error_code == "placement.resource_provider.not_found"
    assert f"Resource provider {missing} in inventories not found" in r.error["detail"]


def test_reshape_unknown_resource_class_in_allocations_is_400(api_at, tree):
    root, child, instance = tree
    data = move_vgpu_body(root, child, instance)
    data["allocations"][str(instance.uuid)]["allocations"][str(child.uuid)]["resources"] = {
        "CUSTOM_NONE": 1
    }
    r = api_at("1.30").post("/reshaper", data)
    assert r.status == 400
    assert "malformed reshaper data: No such resource class CUSTOM_NONE." in r.error["detail"]


def test_reshape_with_invalid_inventory_record_is_400(api_at, tree):
    root, child, instance = tree
    data = move_vgpu_body(root, child, instance)
    data["inventories"][str(child.uuid)]["inventories"] = {"VGPU": {"total": 0}}
    before = snapshot()
    assert api_at("1.30").post("/reshaper", data).status == 400
    assert snapshot() == before


def test_reshape_with_no_allocations_only_replaces_inventories(api_at):
    rp = make_provider(inventories={"VCPU": 8})
    data = {
        "inventories": {
            str(rp.uuid): {"resource_provider_generation": rp.generation, "inventories": {}}
        },
        "allocations": {},
    }
    assert api_at("1.30").post("/reshaper", data).status == 204
    assert api_at("1.30").get(f"/resource_providers/{rp.uuid}/usages").json["usages"] == {}


def test_reshaper_does_not_exist_before_1_30(api_at, tree):
    root, child, instance = tree
    assert api_at("1.29").post("/reshaper", move_vgpu_body(root, child, instance)).status == 404


def test_reshaper_needs_inventories(api_at):
    r = api_at("1.30").post("/reshaper", {"inventories": {}, "allocations": {}})
    assert r.status == 400
    assert "JSON does not validate" in r.error["detail"]


def test_reshaper_consumer_type_from_1_38(api_at, tree):
    root, child, instance = tree
    without = move_vgpu_body(root, child, instance)
    assert api_at("1.38").post("/reshaper", without).status == 400
    data = move_vgpu_body(root, child, instance, consumer_type="INSTANCE")
    assert api_at("1.37").post("/reshaper", data).status == 400
    assert api_at("1.38").post("/reshaper", data).status == 204


def test_reshaper_needs_admin_under_legacy_policy(api_at, tree):
    root, child, instance = tree
    r = api_at("1.30", token="alice:p").post("/reshaper", move_vgpu_body(root, child, instance))
    assert r.status == 403


# --- generations and order as Placement's reshape --------------------------------------


def test_reshape_bumps_generations_as_placement_does(api_at, tree):
    """Interim inventory (when non-empty), allocations, final inventory: one bump each."""
    root, child, instance = tree
    before = generation(root), generation(child)
    assert api_at("1.30").post("/reshaper", move_vgpu_body(root, child, instance)).status == 204
    assert (generation(root), generation(child)) == (before[0] + 3, before[1] + 3)


def test_emptied_provider_is_bumped_for_the_allocations_it_loses(api_at, tree):
    """A provider given no inventory skips the interim step but is bumped when a consumer's
    allocations on it are removed, then by its final (empty) inventory."""
    root, child, instance = tree
    api = api_at("1.30")
    api.post("/reshaper", move_vgpu_body(root, child, instance))
    root_gen, child_gen = generation(root), generation(child)
    body = {
        "inventories": {
            str(root.uuid): {
                "resource_provider_generation": root_gen,
                "inventories": {"VCPU": {"total": 8}, "VGPU": {"total": 4}},
            },
            str(child.uuid): {"resource_provider_generation": child_gen, "inventories": {}},
        },
        "allocations": {
            str(instance.uuid): consumer_entry({root.uuid: {"VCPU": 2, "VGPU": 1}}, generation=2)
        },
    }
    assert api.post("/reshaper", body).status == 204
    assert generation(root) == root_gen + 3
    assert generation(child) == child_gen + 1  # only its final, empty inventory
    other = make_consumer(project="p", user="u", generation=1)
    make_allocation(root, other, {"VCPU": 1})
    root_gen = generation(root)
    body = {
        "inventories": {
            str(root.uuid): {
                "resource_provider_generation": root_gen,
                "inventories": {"VCPU": {"total": 8}, "VGPU": {"total": 4}},
            }
        },
        "allocations": {str(other.uuid): consumer_entry({}, generation=1)},
    }
    assert api.post("/reshaper", body).status == 204
    assert generation(root) == root_gen + 3  # interim, the removed allocation, final


def test_shrinking_below_usage_is_refused_as_an_allocation_failure(api_at, tree):
    """The interim inventory keeps what is in use, so the new allocation is what fails."""
    root, child, instance = tree
    body = {
        "inventories": {
            str(root.uuid): {
                "resource_provider_generation": generation(root),
                "inventories": {"VCPU": {"total": 1}},
            }
        },
        "allocations": {str(new_uuid()): consumer_entry({root.uuid: {"VCPU": 1}}, generation=None)},
    }
    before = snapshot()
    r = api_at("1.30").post("/reshaper", body)
    assert r.status == 409
    assert "Unable to allocate inventory" in r.error["detail"]
    assert snapshot() == before


def test_removing_a_class_still_in_use_is_inventory_in_use(api_at, tree):
    root, child, instance = tree
    body = {
        "inventories": {
            str(root.uuid): {
                "resource_provider_generation": generation(root),
                "inventories": {"VCPU": {"total": 8}},
            }
        },
        "allocations": {},
    }
    r = api_at("1.30").post("/reshaper", body)
    assert r.status == 409
    assert r.error_code == "placement.inventory.inuse"
