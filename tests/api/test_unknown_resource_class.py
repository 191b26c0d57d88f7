"""A resource class that does not exist, named in a path or a body, is answered as the
reference answers it (observed on Placement 16): in a path, 404 "No such resource class NAME."
(neutron-lib maps it to PlacementResourceNotFound); in a body, the 400 of that endpoint."""

import pytest

from tests.conftest import PlacementClient, new_uuid

pytestmark = pytest.mark.django_db

BOGUS = "NET_BW_BOGUS_KILOBIT_PER_SEC"


@pytest.fixture
def api():
    return PlacementClient(version="1.39")


@pytest.fixture
def provider(api):
    uuid = new_uuid()
    api.post("/resource_providers", {"name": "rp", "uuid": uuid})
    api.put(
        f"/resource_providers/{uuid}/inventories",
        {"resource_provider_generation": 0, "inventories": {"VCPU": {"total": 8}}},
    )
    return uuid


def generation(api, uuid):
    return api.get(f"/resource_providers/{uuid}").json["generation"]


def assert_not_found(response, name=BOGUS):
    assert response.status == 404, response
    assert response.error["detail"].endswith(f"No such resource class {name}.  ")


@pytest.mark.parametrize("name", [BOGUS, "CUSTOM_BOGUS"])
def test_put_one_inventory_of_an_unknown_class_is_404(api, provider, name):
    body = {"total": 10, "resource_provider_generation": generation(api, provider)}
    response = api.put(f"/resource_providers/{provider}/inventories/{name}", body)
    assert_not_found(response, name)
    assert response.error_code == "placement.undefined_code"


def test_put_one_inventory_checks_the_generation_first(api, provider):
    body = {"total": 10, "resource_provider_generation": generation(api, provider) + 5}
    response = api.put(f"/resource_providers/{provider}/inventories/{BOGUS}", body)
    assert response.status == 409


def test_put_one_inventory_of_a_known_class_the_provider_lacks_stays_400(api, provider):
    body = {"total": 10, "resource_provider_generation": generation(api, provider)}
    response = api.put(f"/resource_providers/{provider}/inventories/DISK_GB", body)
    assert response.status == 400
    assert "No inventory record with resource class" in response.error["detail"]


def test_show_and_delete_one_inventory_of_an_unknown_class_are_404(api, provider):
    assert api.get(f"/resource_providers/{provider}/inventories/{BOGUS}").status == 404
    response = api.delete(f"/resource_providers/{provider}/inventories/{BOGUS}")
    assert_not_found(response)


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
def test_resource_class_urls_of_an_unknown_class_are_404(api, method):
    response = api.request(method, "/resource_classes/CUSTOM_BOGUS")
    if method == "PUT":
        assert response.status == 201  # PUT creates a custom class (1.7+)
        return
    assert_not_found(response, "CUSTOM_BOGUS")


def test_post_inventory_of_an_unknown_class_is_400(api, provider):
    body = {"resource_class": BOGUS, "total": 1, "resource_provider_generation": 1}
    response = api.post(f"/resource_providers/{provider}/inventories", body)
    assert response.status == 400
    assert f"No such resource class {BOGUS}." in response.error["detail"]


def test_put_inventories_with_an_unknown_class_is_400(api, provider):
    body = {"inventories": {BOGUS: {"total": 1}}, "resource_provider_generation": 1}
    response = api.put(f"/resource_providers/{provider}/inventories", body)
    assert response.status == 400
    assert f"No such resource class {BOGUS}." in response.error["detail"]


def test_allocations_of_an_unknown_class_are_400(api, provider):
    body = {
        "allocations": {provider: {"resources": {BOGUS: 1}}},
        "project_id": "p",
        "user_id": "u",
        "consumer_generation": None,
        "consumer_type": "INSTANCE",
    }
    response = api.put(f"/allocations/{new_uuid()}", body)
    assert response.status == 400
    assert f"No such resource class {BOGUS}." in response.error["detail"]
    response = api.post("/allocations", {new_uuid(): body})
    assert response.status == 400
    assert f"No such resource class {BOGUS}." in response.error["detail"]


@pytest.mark.parametrize("path", ["/allocation_candidates", "/resource_providers"])
def test_queries_naming_an_unknown_class_are_400(api, path):
    response = api.get(f"{path}?resources=VCPU:1,{BOGUS}:1")
    assert response.status == 400
    assert f"No such resource class {BOGUS}." in response.error["detail"]


def test_reshaper_naming_an_unknown_class_is_400_as_placements(api, provider):
    body = {
        "inventories": {
            provider: {
                "inventories": {"CUSTOM_BOGUS": {"total": 1}},
                "resource_provider_generation": generation(api, provider),
            }
        },
        "allocations": {},
    }
    response = api.post("/reshaper", body)
    assert response.status == 400
    assert response.error["detail"].endswith(
        "malformed reshaper data: No such resource class CUSTOM_BOGUS.  "
    )
