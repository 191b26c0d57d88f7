"""POST /allocations (1.13+): several consumers written atomically."""

import pytest

from allocations.models import Consumer
from tests.conftest import new_uuid
from tests.factories import make_allocation, make_consumer, make_provider

from .helpers import body, generation, snapshot

pytestmark = pytest.mark.django_db


@pytest.fixture
def rp():
    return make_provider("cn1", inventories={"VCPU": 8, "MEMORY_MB": 1024})


def test_post_writes_several_consumers(api, rp):
    a, b = new_uuid(), new_uuid()
    r = api.post(
        "/allocations",
        {a: body({rp.uuid: {"VCPU": 2}}), b: body({rp.uuid: {"VCPU": 3, "MEMORY_MB": 10}})},
    )
    assert r.status == 204
    usages = api.get(f"/resource_providers/{rp.uuid}/usages").json["usages"]
    assert usages == {"VCPU": 5, "MEMORY_MB": 10}


def test_post_bumps_each_provider_once(api, rp):
    before = generation(rp)
    api.post(
        "/allocations",
        {new_uuid(): body({rp.uuid: {"VCPU": 1}}), new_uuid(): body({rp.uuid: {"VCPU": 1}})},
    )
    assert generation(rp) == before + 1


def test_post_moves_allocation_to_a_migration_consumer(api, rp):
    dest = make_provider("cn2", inventories={"VCPU": 8})
    instance = make_consumer(consumer_type="INSTANCE")
    make_allocation(rp, instance, {"VCPU": 4})
    migration = new_uuid()
    r = api.post(
        "/allocations",
        {
            migration: body({rp.uuid: {"VCPU": 4}}, consumer_type="MIGRATION"),
            str(instance.uuid): body({dest.uuid: {"VCPU": 4}}, generation=1),
        },
    )
    assert r.status == 204
    assert list(api.get(f"/allocations/{migration}").json["allocations"]) == [str(rp.uuid)]
    assert list(api.get(f"/allocations/{instance.uuid}").json["allocations"]) == [str(dest.uuid)]


def test_post_sums_consumers_against_capacity(api, rp):
    before = snapshot()
    r = api.post(
        "/allocations",
        {new_uuid(): body({rp.uuid: {"VCPU": 5}}), new_uuid(): body({rp.uuid: {"VCPU": 5}})},
    )
    assert r.status == 409
    assert "would exceed the capacity" in r.error["detail"]
    assert snapshot() == before


def test_post_with_empty_allocations_removes_them(api, rp):
    consumer = make_consumer()
    make_allocation(rp, consumer, {"VCPU": 1})
    before = generation(rp)
    r = api.post("/allocations", {str(consumer.uuid): body({}, generation=1)})
    assert r.status == 204
    assert not Consumer.objects.filter(pk=consumer.pk).exists()
    assert generation(rp) == before + 1


def test_post_empty_allocations_accepted_at_1_13(api_at, rp):
    consumer = make_consumer()
    make_allocation(rp, consumer, {"VCPU": 1})
    data = {str(consumer.uuid): {"allocations": {}, "project_id": "p", "user_id": "u"}}
    assert api_at("1.13").post("/allocations", data).status == 204


def test_post_is_all_or_nothing_on_consumer_generation_conflict(api, rp):
    existing = make_consumer(generation=2)
    make_allocation(rp, existing, {"VCPU": 1})
    before = snapshot()
    r = api.post(
        "/allocations",
        {
            new_uuid(): body({rp.uuid: {"VCPU": 1}}, project="brand-new"),
            str(existing.uuid): body({rp.uuid: {"VCPU": 2}}, generation=1),
        },
    )
    assert r.status == 409
    assert r.error_code == "placement.concurrent_update"
    assert snapshot() == before


def test_post_unknown_provider_is_400_and_writes_nothing(api, rp):
    before = snapshot()
    missing = new_uuid()
    r = api.post(
        "/allocations",
        {new_uuid(): body({rp.uuid: {"VCPU": 1}}), new_uuid(): body({missing: {"VCPU": 1}})},
    )
    assert r.status == 400
    assert f"Allocation for resource provider '{missing}' that does not exist." in r.error["detail"]
    assert snapshot() == before


def test_post_unknown_resource_class_is_400(api, rp):
    r = api.post("/allocations", {new_uuid(): body({rp.uuid: {"CUSTOM_X": 1}})})
    assert r.status == 400
    assert "Unable to allocate inventory No such resource class CUSTOM_X." in r.error["detail"]


def test_post_does_not_exist_before_1_13(api_at, rp):
    r = api_at("1.12").post("/allocations", {new_uuid(): body({rp.uuid: {"VCPU": 1}})})
    assert r.status == 404


def test_post_consumer_generation_required_from_1_28(api_at, rp):
    data = {
        new_uuid(): {
            "allocations": {str(rp.uuid): {"resources": {"VCPU": 1}}},
            "project_id": "p",
            "user_id": "u",
        }
    }
    assert api_at("1.28").post("/allocations", data).status == 400
    assert api_at("1.27").post("/allocations", data).status == 204


@pytest.mark.parametrize("payload", [{}, [], {"not-a-uuid": {}}, {"x": 1}])
def test_post_malformed_bodies_are_400(api, payload):
    r = api.post("/allocations", payload)
    assert r.status == 400


def test_post_malformed_consumer_uuid_is_400(api, rp):
    r = api.post("/allocations", {"-" * 36: body({rp.uuid: {"VCPU": 1}})})
    assert r.status == 400
    assert "Malformed consumer_uuid" in r.error["detail"]


def test_get_on_allocations_collection_is_405(api):
    assert api.get("/allocations").status == 405


def test_post_needs_admin_under_legacy_policy(api_at, rp):
    r = api_at("latest", token="alice:proj").post(
        "/allocations", {new_uuid(): body({rp.uuid: {"VCPU": 1}})}
    )
    assert r.status == 403
