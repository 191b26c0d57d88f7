"""PUT, GET and DELETE /allocations/{consumer_uuid} through the HTTP stack."""

import pytest

from allocations.models import Consumer
from tests.conftest import new_uuid
from tests.factories import make_allocation, make_consumer, make_provider

from .helpers import body, generation, snapshot

pytestmark = pytest.mark.django_db


@pytest.fixture
def rp():
    return make_provider(
        "cn1",
        inventories={"VCPU": 8, "MEMORY_MB": 4096, "DISK_GB": {"total": 100, "step_size": 10}},
    )


# --- writing -------------------------------------------------------------------


def test_put_creates_allocations_and_returns_204(api, rp):
    consumer = new_uuid()
    r = api.put(f"/allocations/{consumer}", body({rp.uuid: {"VCPU": 2, "MEMORY_MB": 512}}))
    assert r.status == 204
    assert r.content == b""
    got = api.get(f"/allocations/{consumer}").json
    assert got["allocations"][str(rp.uuid)]["resources"] == {"VCPU": 2, "MEMORY_MB": 512}


def test_put_creates_consumer_project_and_user_on_first_use(api, rp):
    consumer = new_uuid()
    api.put(f"/allocations/{consumer}", body({rp.uuid: {"VCPU": 1}}, project="p9", user="u9"))
    created = Consumer.objects.select_related("project", "user").get(uuid=consumer)
    assert (created.project.external_id, created.user.external_id) == ("p9", "u9")
    assert created.generation == 1


def test_put_bumps_provider_generation(api, rp):
    before = generation(rp)
    api.put(f"/allocations/{new_uuid()}", body({rp.uuid: {"VCPU": 1}}))
    assert generation(rp) == before + 1


def test_put_replaces_previous_allocations_of_the_consumer(api, rp):
    other = make_provider("cn2", inventories={"VCPU": 4})
    consumer = new_uuid()
    api.put(f"/allocations/{consumer}", body({rp.uuid: {"VCPU": 8}}))
    r = api.put(f"/allocations/{consumer}", body({other.uuid: {"VCPU": 4}}, generation=1))
    assert r.status == 204
    got = api.get(f"/allocations/{consumer}").json
    assert list(got["allocations"]) == [str(other.uuid)]
    assert api.get(f"/resource_providers/{rp.uuid}/usages").json["usages"]["VCPU"] == 0


def test_replacing_own_allocation_counts_only_the_new_amount(api, rp):
    consumer = new_uuid()
    api.put(f"/allocations/{consumer}", body({rp.uuid: {"VCPU": 6}}))
    r = api.put(f"/allocations/{consumer}", body({rp.uuid: {"VCPU": 8}}, generation=1))
    assert r.status == 204


def test_put_updates_project_user_and_type_of_existing_consumer(api, rp):
    consumer = new_uuid()
    api.put(f"/allocations/{consumer}", body({rp.uuid: {"VCPU": 1}}))
    api.put(
        f"/allocations/{consumer}",
        body(
            {rp.uuid: {"VCPU": 1}}, generation=1, project="p2", user="u2", consumer_type="MIGRATION"
        ),
    )
    got = api.get(f"/allocations/{consumer}").json
    assert (got["project_id"], got["user_id"], got["consumer_type"]) == ("p2", "u2", "MIGRATION")
    assert got["consumer_generation"] == 2


def test_empty_allocations_remove_them_and_delete_the_consumer_from_1_28(api, rp):
    consumer = new_uuid()
    api.put(f"/allocations/{consumer}", body({rp.uuid: {"VCPU": 1}}))
    before = generation(rp)
    r = api.put(f"/allocations/{consumer}", body({}, generation=1))
    assert r.status == 204
    assert api.get(f"/allocations/{consumer}").json == {"allocations": {}}
    assert not Consumer.objects.filter(uuid=consumer).exists()
    # The provider whose allocations were removed changes generation, as in Placement.
    assert generation(rp) == before + 1


def test_empty_allocations_are_refused_before_1_28(api_at, rp):
    r = api_at("1.27").put(
        f"/allocations/{new_uuid()}",
        {"allocations": {}, "project_id": "p", "user_id": "u"},
    )
    assert r.status == 400
    assert "JSON does not validate" in r.error["detail"]


def test_mappings_are_accepted_from_1_34(api_at, rp):
    data = body({rp.uuid: {"VCPU": 1}})
    del data["consumer_type"]
    data["mappings"] = {"_CPU": [str(rp.uuid)]}
    assert api_at("1.34").put(f"/allocations/{new_uuid()}", data).status == 204
    assert api_at("1.33").put(f"/allocations/{new_uuid()}", data).status == 400


