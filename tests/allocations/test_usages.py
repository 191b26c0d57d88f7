"""Provider allocations, provider usages and GET /usages through the HTTP stack."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.conftest import new_uuid
from tests.factories import make_allocation, make_consumer, make_provider

pytestmark = pytest.mark.django_db


@pytest.fixture
def rp():
    return make_provider("cn1", inventories={"VCPU": 16, "MEMORY_MB": 8192, "DISK_GB": 500})


# --- /resource_providers/{uuid}/allocations ------------------------------------------


def test_provider_allocations_keyed_by_consumer(api_at, rp):
    c1, c2 = make_consumer(generation=4), make_consumer()
    make_allocation(rp, c1, {"VCPU": 2, "MEMORY_MB": 256})
    make_allocation(rp, c2, {"VCPU": 1})
    r = api_at("1.27").get(f"/resource_providers/{rp.uuid}/allocations")
    assert r.status == 200
    assert r.json == {
        "allocations": {
            str(c1.uuid): {"resources": {"VCPU": 2, "MEMORY_MB": 256}},
            str(c2.uuid): {"resources": {"VCPU": 1}},
        },
        "resource_provider_generation": rp.generation,
    }


def test_provider_allocations_show_consumer_generation_from_1_28(api_at, rp):
    consumer = make_consumer(generation=4)
    make_allocation(rp, consumer, {"VCPU": 2})
    got = api_at("1.28").get(f"/resource_providers/{rp.uuid}/allocations").json
    assert got["allocations"][str(consumer.uuid)]["consumer_generation"] == 4


def test_provider_allocations_of_unknown_provider_is_404(api):
    missing = new_uuid()
    r = api.get(f"/resource_providers/{missing}/allocations")
    assert r.status == 404
    assert f"Resource provider '{missing}' not found" in r.error["detail"]
    assert api.get("/resource_providers/nope/allocations").status == 404


def test_provider_allocations_query_count_does_not_grow_with_consumers(api, rp):
    for _ in range(3):
        make_allocation(rp, make_consumer(), {"VCPU": 1})
    with CaptureQueriesContext(connection) as few:
        api.get(f"/resource_providers/{rp.uuid}/allocations")
    for _ in range(10):
        make_allocation(rp, make_consumer(), {"VCPU": 1})
    with CaptureQueriesContext(connection) as many:
        api.get(f"/resource_providers/{rp.uuid}/allocations")
    assert len(many) == len(few)


# --- /resource_providers/{uuid}/usages -------------------------------------------------


def test_provider_usages_list_every_inventory_class(api, rp):
    make_allocation(rp, make_consumer(), {"VCPU": 3})
    make_allocation(rp, make_consumer(), {"VCPU": 2, "DISK_GB": 10})
    r = api.get(f"/resource_providers/{rp.uuid}/usages")
    assert r.status == 200
    assert r.json == {
        "resource_provider_generation": rp.generation,
        "usages": {"VCPU": 5, "MEMORY_MB": 0, "DISK_GB": 10},
    }
    assert "Last-Modified" in r.headers
    assert r.headers["Cache-Control"] == "no-cache"


def test_provider_usages_of_provider_without_inventory_is_empty(api):
    rp = make_provider()
    assert api.get(f"/resource_providers/{rp.uuid}/usages").json["usages"] == {}


def test_provider_usages_of_unknown_provider_is_404(api):
    missing = new_uuid()
    r = api.get(f"/resource_providers/{missing}/usages")
    assert r.status == 404
    assert f"No resource provider with uuid {missing} found" in r.error["detail"]


# --- /usages ---------------------------------------------------------------------------


@pytest.fixture
def project_usage(rp):
    other = make_provider("cn2", inventories={"VCPU": 16})
    vm1 = make_consumer(project="p1", user="u1", consumer_type="INSTANCE")
    vm2 = make_consumer(project="p1", user="u2", consumer_type="INSTANCE")
    mig = make_consumer(project="p1", user="u1", consumer_type="MIGRATION")
    bare = make_consumer(project="p1", user="u1")
    elsewhere = make_consumer(project="p2", user="u1", consumer_type="INSTANCE")
    make_allocation(rp, vm1, {"VCPU": 2, "MEMORY_MB": 512})
    make_allocation(other, vm1, {"VCPU": 1})
    make_allocation(rp, vm2, {"VCPU": 4})
    make_allocation(rp, mig, {"VCPU": 2})
    make_allocation(other, bare, {"VCPU": 1})
    make_allocation(rp, elsewhere, {"VCPU": 8})


def test_usages_sum_a_project(api_at, project_usage):
    r = api_at("1.9").get("/usages?project_id=p1")
    assert r.status == 200
    assert r.json == {"usages": {"VCPU": 10, "MEMORY_MB": 512}}


def test_usages_of_a_project_and_user(api_at, project_usage):
    r = api_at("1.37").get("/usages?project_id=p1&user_id=u1")
    assert r.json == {"usages": {"VCPU": 6, "MEMORY_MB": 512}}


def test_usages_of_unknown_project_are_empty(api_at):
    assert api_at("1.9").get("/usages?project_id=nobody").json == {"usages": {}}


def test_usages_do_not_exist_before_1_9(api_at):
    assert api_at("1.8").get("/usages?project_id=p1").status == 404


def test_usages_require_project_id(api_at):
    r = api_at("1.9").get("/usages")
    assert r.status == 400
    assert (
        "Invalid query string parameters: 'project_id' is a required property"
        in (r.error["detail"])
    )


def test_usages_refuse_unknown_query_parameters(api_at):
    r = api_at("1.9").get("/usages?project_id=p1&color=red")
    assert r.status == 400
    assert "Invalid query string parameters" in r.error["detail"]


def test_consumer_type_query_is_refused_before_1_38(api_at):
    assert api_at("1.37").get("/usages?project_id=p1&consumer_type=INSTANCE").status == 400


def test_usages_per_consumer_type_from_1_38(api, project_usage):
    r = api.get("/usages?project_id=p1")
    assert r.status == 200
    assert r.json == {
        "usages": {
            "INSTANCE": {"consumer_count": 2, "VCPU": 7, "MEMORY_MB": 512},
            "MIGRATION": {"consumer_count": 1, "VCPU": 2},
            "unknown": {"consumer_count": 1, "VCPU": 1},
        }
    }


def test_usages_filtered_by_one_consumer_type(api, project_usage):
    r = api.get("/usages?project_id=p1&consumer_type=INSTANCE")
    assert r.json == {"usages": {"INSTANCE": {"consumer_count": 2, "VCPU": 7, "MEMORY_MB": 512}}}


def test_usages_of_all_consumer_types_together(api, project_usage):
    r = api.get("/usages?project_id=p1&consumer_type=all")
    assert r.json == {"usages": {"all": {"consumer_count": 4, "VCPU": 10, "MEMORY_MB": 512}}}


def test_usages_of_consumers_without_type(api, project_usage):
    r = api.get("/usages?project_id=p1&user_id=u1&consumer_type=unknown")
    assert r.json == {"usages": {"unknown": {"consumer_count": 1, "VCPU": 1}}}


def test_usages_with_bad_consumer_type_is_400(api):
    assert api.get("/usages?project_id=p1&consumer_type=lower").status == 400


def test_usages_query_count_does_not_grow_with_consumers(api, project_usage, rp):
    with CaptureQueriesContext(connection) as few:
        api.get("/usages?project_id=p1")
    for _ in range(10):
        make_allocation(rp, make_consumer(project="p1", consumer_type="BATCH"), {"VCPU": 1})
    with CaptureQueriesContext(connection) as many:
        assert api.get("/usages?project_id=p1").json["usages"]["BATCH"]["consumer_count"] == 10
    assert len(many) == len(few)


def test_usages_policy_target_is_the_queried_project(api_at, settings, project_usage):
    settings.PLACEMENT_POLICY_DEFAULTS = "secure"
    reader = api_at("1.9", token="alice:p1")
    roles = {"X-Roles": "reader"}
    assert reader.get("/usages?project_id=p1", headers=roles).status == 200
    assert reader.get("/usages?project_id=p2", headers=roles).status == 403
    # noauth2 gives a token other than admin no role unless X-Roles names some.
    assert reader.get("/usages?project_id=p1").status == 403
