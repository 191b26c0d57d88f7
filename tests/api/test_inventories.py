"""/resource_providers/{uuid}/inventories[/{resource_class}] through the HTTP stack.

Bodies, status codes and error codes as in the Placement API reference; the
validation rules of each field are in test_inventories_validation.py.
"""

import re
import threading

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from providers.models import Inventory, ResourceProvider
from tests.conftest import PlacementClient, new_uuid
from tests.factories import make_allocation, make_consumer, make_provider, resource_class

pytestmark = pytest.mark.django_db

MAX_INT = 2147483647
DEFAULTS = {
    "reserved": 0,
    "min_unit": 1,
    "max_unit": MAX_INT,
    "step_size": 1,
    "allocation_ratio": 1.0,
}
# How nova's report client recognises an in-use refusal.
NOVA_INV_IN_USE = re.compile(r"Inventory for (.+) on resource provider (.+) in use")


def inv_url(provider, resource_class=None):
    uuid = provider if isinstance(provider, str) else provider.uuid
    url = f"/resource_providers/{uuid}/inventories"
    return f"{url}/{resource_class}" if resource_class else url


def stored(provider):
    """The provider's generation and inventory as the database holds them."""
    provider = ResourceProvider.objects.get(pk=provider.pk)
    rows = Inventory.objects.filter(resource_provider=provider).select_related("resource_class")
    return provider.generation, {
        row.resource_class.name: {
            "total": row.total,
            "reserved": row.reserved,
            "min_unit": row.min_unit,
            "max_unit": row.max_unit,
            "step_size": row.step_size,
            "allocation_ratio": row.allocation_ratio,
        }
        for row in rows
    }


def provider_with_usage(inventories=None, usage=None):
    """A provider whose VCPU (by default) is partly allocated to one consumer."""
    provider = make_provider(inventories=inventories or {"VCPU": 8, "MEMORY_MB": 1024})
    make_allocation(provider, make_consumer(), usage or {"VCPU": 2})
    return provider


# --- GET .../inventories -----------------------------------------------------


def test_list_shows_each_class_with_every_field_and_the_generation(api):
    rp = make_provider(
        inventories={
            "VCPU": {"total": 8, "reserved": 1, "max_unit": 4, "allocation_ratio": 16.0},
            "DISK_GB": {"total": 100, "step_size": 10, "min_unit": 10},
        }
    )
    r = api.get(inv_url(rp))
    assert r.status == 200
    assert r.json == {
        "resource_provider_generation": 0,
        "inventories": {
            "VCPU": {
                "total": 8,
                "reserved": 1,
                "min_unit": 1,
                "max_unit": 4,
                "step_size": 1,
                "allocation_ratio": 16.0,
            },
            "DISK_GB": {
                "total": 100,
                "reserved": 0,
                "min_unit": 10,
                "max_unit": MAX_INT,
                "step_size": 10,
                "allocation_ratio": 1.0,
            },
        },
    }


def test_list_of_provider_without_inventory_is_empty(api):
    rp = make_provider()
    r = api.get(inv_url(rp))
    assert r.status == 200
    assert r.json == {"inventories": {}, "resource_provider_generation": 0}


@pytest.mark.parametrize("uuid", [new_uuid(), "not-a-uuid"])
def test_list_of_unknown_provider_is_404(api, uuid):
    r = api.get(inv_url(uuid))
    assert r.status == 404
    assert f"No resource provider with uuid {uuid} found" in r.error["detail"]


def test_list_is_dated_and_not_cached_from_1_15(api_at):
    rp = make_provider(inventories={"VCPU": 8})
    r = api_at("1.15").get(inv_url(rp))
    assert r.status == 200
    assert r.headers["Last-Modified"].endswith(" GMT")
    assert r.headers["Cache-Control"] == "no-cache"


def test_list_is_undated_before_1_15(api_at):
    rp = make_provider(inventories={"VCPU": 8})
    r = api_at("1.14").get(inv_url(rp))
    assert r.status == 200
    assert "Last-Modified" not in r.headers
    assert "Cache-Control" not in r.headers


def test_list_exists_at_1_0(api_at):
    rp = make_provider(inventories={"VCPU": 8})
    r = api_at("1.0").get(inv_url(rp))
    assert r.status == 200
    assert r.json["inventories"]["VCPU"]["total"] == 8


# --- GET .../inventories/{resource_class} --------------------------------------