def test_empty_mappings_are_refused(api_at, rp):
    data = body({rp.uuid: {"VCPU": 1}})
    del data["consumer_type"]
    data["mappings"] = {}
    before = snapshot()
    r = api_at("1.34").put(f"/allocations/{new_uuid()}", data)
    assert r.status == 400
    assert "JSON does not validate: {}" in r.error["detail"]
    assert snapshot() == before


def test_consumer_type_is_required_from_1_38(api, rp):
    data = body({rp.uuid: {"VCPU": 1}})
    del data["consumer_type"]
    r = api.put(f"/allocations/{new_uuid()}", data)
    assert r.status == 400
    assert "'consumer_type' is a required property" in r.error["detail"]


def test_consumer_type_is_refused_before_1_38(api_at, rp):
    data = body({rp.uuid: {"VCPU": 1}})
    assert api_at("1.37").put(f"/allocations/{new_uuid()}", data).status == 400


# --- microversion shapes of the body ---------------------------------------------


def test_list_body_before_1_12(api_at, rp):
    consumer = new_uuid()
    data = {
        "allocations": [{"resource_provider": {"uuid": str(rp.uuid)}, "resources": {"VCPU": 2}}],
        "project_id": "p",
        "user_id": "u",
    }
    assert api_at("1.11").put(f"/allocations/{consumer}", data).status == 204
    assert api_at("1.12").put(f"/allocations/{consumer}", data).status == 400


def test_project_and_user_are_required_from_1_8(api_at, rp):
    data = {
        "allocations": [{"resource_provider": {"uuid": str(rp.uuid)}, "resources": {"VCPU": 1}}]
    }
    r = api_at("1.8").put(f"/allocations/{new_uuid()}", data)
    assert r.status == 400
    assert "'project_id' is a required property" in r.error["detail"]


def test_before_1_8_the_incomplete_consumer_project_owns_allocations(api_at, rp):
    consumer = new_uuid()
    data = {
        "allocations": [{"resource_provider": {"uuid": str(rp.uuid)}, "resources": {"VCPU": 1}}]
    }
    assert api_at("1.7").put(f"/allocations/{consumer}", data).status == 204
    got = api_at("1.12").get(f"/allocations/{consumer}").json
    assert got["project_id"] == "00000000-0000-0000-0000-000000000000"
    assert got["user_id"] == "00000000-0000-0000-0000-000000000000"
    data["project_id"] = "p"
    assert api_at("1.7").put(f"/allocations/{consumer}", data).status == 400


def test_dict_body_with_generation_echoed_from_get_is_accepted(api_at, rp):
    data = {
        "allocations": {str(rp.uuid): {"generation": 99, "resources": {"VCPU": 1}}},
        "project_id": "p",
        "user_id": "u",
    }
    assert api_at("1.12").put(f"/allocations/{new_uuid()}", data).status == 204


def test_consumer_generation_required_from_1_28(api_at, rp):
    data = {
        "allocations": {str(rp.uuid): {"resources": {"VCPU": 1}}},
        "project_id": "p",
        "user_id": "u",
    }
    assert api_at("1.28").put(f"/allocations/{new_uuid()}", data).status == 400
    assert api_at("1.27").put(f"/allocations/{new_uuid()}", data).status == 204


# --- consumer generations ---------------------------------------------------------


def test_stale_consumer_generation_is_409_concurrent_update(api, rp):
    consumer = new_uuid()
    api.put(f"/allocations/{consumer}", body({rp.uuid: {"VCPU": 1}}))
    r = api.put(f"/allocations/{consumer}", body({rp.uuid: {"VCPU": 2}}, generation=0))
    assert r.status == 409
    assert r.error_code == "placement.concurrent_update"
    assert "consumer generation conflict - expected 1 but got 0" in r.error["detail"]


def test_null_generation_for_existing_consumer_is_409(api, rp):
    consumer = new_uuid()
    api.put(f"/allocations/{consumer}", body({rp.uuid: {"VCPU": 1}}))
    r = api.put(f"/allocations/{consumer}", body({rp.uuid: {"VCPU": 2}}, generation=None))
    assert r.status == 409
    assert "expected 1 but got None" in r.error["detail"]


def test_generation_for_unknown_consumer_is_409(api, rp):
    r = api.put(f"/allocations/{new_uuid()}", body({rp.uuid: {"VCPU": 1}}, generation=3))
    assert r.status == 409
    assert r.error_code == "placement.concurrent_update"
    assert "expected null but got 3" in r.error["detail"]


