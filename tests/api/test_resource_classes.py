"""/resource_classes through the HTTP stack."""

import pytest

pytestmark = pytest.mark.django_db


def test_list_includes_standard_classes_with_links(api):
    r = api.get("/resource_classes")
    assert r.status == 200
    names = [rc["name"] for rc in r.json["resource_classes"]]
    assert names[:3] == ["VCPU", "MEMORY_MB", "DISK_GB"]
    assert r.json["resource_classes"][0]["links"] == [
        {"rel": "self", "href": "/resource_classes/VCPU"}
    ]


def test_resource_classes_do_not_exist_before_1_2(api_at):
    r = api_at("1.1").get("/resource_classes")
    assert r.status == 404
    assert "errors" in r.json


def test_create_show_and_delete_custom_class(api):
    r = api.post("/resource_classes", {"name": "CUSTOM_GOLD"})
    assert r.status == 201
    assert r.headers["Location"].endswith("/resource_classes/CUSTOM_GOLD")
    assert api.get("/resource_classes/CUSTOM_GOLD").json["name"] == "CUSTOM_GOLD"
    assert api.delete("/resource_classes/CUSTOM_GOLD").status == 204
    assert api.get("/resource_classes/CUSTOM_GOLD").status == 404


def test_duplicate_create_is_409_duplicate_name(api):
    api.post("/resource_classes", {"name": "CUSTOM_GOLD"})
    r = api.post("/resource_classes", {"name": "CUSTOM_GOLD"})
    assert r.status == 409
    assert r.error_code == "placement.duplicate_name"


@pytest.mark.parametrize(
    "body",
    [
        {"name": "GOLD"},
        {"name": "CUSTOM_gold"},
        {},
        {"name": "CUSTOM_A", "x": 1},
        {"name": 1},
        {"name": "CUSTOM_" + "A" * 300},
        ["CUSTOM_A"],
    ],
)
def test_create_rejects_bad_bodies(api, body):
    r = api.post("/resource_classes", body)
    assert r.status == 400
    assert "JSON does not validate" in r.error["detail"]


def test_put_at_1_7_creates_then_confirms(api_at):
    client = api_at("1.7")
    assert client.put("/resource_classes/CUSTOM_SILVER").status == 201
    assert client.put("/resource_classes/CUSTOM_SILVER").status == 204
    assert client.put("/resource_classes/VCPU").status == 400


def test_put_before_1_7_renames_custom_class(api_at):
    client = api_at("1.6")
    client.post("/resource_classes", {"name": "CUSTOM_OLD"})
    r = client.put("/resource_classes/CUSTOM_OLD", {"name": "CUSTOM_NEW"})
    assert r.status == 200
    assert r.json["name"] == "CUSTOM_NEW"
    assert client.put("/resource_classes/VCPU", {"name": "CUSTOM_X"}).status == 400


def test_standard_class_cannot_be_deleted(api):
    r = api.delete("/resource_classes/VCPU")
    assert r.status == 400
    assert "Error in delete resource class: Cannot delete standard" in r.error["detail"]


def test_class_in_use_cannot_be_deleted(api):
    from tests.factories import make_provider

    make_provider("cn", inventories={"CUSTOM_GOLD": 10})
    r = api.delete("/resource_classes/CUSTOM_GOLD")
    assert r.status == 409
    assert (
        "Error in delete resource class: Cannot delete resource class CUSTOM_GOLD. "
        "Class is in use in inventory." in r.error["detail"]
    )


def test_malformed_json_and_wrong_media_type(api):
    r = api.post("/resource_classes", raw="{not json")
    assert r.status == 400
    assert "Malformed JSON" in r.error["detail"]
    r = api.post("/resource_classes", raw='{"name": "CUSTOM_A"}', content_type="text/plain")
    assert r.status == 415