def test_show_one_class_with_the_generation(api):
    rp = make_provider(inventories={"VCPU": {"total": 8, "reserved": 2}, "DISK_GB": 10})
    api.put(inv_url(rp, "VCPU"), {"resource_provider_generation": 0, "total": 8, "reserved": 2})
    r = api.get(inv_url(rp, "VCPU"))
    assert r.status == 200
    assert r.json == {"total": 8, "reserved": 2, **_without("reserved"), **_gen(1)}
    assert r.headers["Last-Modified"].endswith(" GMT")


def _without(*names):
    return {k: v for k, v in DEFAULTS.items() if k not in names}


def _gen(generation):
    return {"resource_provider_generation": generation}


def test_show_class_the_provider_has_no_inventory_of_is_404(api):
    rp = make_provider(inventories={"VCPU": 8})
    r = api.get(inv_url(rp, "DISK_GB"))
    assert r.status == 404
    assert f"No inventory of class DISK_GB for {rp.uuid}" in r.error["detail"]


def test_show_unknown_resource_class_is_404(api):
    rp = make_provider(inventories={"VCPU": 8})
    assert api.get(inv_url(rp, "CUSTOM_NOPE")).status == 404


@pytest.mark.parametrize("uuid", [new_uuid(), "not-a-uuid"])
def test_show_on_unknown_provider_is_404(api, uuid):
    r = api.get(inv_url(uuid, "VCPU"))
    assert r.status == 404
    assert "No resource provider with uuid" in r.error["detail"]


# --- PUT .../inventories -------------------------------------------------------


def test_replace_creates_updates_and_removes_classes(api):
    rp = make_provider(inventories={"VCPU": 8, "DISK_GB": 100})
    body = {
        "resource_provider_generation": 0,
        "inventories": {
            "VCPU": {"total": 16, "reserved": 2, "allocation_ratio": 4.0},
            "MEMORY_MB": {"total": 2048, "max_unit": 1024, "step_size": 256},
        },
    }
    r = api.put(inv_url(rp), body)
    assert r.status == 200
    expected = {
        "VCPU": {**DEFAULTS, "total": 16, "reserved": 2, "allocation_ratio": 4.0},
        "MEMORY_MB": {**DEFAULTS, "total": 2048, "max_unit": 1024, "step_size": 256},
    }
    assert r.json == {"resource_provider_generation": 1, "inventories": expected}
    assert stored(rp) == (1, expected)


def test_replace_fills_in_defaults_for_omitted_fields(api):
    rp = make_provider(inventories={"VCPU": {"total": 8, "reserved": 3, "max_unit": 2}})
    r = api.put(
        inv_url(rp), {"resource_provider_generation": 0, "inventories": {"VCPU": {"total": 8}}}
    )
    assert r.status == 200
    assert r.json["inventories"]["VCPU"] == {**DEFAULTS, "total": 8}
    assert stored(rp)[1]["VCPU"] == {**DEFAULTS, "total": 8}


def test_replace_bumps_the_generation_even_when_nothing_changes(api):
    rp = make_provider(inventories={"VCPU": 8})
    body = {"resource_provider_generation": 0, "inventories": {"VCPU": {"total": 8}}}
    assert api.put(inv_url(rp), body).json["resource_provider_generation"] == 1
    body["resource_provider_generation"] = 1
    assert api.put(inv_url(rp), body).json["resource_provider_generation"] == 2


def test_replace_with_stale_generation_is_409_and_changes_nothing(api):
    rp = make_provider(inventories={"VCPU": 8})
    before = stored(rp)
    r = api.put(
        inv_url(rp), {"resource_provider_generation": 5, "inventories": {"VCPU": {"total": 1}}}
    )
    assert r.status == 409
    assert r.error_code == "placement.concurrent_update"
    assert "resource provider generation conflict" in r.error["detail"]
    assert stored(rp) == before


def test_replace_removing_a_class_in_use_is_409_and_changes_nothing(api):
    rp = provider_with_usage()
    before = stored(rp)
    r = api.put(
        inv_url(rp), {"resource_provider_generation": 0, "inventories": {"MEMORY_MB": {"total": 1}}}
    )
    assert r.status == 409
    assert r.error_code == "placement.inventory.inuse"
    assert f"Inventory for 'VCPU' on resource provider '{rp.uuid}' in use" in r.error["detail"]
    assert NOVA_INV_IN_USE.search(r.error["detail"])
    assert stored(rp) == before