def test_generation_is_not_checked_before_1_28(api_at, rp):
    consumer = make_consumer(generation=5)
    data = {
        "allocations": {str(rp.uuid): {"resources": {"VCPU": 1}}},
        "project_id": "p",
        "user_id": "u",
    }
    assert api_at("1.27").put(f"/allocations/{consumer.uuid}", data).status == 204
    consumer.refresh_from_db()
    assert consumer.generation == 6


# --- errors -------------------------------------------------------------------------


def test_unknown_provider_is_400(api, rp):
    missing = new_uuid()
    r = api.put(f"/allocations/{new_uuid()}", body({missing: {"VCPU": 1}}))
    assert r.status == 400
    assert f"Allocation for resource provider '{missing}' that does not exist." in r.error["detail"]


def test_unknown_resource_class_is_400(api, rp):
    consumer = new_uuid()
    r = api.put(f"/allocations/{consumer}", body({rp.uuid: {"CUSTOM_NOPE": 1}}))
    assert r.status == 400
    assert (
        f"Unable to allocate inventory for consumer {consumer}: No such resource class CUSTOM_NOPE."
        in r.error["detail"]
    )


def test_class_not_in_provider_inventory_is_409(api, rp):
    r = api.put(f"/allocations/{new_uuid()}", body({rp.uuid: {"VGPU": 1}}))
    assert r.status == 409
    assert f"Inventory for 'VGPU' on resource provider '{rp.uuid}' invalid." in r.error["detail"]


def test_over_capacity_is_409_naming_the_units_missing(api, rp):
    make_allocation(rp, make_consumer(), {"VCPU": 6})
    r = api.put(f"/allocations/{new_uuid()}", body({rp.uuid: {"VCPU": 4}}))
    assert r.status == 409
    assert r.error_code == "placement.undefined_code"
    detail = r.error["detail"]
    assert f"Unable to create allocation for 'VCPU' on resource provider '{rp.uuid}'" in detail
    assert "The requested amount would exceed the capacity." in detail
    assert "short of VCPU by 2 (only 2 free)" in detail


def test_capacity_respects_reserved_and_allocation_ratio(api):
    rp = make_provider(inventories={"VCPU": {"total": 4, "reserved": 1, "allocation_ratio": 2.0}})
    assert api.put(f"/allocations/{new_uuid()}", body({rp.uuid: {"VCPU": 6}})).status == 204
    assert api.put(f"/allocations/{new_uuid()}", body({rp.uuid: {"VCPU": 1}})).status == 409


@pytest.mark.parametrize(
    "inventory, amount, rule",
    [
        ({"total": 10, "min_unit": 2}, 1, "below min_unit 2"),
        ({"total": 10, "max_unit": 4}, 5, "exceeds max_unit 4"),
        ({"total": 10, "step_size": 3}, 4, "not a multiple of step_size 3"),
    ],
)
def test_min_max_and_step_violations_are_409(api, inventory, amount, rule):
    rp = make_provider(inventories={"VCPU": inventory})
    r = api.put(f"/allocations/{new_uuid()}", body({rp.uuid: {"VCPU": amount}}))
    assert r.status == 409
    assert "would violate inventory constraints" in r.error["detail"]
    assert rule in r.error["detail"]


@pytest.mark.parametrize("amount", [0, -1, 1.5, "2", None, True])
def test_bad_amounts_are_400(api, rp, amount):
    r = api.put(f"/allocations/{new_uuid()}", body({rp.uuid: {"VCPU": amount}}))
    assert r.status == 400
    assert "JSON does not validate" in r.error["detail"]


@pytest.mark.parametrize(
    "mutate",
    [
        lambda b: b.update(allocations=[]),
        lambda b: b.update(extra=1),
        lambda b: b.update(project_id=""),
        lambda b: b.update(user_id="u" * 256),
        lambda b: b.update(consumer_type="lower"),
        lambda b: b.update(consumer_generation="1"),
        lambda b: b["allocations"].update({"not-a-uuid": {"resources": {"VCPU": 1}}}),
        lambda b: b.pop("allocations"),
    ],
)
def test_malformed_bodies_are_400_and_write_nothing(api, rp, mutate):
    before = snapshot()
    data = body({rp.uuid: {"VCPU": 1}})
    mutate(data)
    r = api.put(f"/allocations/{new_uuid()}", data)
    assert r.status == 400
    assert snapshot() == before


