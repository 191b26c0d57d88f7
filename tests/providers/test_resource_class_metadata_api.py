"""/api/resource-classes/: type, unit and description; custom classes editable, standard not."""

import pytest

from tests.conftest import PlacementClient

pytestmark = pytest.mark.django_db


def test_standard_classes_are_listed_with_their_metadata(api):
    body = api.get("/api/resource-classes/?name=MEMORY").json
    memory = next(rc for rc in body["results"] if rc["name"] == "MEMORY_MB")
    assert memory == {
        "name": "MEMORY_MB",
        "type": "memory",
        "unit": "MB",
        "description": memory["description"],
        "is_custom": False,
    }
    assert memory["description"]


def test_a_custom_class_is_described_and_the_placement_body_is_unchanged(api):
    assert api.put("/resource_classes/CUSTOM_GPU_HOURS").status == 201
    response = api.request(
        "PATCH",
        "/api/resource-classes/CUSTOM_GPU_HOURS/",
        {"type": "accelerator", "unit": "GPU hour", "description": "Metered GPU time"},
    )
    assert response.status == 200, response
    assert response.json["unit"] == "GPU hour"
    assert api.get("/api/resource-classes/CUSTOM_GPU_HOURS/").json["type"] == "accelerator"
    # Placement's own representation knows nothing of it.
    placement = api.get("/resource_classes/CUSTOM_GPU_HOURS").json
    assert set(placement) == {"name", "links"}


def test_a_standard_class_cannot_be_described(api):
    response = api.request("PATCH", "/api/resource-classes/VCPU/", {"unit": "cores"})
    assert response.status == 400
    assert response.error_code == "api.standard_class"


def test_an_unknown_type_is_a_400_naming_the_field(api):
    api.put("/resource_classes/CUSTOM_X")
    response = api.request("PATCH", "/api/resource-classes/CUSTOM_X/", {"type": "magic"})
    assert response.status == 400
    assert "type" in response.error["fields"]


def test_editing_metadata_needs_admin(api):
    api.put("/resource_classes/CUSTOM_X")
    member = PlacementClient(token="alice:p1")
    assert member.request("PATCH", "/api/resource-classes/CUSTOM_X/", {"unit": "x"}).status == 403


def test_compute_nodes_are_in_the_openapi_schema(api):
    schema = api.get("/api/schema/?format=json").json
    assert "/api/compute-nodes/{hostname}/" in schema["paths"]
    put = schema["paths"]["/api/compute-nodes/{hostname}/"]["put"]
    assert "HostReport" in str(put["requestBody"])