def test_replace_lowering_total_below_usage_succeeds(api):
    rp = provider_with_usage(usage={"VCPU": 6})
    body = {
        "resource_provider_generation": 0,
        "inventories": {"VCPU": {"total": 2}, "MEMORY_MB": {"total": 1024}},
    }
    r = api.put(inv_url(rp), body)
    assert r.status == 200
    assert stored(rp)[1]["VCPU"]["total"] == 2


def test_replace_removing_a_class_used_only_on_another_provider_succeeds(api):
    rp = make_provider(inventories={"VCPU": 8})
    provider_with_usage()
    r = api.put(inv_url(rp), {"resource_provider_generation": 0, "inventories": {}})
    assert r.status == 200
    assert stored(rp) == (1, {})


def test_replace_with_unknown_resource_class_is_400_and_changes_nothing(api):
    rp = make_provider(inventories={"VCPU": 8})
    before = stored(rp)
    body = {
        "resource_provider_generation": 0,
        "inventories": {"VCPU": {"total": 4}, "CUSTOM_NOPE": {"total": 1}},
    }
    r = api.put(inv_url(rp), body)
    assert r.status == 400
    assert (
        f"Unknown resource class in inventory for resource provider {rp.uuid}: "
        "No such resource class CUSTOM_NOPE." in r.error["detail"]
    )
    assert stored(rp) == before


@pytest.mark.parametrize("name", ["vcpu", "VCPU ", ""])
def test_replace_with_a_key_that_is_no_class_name_is_400(api, name):
    rp = make_provider(inventories={"VCPU": 8})
    before = stored(rp)
    r = api.put(
        inv_url(rp), {"resource_provider_generation": 0, "inventories": {name: {"total": 1}}}
    )
    assert r.status == 400
    assert stored(rp) == before


def test_replace_with_custom_resource_class(api):
    resource_class("CUSTOM_GOLD")
    rp = make_provider()
    r = api.put(
        inv_url(rp),
        {"resource_provider_generation": 0, "inventories": {"CUSTOM_GOLD": {"total": 3}}},
    )
    assert r.status == 200
    assert r.json["inventories"]["CUSTOM_GOLD"]["total"] == 3


def test_replace_with_no_inventories_removes_all_even_at_1_0(api_at):
    rp = make_provider(inventories={"VCPU": 8, "DISK_GB": 10})
    r = api_at("1.0").put(inv_url(rp), {"resource_provider_generation": 0, "inventories": {}})
    assert r.status == 200
    assert r.json == {"resource_provider_generation": 1, "inventories": {}}
    assert stored(rp) == (1, {})


@pytest.mark.parametrize("uuid", [new_uuid(), "not-a-uuid"])
def test_replace_on_unknown_provider_is_404(api, uuid):
    r = api.put(inv_url(uuid), {"resource_provider_generation": 0, "inventories": {}})
    assert r.status == 404


def test_replace_with_one_bad_capacity_changes_nothing(api):
    rp = make_provider(inventories={"VCPU": 8, "DISK_GB": 10})
    before = stored(rp)
    body = {
        "resource_provider_generation": 0,
        "inventories": {"VCPU": {"total": 4}, "DISK_GB": {"total": 10, "reserved": 11}},
    }
    r = api.put(inv_url(rp), body)
    assert r.status == 400
    assert stored(rp) == before


def test_replace_accepts_and_ignores_a_generation_inside_a_record(api):
    rp = make_provider()
    body = {
        "resource_provider_generation": 0,
        "inventories": {"VCPU": {"total": 4, "resource_provider_generation": 99}},
    }
    r = api.put(inv_url(rp), body)
    assert r.status == 200
    assert r.json["inventories"]["VCPU"] == {**DEFAULTS, "total": 4}


def test_replace_answer_is_dated_from_1_15(api_at):
    rp = make_provider()
    r = api_at("1.15").put(
        inv_url(rp), {"resource_provider_generation": 0, "inventories": {"VCPU": {"total": 1}}}
    )
    assert r.status == 200
    assert r.headers["Last-Modified"].endswith(" GMT")
    assert r.headers["Cache-Control"] == "no-cache"


def test_replace_answer_is_undated_before_1_15(api_at):
    rp = make_provider()
    r = api_at("1.14").put(
        inv_url(rp), {"resource_provider_generation": 0, "inventories": {"VCPU": {"total": 1}}}
    )
    assert r.status == 200
    assert "Last-Modified" not in r.headers


# --- POST .../inventories ------------------------------------------------------