def test_malformed_consumer_uuid_is_400(api, rp):
    r = api.put("/allocations/not-a-uuid", body({rp.uuid: {"VCPU": 1}}))
    assert r.status == 400
    assert "Malformed consumer_uuid: not-a-uuid" in r.error["detail"]


def test_provider_uuid_that_only_looks_like_one_is_400_not_500(api, rp):
    fake = "-" * 36
    r = api.put(f"/allocations/{new_uuid()}", body({fake: {"VCPU": 1}}))
    assert r.status == 400


def test_non_json_body_is_415(api, rp):
    r = api.put(f"/allocations/{new_uuid()}", raw="x", content_type="text/plain")
    assert r.status == 415


def test_failed_write_on_second_provider_leaves_everything_unchanged(api, rp):
    small = make_provider("small", inventories={"VCPU": 1})
    consumer = make_consumer()
    make_allocation(rp, consumer, {"VCPU": 2})
    before = snapshot()
    r = api.put(
        f"/allocations/{consumer.uuid}",
        body({rp.uuid: {"VCPU": 4}, small.uuid: {"VCPU": 2}}, generation=1, project="new-p"),
    )
    assert r.status == 409
    assert snapshot() == before


# --- reading ---------------------------------------------------------------------------


def test_get_unknown_consumer_is_empty_200(api):
    r = api.get(f"/allocations/{new_uuid()}")
    assert r.status == 200
    assert r.json == {"allocations": {}}


def test_get_shape_1_0_has_only_allocations(api_at, rp):
    consumer = make_consumer()
    make_allocation(rp, consumer, {"VCPU": 2})
    got = api_at("1.11").get(f"/allocations/{consumer.uuid}").json
    assert got == {
        "allocations": {str(rp.uuid): {"generation": rp.generation, "resources": {"VCPU": 2}}}
    }


def test_get_shape_grows_with_microversion(api_at, rp):
    consumer = make_consumer(project="p1", user="u1", consumer_type="INSTANCE", generation=3)
    make_allocation(rp, consumer, {"VCPU": 2})
    url = f"/allocations/{consumer.uuid}"
    assert set(api_at("1.12").get(url).json) == {"allocations", "project_id", "user_id"}
    assert api_at("1.28").get(url).json["consumer_generation"] == 3
    assert "consumer_type" not in api_at("1.37").get(url).json
    assert api_at("1.38").get(url).json["consumer_type"] == "INSTANCE"


def test_get_consumer_without_type_shows_unknown(api, rp):
    consumer = make_consumer()
    make_allocation(rp, consumer, {"VCPU": 1})
    assert api.get(f"/allocations/{consumer.uuid}").json["consumer_type"] == "unknown"


def test_get_has_last_modified_from_1_15(api_at, rp):
    consumer = make_consumer()
    make_allocation(rp, consumer, {"VCPU": 1})
    assert "Last-Modified" in api_at("1.15").get(f"/allocations/{consumer.uuid}").headers
    assert "Last-Modified" not in api_at("1.14").get(f"/allocations/{consumer.uuid}").headers


def test_get_malformed_consumer_uuid_is_empty_200(api):
    r = api.get("/allocations/not-a-uuid")
    assert (r.status, r.json) == (200, {"allocations": {}})


# --- deleting --------------------------------------------------------------------------


def test_delete_removes_allocations_and_consumer_without_bumping_generation(api, rp):
    consumer = make_consumer()
    make_allocation(rp, consumer, {"VCPU": 2})
    before = generation(rp)
    r = api.delete(f"/allocations/{consumer.uuid}")
    assert r.status == 204
    assert api.get(f"/allocations/{consumer.uuid}").json == {"allocations": {}}
    assert not Consumer.objects.filter(pk=consumer.pk).exists()
    assert generation(rp) == before


def test_delete_unknown_consumer_is_404(api):
    consumer = new_uuid()
    r = api.delete(f"/allocations/{consumer}")
    assert r.status == 404
    assert f"No allocations for consumer '{consumer}'" in r.error["detail"]


def test_delete_malformed_consumer_is_404(api):
    assert api.delete("/allocations/nope").status == 404


def test_allocations_need_admin_under_legacy_policy(api_at, rp):
    client = api_at("latest", token="alice:proj")
    assert client.get(f"/allocations/{new_uuid()}").status == 403
    assert client.put(f"/allocations/{new_uuid()}", body({rp.uuid: {"VCPU": 1}})).status == 403
    assert client.delete(f"/allocations/{new_uuid()}").status == 403