def test_create_answers_201_with_location_and_the_inventory(api):
    rp = make_provider(inventories={"VCPU": 8})
    r = api.post(inv_url(rp), {"resource_class": "DISK_GB", "total": 100, "reserved": 5})
    assert r.status == 201
    assert r.headers["Location"].endswith(f"/resource_providers/{rp.uuid}/inventories/DISK_GB")
    assert r.json == {**DEFAULTS, "total": 100, "reserved": 5, **_gen(1)}
    assert stored(rp) == (
        1,
        {"VCPU": {**DEFAULTS, "total": 8}, "DISK_GB": {**DEFAULTS, "total": 100, "reserved": 5}},
    )


def test_create_of_a_class_already_present_is_409_and_changes_nothing(api):
    rp = make_provider(inventories={"VCPU": 8})
    before = stored(rp)
    r = api.post(inv_url(rp), {"resource_class": "VCPU", "total": 4})
    assert r.status == 409
    assert r.error_code == "placement.concurrent_update"
    assert stored(rp) == before


def test_create_of_unknown_resource_class_is_400(api):
    rp = make_provider()
    r = api.post(inv_url(rp), {"resource_class": "CUSTOM_NOPE", "total": 4})
    assert r.status == 400
    assert (
        f"Unable to create inventory for resource provider {rp.uuid}: "
        "No such resource class CUSTOM_NOPE." in r.error["detail"]
    )
    assert stored(rp) == (0, {})


def test_create_does_not_check_a_sent_generation(api):
    rp = make_provider()
    r = api.post(
        inv_url(rp), {"resource_class": "VCPU", "total": 4, "resource_provider_generation": 42}
    )
    assert r.status == 201
    assert r.json["resource_provider_generation"] == 1


@pytest.mark.parametrize("uuid", [new_uuid(), "not-a-uuid"])
def test_create_on_unknown_provider_is_404(api, uuid):
    assert api.post(inv_url(uuid), {"resource_class": "VCPU", "total": 4}).status == 404


def test_create_answer_is_dated_from_1_15(api_at):
    rp = make_provider()
    r = api_at("1.15").post(inv_url(rp), {"resource_class": "VCPU", "total": 4})
    assert r.status == 201
    assert r.headers["Last-Modified"].endswith(" GMT")


# --- PUT .../inventories/{resource_class} ----------------------------------------


def test_update_one_class_changes_only_it_and_bumps_generation(api):
    rp = make_provider(inventories={"VCPU": 8, "DISK_GB": 10})
    body = {"resource_provider_generation": 0, "total": 32, "allocation_ratio": 2.5, "min_unit": 2}
    r = api.put(inv_url(rp, "VCPU"), body)
    assert r.status == 200
    vcpu = {**DEFAULTS, "total": 32, "allocation_ratio": 2.5, "min_unit": 2}
    assert r.json == {**vcpu, **_gen(1)}
    assert stored(rp) == (1, {"VCPU": vcpu, "DISK_GB": {**DEFAULTS, "total": 10}})


def test_update_resets_omitted_fields_to_defaults(api):
    rp = make_provider(inventories={"VCPU": {"total": 8, "reserved": 2, "step_size": 2}})
    r = api.put(inv_url(rp, "VCPU"), {"resource_provider_generation": 0, "total": 8})
    assert r.status == 200
    assert stored(rp)[1]["VCPU"] == {**DEFAULTS, "total": 8}


def test_update_of_a_class_the_provider_has_no_inventory_of_is_400(api):
    rp = make_provider(inventories={"VCPU": 8})
    before = stored(rp)
    r = api.put(inv_url(rp, "DISK_GB"), {"resource_provider_generation": 0, "total": 10})
    assert r.status == 400
    assert "No inventory of class DISK_GB found" in r.error["detail"]
    assert stored(rp) == before


def test_update_of_unknown_resource_class_is_404_as_placement(api):
    rp = make_provider(inventories={"VCPU": 8})
    r = api.put(inv_url(rp, "CUSTOM_NOPE"), {"resource_provider_generation": 0, "total": 10})
    assert r.status == 404
    assert "No such resource class CUSTOM_NOPE." in r.error["detail"]
    assert stored(rp)[0] == 0


def test_update_with_stale_generation_is_409_and_changes_nothing(api):
    rp = make_provider(inventories={"VCPU": 8})
    before = stored(rp)
    r = api.put(inv_url(rp, "VCPU"), {"resource_provider_generation": 1, "total": 2})
    assert r.status == 409
    assert r.error_code == "placement.concurrent_update"
    assert stored(rp) == before


def test_update_lowering_total_below_usage_succeeds(api):
    rp = provider_with_usage(usage={"VCPU": 6})
    r = api.put(inv_url(rp, "VCPU"), {"resource_provider_generation": 0, "total": 4})
    assert r.status == 200
    assert stored(rp)[1]["VCPU"]["total"] == 4


@pytest.mark.parametrize("uuid", [new_uuid(), "not-a-uuid"])
def test_update_on_unknown_provider_is_404(api, uuid):
    r = api.put(inv_url(uuid, "VCPU"), {"resource_provider_generation": 0, "total": 4})
    assert r.status == 404


def test_update_answer_is_dated_from_1_15(api_at):
    rp = make_provider(inventories={"VCPU": 8})
    r = api_at("1.15").put(inv_url(rp, "VCPU"), {"resource_provider_generation": 0, "total": 4})
    assert r.status == 200
    assert r.headers["Last-Modified"].endswith(" GMT")


# --- DELETE .../inventories/{resource_class} -------------------------------------


def test_delete_one_class_is_204_and_bumps_generation(api):
    rp = make_provider(inventories={"VCPU": 8, "DISK_GB": 10})
    r = api.delete(inv_url(rp, "VCPU"))
    assert r.status == 204
    assert r.content == b""
    assert stored(rp) == (1, {"DISK_GB": {**DEFAULTS, "total": 10}})


def test_delete_one_class_works_at_1_0(api_at):
    rp = make_provider(inventories={"VCPU": 8})
    assert api_at("1.0").delete(inv_url(rp, "VCPU")).status == 204
    assert stored(rp) == (1, {})


def test_delete_a_class_in_use_is_409_and_changes_nothing(api):
    rp = provider_with_usage()
    before = stored(rp)
    r = api.delete(inv_url(rp, "VCPU"))
    assert r.status == 409
    assert r.error_code == "placement.inventory.inuse"
    assert NOVA_INV_IN_USE.search(r.error["detail"])
    assert stored(rp) == before


def test_delete_a_class_allocated_only_on_another_provider_succeeds(api):
    rp = make_provider(inventories={"VCPU": 8})
    provider_with_usage()
    assert api.delete(inv_url(rp, "VCPU")).status == 204


def test_delete_a_class_the_provider_has_no_inventory_of_is_404(api):
    rp = make_provider(inventories={"VCPU": 8})
    before = stored(rp)
    r = api.delete(inv_url(rp, "DISK_GB"))
    assert r.status == 404
    assert "No inventory of class DISK_GB found for delete" in r.error["detail"]
    assert stored(rp) == before


def test_delete_unknown_resource_class_is_404(api):
    rp = make_provider(inventories={"VCPU": 8})
    assert api.delete(inv_url(rp, "CUSTOM_NOPE")).status == 404
    assert stored(rp)[0] == 0


@pytest.mark.parametrize("uuid", [new_uuid(), "not-a-uuid"])
def test_delete_one_class_on_unknown_provider_is_404(api, uuid):
    assert api.delete(inv_url(uuid, "VCPU")).status == 404


# --- DELETE .../inventories (1.5+) -----------------------------------------------


def test_delete_all_is_204_and_bumps_generation_from_1_5(api_at):
    rp = make_provider(inventories={"VCPU": 8, "DISK_GB": 10})
    r = api_at("1.5").delete(inv_url(rp))
    assert r.status == 204
    assert stored(rp) == (1, {})


def test_delete_all_before_1_5_is_405_and_changes_nothing(api_at):
    rp = make_provider(inventories={"VCPU": 8})
    before = stored(rp)
    r = api_at("1.4").delete(inv_url(rp))
    assert r.status == 405
    assert r.error["status"] == 405
    assert stored(rp) == before


def test_delete_all_with_a_class_in_use_is_409_and_changes_nothing(api):
    rp = provider_with_usage()
    before = stored(rp)
    r = api.delete(inv_url(rp))
    assert r.status == 409
    assert r.error_code == "placement.inventory.inuse"
    assert (
        r.error["detail"]
        .strip()
        .endswith(f"Inventory for 'VCPU' on resource provider '{rp.uuid}' in use.")
    )
    assert stored(rp) == before


def test_delete_all_names_every_class_in_use(api):
    rp = provider_with_usage(usage={"VCPU": 1, "MEMORY_MB": 64})
    r = api.delete(inv_url(rp))
    assert r.status == 409
    assert "Inventory for 'VCPU, MEMORY_MB' on resource provider" in r.error["detail"]


def test_delete_all_of_a_provider_without_inventory_is_204(api):
    rp = make_provider()
    assert api.delete(inv_url(rp)).status == 204


@pytest.mark.parametrize("uuid", [new_uuid(), "not-a-uuid"])
def test_delete_all_on_unknown_provider_is_404(api, uuid):
    assert api.delete(inv_url(uuid)).status == 404


# --- methods, policy, error codes ---------------------------------------------------


def test_post_to_one_class_is_405(api):
    rp = make_provider(inventories={"VCPU": 8})
    r = api.post(inv_url(rp, "VCPU"), {"total": 1})
    assert r.status == 405
    assert "errors" in r.json


@pytest.mark.parametrize(
    ("method", "one_class", "body"),
    [
        ("get", False, None),
        ("put", False, {"resource_provider_generation": 0, "inventories": {}}),
        ("post", False, {"resource_class": "DISK_GB", "total": 1}),
        ("delete", False, None),
        ("get", True, None),
        ("put", True, {"resource_provider_generation": 0, "total": 1}),
        ("delete", True, None),
    ],
)
def test_non_admin_is_forbidden_by_legacy_policy(api_at, method, one_class, body):
    rp = make_provider(inventories={"VCPU": 8})
    client = api_at("latest", token="someone:some-project")
    url = inv_url(rp, "VCPU" if one_class else None)
    kwargs = {"body": body} if body is not None else {}
    r = getattr(client, method)(url, **kwargs)
    assert r.status == 403
    assert stored(rp) == (0, {"VCPU": {**DEFAULTS, "total": 8}})


def test_error_codes_only_from_1_23(api_at):
    rp = make_provider(inventories={"VCPU": 8})
    body = {"resource_provider_generation": 9, "inventories": {}}
    assert "code" not in api_at("1.22").put(inv_url(rp), body).error
    assert api_at("1.23").put(inv_url(rp), body).error_code == "placement.concurrent_update"


# --- concurrency ----------------------------------------------------------------


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_concurrent_replaces_with_one_generation_let_exactly_one_win():
    rp = make_provider(inventories={"VCPU": 8})
    barrier = threading.Barrier(4)
    results = {}

    def replace(total):
        try:
            barrier.wait()
            body = {"resource_provider_generation": 0, "inventories": {"VCPU": {"total": total}}}
            results[total] = PlacementClient(version="latest").put(inv_url(rp), body)
        finally:
            connection.close()

    threads = [threading.Thread(target=replace, args=(n,)) for n in (10, 20, 30, 40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    statuses = sorted(r.status for r in results.values())
    assert statuses == [200, 409, 409, 409]
    (winner,) = [total for total, r in results.items() if r.status == 200]
    assert stored(rp) == (1, {"VCPU": {**DEFAULTS, "total": winner}})


# --- query counts ---------------------------------------------------------------------

CLASSES = ["VCPU", "MEMORY_MB", "DISK_GB", "PCI_DEVICE", "SRIOV_NET_VF", "IPV4_ADDRESS"]


def _queries(call):
    with CaptureQueriesContext(connection) as ctx:
        response = call()
    assert response.status == 200, response
    return len(ctx.captured_queries)


@pytest.mark.parametrize("count", [1, len(CLASSES)])
def test_list_takes_a_fixed_number_of_queries(api, count):
    rp = make_provider(inventories={name: 8 for name in CLASSES[:count]})
    assert _queries(lambda: api.get(inv_url(rp))) == 2


def test_replace_takes_as_many_queries_for_many_classes_as_for_one(api):
    few = make_provider(inventories={"VCPU": 8, "DISK_GB": 8})
    many = make_provider(inventories={name: 8 for name in CLASSES[:4]})

    def replace(rp, names):
        body = {"resource_provider_generation": 0, "inventories": {n: {"total": 4} for n in names}}
        return lambda: api.put(inv_url(rp), body)

    # Each provider loses one class, keeps one or more, and gains one or more.
    assert _queries(replace(few, ["VCPU", "MEMORY_MB"])) == _queries(
        replace(many, ["VCPU", "MEMORY_MB", "PCI_DEVICE", "SRIOV_NET_VF", "IPV4_ADDRESS"])
    )
