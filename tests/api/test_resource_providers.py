"""/resource_providers and /resource_providers/{uuid} through the HTTP stack."""

import pytest

from allocations.models import Allocation
from providers.models import (
    Inventory,
    ResourceProvider,
    ResourceProviderAggregate,
    ResourceProviderTrait,
)
from tests.conftest import new_uuid
from tests.factories import make_allocation, make_consumer, make_provider

pytestmark = pytest.mark.django_db


def rels(provider_json):
    return [link["rel"] for link in provider_json["links"]]


# --- POST /resource_providers ---------------------------------------------


def test_create_before_1_20_is_201_with_location_and_no_body(api_at):
    uuid = new_uuid()
    r = api_at("1.19").post("/resource_providers", {"name": "cn1", "uuid": uuid})
    assert r.status == 201
    assert r.headers["Location"].endswith(f"/resource_providers/{uuid}")
    assert r.content == b""


def test_create_from_1_20_returns_the_provider_with_200(api_at):
    uuid = new_uuid()
    r = api_at("1.20").post("/resource_providers", {"name": "cn1", "uuid": uuid})
    assert r.status == 200
    assert r.headers["Location"].endswith(f"/resource_providers/{uuid}")
    assert r.json["uuid"] == uuid
    assert r.json["name"] == "cn1"
    assert r.json["generation"] == 0
    assert r.json["root_provider_uuid"] == uuid
    assert r.json["parent_provider_uuid"] is None
    assert "Last-Modified" in r.headers
    assert r.headers["Cache-Control"] == "no-cache"


def test_create_without_uuid_generates_one(api):
    r = api.post("/resource_providers", {"name": "cn1"})
    assert r.status == 200
    assert ResourceProvider.objects.get(name="cn1").uuid.hex == r.json["uuid"].replace("-", "")


def test_create_accepts_uuid_without_dashes_and_normalizes_it(api):
    uuid = new_uuid()
    r = api.post("/resource_providers", {"name": "cn1", "uuid": uuid.replace("-", "").upper()})
    assert r.status == 200
    assert r.json["uuid"] == uuid


def test_create_child_sets_parent_and_root(api):
    root = make_provider("root")
    mid = make_provider("mid", parent=root)
    r = api.post("/resource_providers", {"name": "leaf", "parent_provider_uuid": str(mid.uuid)})
    assert r.status == 200
    assert r.json["parent_provider_uuid"] == str(mid.uuid)
    assert r.json["root_provider_uuid"] == str(root.uuid)


def test_create_with_unknown_parent_is_400(api):
    r = api.post("/resource_providers", {"name": "leaf", "parent_provider_uuid": new_uuid()})
    assert r.status == 400
    assert "parent provider UUID does not exist." in r.error["detail"]
    assert not ResourceProvider.objects.exists()


def test_create_with_itself_as_parent_is_400(api):
    uuid = new_uuid()
    r = api.post("/resource_providers", {"name": "x", "uuid": uuid, "parent_provider_uuid": uuid})
    assert r.status == 400
    assert "parent provider UUID cannot be same as UUID" in r.error["detail"]


def test_parent_provider_uuid_is_refused_before_1_14(api_at):
    root = make_provider("root")
    r = api_at("1.13").post(
        "/resource_providers", {"name": "leaf", "parent_provider_uuid": str(root.uuid)}
    )
    assert r.status == 400
    assert "JSON does not validate" in r.error["detail"]


def test_create_with_null_parent_makes_a_root(api):
    r = api.post("/resource_providers", {"name": "cn1", "parent_provider_uuid": None})
    assert r.status == 200
    assert r.json["root_provider_uuid"] == r.json["uuid"]


def test_duplicate_name_is_409_duplicate_name(api):
    make_provider("cn1")
    r = api.post("/resource_providers", {"name": "cn1"})
    assert r.status == 409
    assert r.error_code == "placement.duplicate_name"
    assert "Conflicting resource provider name: cn1 already exists." in r.error["detail"]


def test_duplicate_uuid_is_409(api):
    existing = make_provider("cn1")
    r = api.post("/resource_providers", {"name": "cn2", "uuid": str(existing.uuid)})
    assert r.status == 409
    assert f"uuid: {existing.uuid}" in r.error["detail"]
    assert ResourceProvider.objects.count() == 1


def test_unicode_name_is_allowed(api):
    r = api.post("/resource_providers", {"name": "\u00e7\u00e9\u2603 \U0001f600"})
    assert r.status == 200
    assert (
        api.get(f"/resource_providers/{r.json['uuid']}").json["name"]
        == "\u00e7\u00e9\u2603 \U0001f600"
    )


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"name": ""},
        {"name": "x" * 201},
        {"name": 1},
        {"name": "ok", "uuid": "not-a-uuid"},
        {"name": "ok", "generation": 1},
        ["ok"],
    ],
    ids=["no-name", "empty", "too-long", "not-string", "bad-uuid", "extra-field", "not-object"],
)
def test_create_rejects_bad_bodies(api, body):
    r = api.post("/resource_providers", body)
    assert r.status == 400
    assert "JSON does not validate" in r.error["detail"]
    assert not ResourceProvider.objects.exists()


def test_name_of_200_characters_is_allowed(api):
    assert api.post("/resource_providers", {"name": "x" * 200}).status == 200


def test_name_with_nul_is_refused(api):
    r = api.post("/resource_providers", raw='{"name": "a\\u0000b"}')
    assert r.status == 400
    assert not ResourceProvider.objects.exists()


def test_name_with_lone_surrogate_is_refused(api):
    r = api.post("/resource_providers", raw='{"name": "a\\ud800b"}')
    assert r.status == 400


def test_create_needs_json(api):
    r = api.post("/resource_providers", raw="name=x", content_type="text/plain")
    assert r.status == 415


# --- GET /resource_providers/{uuid} ---------------------------------------


def test_show_at_1_0_has_base_links_and_no_tree(api_at):
    p = make_provider("cn1")
    r = api_at("1.0").get(f"/resource_providers/{p.uuid}")
    assert r.status == 200
    assert r.json == {
        "uuid": str(p.uuid),
        "name": "cn1",
        "generation": 0,
        "links": [
            {"rel": "self", "href": f"/resource_providers/{p.uuid}"},
            {"rel": "inventories", "href": f"/resource_providers/{p.uuid}/inventories"},
            {"rel": "usages", "href": f"/resource_providers/{p.uuid}/usages"},
        ],
    }


@pytest.mark.parametrize(
    "version, expected",
    [
        ("1.0", ["self", "inventories", "usages"]),
        ("1.1", ["self", "inventories", "usages", "aggregates"]),
        ("1.5", ["self", "inventories", "usages", "aggregates"]),
        ("1.6", ["self", "inventories", "usages", "aggregates", "traits"]),
        ("1.10", ["self", "inventories", "usages", "aggregates", "traits"]),
        ("1.11", ["self", "inventories", "usages", "aggregates", "traits", "allocations"]),
    ],
)
def test_links_grow_with_the_microversion(api_at, version, expected):
    p = make_provider("cn1")
    assert rels(api_at(version).get(f"/resource_providers/{p.uuid}").json) == expected


def test_tree_uuids_appear_from_1_14(api_at):
    root = make_provider("root")
    child = make_provider("child", parent=root)
    before = api_at("1.13").get(f"/resource_providers/{child.uuid}").json
    after = api_at("1.14").get(f"/resource_providers/{child.uuid}").json
    assert "parent_provider_uuid" not in before and "root_provider_uuid" not in before
    assert after["parent_provider_uuid"] == str(root.uuid)
    assert after["root_provider_uuid"] == str(root.uuid)


def test_last_modified_from_1_15(api_at):
    p = make_provider("cn1")
    assert "Last-Modified" not in api_at("1.14").get(f"/resource_providers/{p.uuid}").headers
    r = api_at("1.15").get(f"/resource_providers/{p.uuid}")
    assert "Last-Modified" in r.headers
    assert r.headers["Cache-Control"] == "no-cache"


def test_show_unknown_provider_is_404(api):
    uuid = new_uuid()
    r = api.get(f"/resource_providers/{uuid}")
    assert r.status == 404
    assert f"No resource provider with uuid {uuid} found" in r.error["detail"]


def test_show_malformed_uuid_is_404(api):
    assert api.get("/resource_providers/not-a-uuid").status == 404


# --- PUT /resource_providers/{uuid} ---------------------------------------


def test_rename(api):
    p = make_provider("old")
    r = api.put(f"/resource_providers/{p.uuid}", {"name": "new"})
    assert r.status == 200
    assert r.json["name"] == "new"
    assert r.json["generation"] == 0
    assert ResourceProvider.objects.get(pk=p.pk).name == "new"


def test_rename_to_a_taken_name_is_409(api):
    make_provider("taken")
    p = make_provider("old")
    r = api.put(f"/resource_providers/{p.uuid}", {"name": "taken"})
    assert r.status == 409
    assert r.error_code == "placement.duplicate_name"
    assert ResourceProvider.objects.get(pk=p.pk).name == "old"


def test_update_unknown_provider_is_404(api):
    assert api.put(f"/resource_providers/{new_uuid()}", {"name": "x"}).status == 404


def test_update_malformed_uuid_is_404(api):
    assert api.put("/resource_providers/nope", {"name": "x"}).status == 404


@pytest.mark.parametrize("body", [{}, {"name": ""}, {"name": "x", "uuid": new_uuid()}])
def test_update_rejects_bad_bodies(api, body):
    p = make_provider("old")
    r = api.put(f"/resource_providers/{p.uuid}", body)
    assert r.status == 400
    assert ResourceProvider.objects.get(pk=p.pk).name == "old"


def test_update_response_has_last_modified_from_1_15(api_at):
    p = make_provider("old")
    assert (
        "Last-Modified"
        not in api_at("1.14").put(f"/resource_providers/{p.uuid}", {"name": "a"}).headers
    )
    r = api_at("1.15").put(f"/resource_providers/{p.uuid}", {"name": "b"})
    assert "Last-Modified" in r.headers


def test_parent_in_update_is_refused_before_1_14(api_at):
    root = make_provider("root")
    p = make_provider("p")
    r = api_at("1.13").put(
        f"/resource_providers/{p.uuid}", {"name": "p", "parent_provider_uuid": str(root.uuid)}
    )
    assert r.status == 400


def test_a_root_can_be_given_a_parent_before_1_37(api_at):
    root = make_provider("root")
    p = make_provider("p")
    child = make_provider("child", parent=p)
    r = api_at("1.14").put(
        f"/resource_providers/{p.uuid}", {"name": "p", "parent_provider_uuid": str(root.uuid)}
    )
    assert r.status == 200
    assert r.json["parent_provider_uuid"] == str(root.uuid)
    assert r.json["root_provider_uuid"] == str(root.uuid)
    child_json = api_at("1.14").get(f"/resource_providers/{child.uuid}").json
    assert child_json["root_provider_uuid"] == str(root.uuid)


def test_setting_the_same_parent_again_is_allowed_before_1_37(api_at):
    root = make_provider("root")
    p = make_provider("p", parent=root)
    r = api_at("1.36").put(
        f"/resource_providers/{p.uuid}", {"name": "p2", "parent_provider_uuid": str(root.uuid)}
    )
    assert r.status == 200
    assert r.json["name"] == "p2"


def test_reparenting_is_refused_before_1_37(api_at):
    root1, root2 = make_provider("r1"), make_provider("r2")
    p = make_provider("p", parent=root1)
    r = api_at("1.36").put(
        f"/resource_providers/{p.uuid}", {"name": "p", "parent_provider_uuid": str(root2.uuid)}
    )
    assert r.status == 400
    assert "re-parenting a provider is not currently allowed." in r.error["detail"]
    assert ResourceProvider.objects.get(pk=p.pk).parent_id == root1.pk


def test_unparenting_is_refused_before_1_37(api_at):
    root = make_provider("r1")
    p = make_provider("p", parent=root)
    r = api_at("1.36").put(
        f"/resource_providers/{p.uuid}", {"name": "p", "parent_provider_uuid": None}
    )
    assert r.status == 400
    assert "un-parenting a provider is not currently allowed." in r.error["detail"]


def test_reparenting_from_1_37_moves_the_subtree(api_at):
    root1, root2 = make_provider("r1"), make_provider("r2")
    p = make_provider("p", parent=root1)
    grandchild = make_provider("gc", parent=p)
    client = api_at("1.37")
    r = client.put(
        f"/resource_providers/{p.uuid}", {"name": "p", "parent_provider_uuid": str(root2.uuid)}
    )
    assert r.status == 200
    assert r.json["parent_provider_uuid"] == str(root2.uuid)
    assert r.json["root_provider_uuid"] == str(root2.uuid)
    assert client.get(f"/resource_providers/{grandchild.uuid}").json["root_provider_uuid"] == str(
        root2.uuid
    )


def test_unparenting_from_1_37_makes_a_new_root_of_the_subtree(api_at):
    root = make_provider("r1")
    p = make_provider("p", parent=root)
    grandchild = make_provider("gc", parent=p)
    client = api_at("1.37")
    r = client.put(f"/resource_providers/{p.uuid}", {"name": "p", "parent_provider_uuid": None})
    assert r.status == 200
    assert r.json["parent_provider_uuid"] is None
    assert r.json["root_provider_uuid"] == str(p.uuid)
    assert client.get(f"/resource_providers/{grandchild.uuid}").json["root_provider_uuid"] == str(
        p.uuid
    )


def test_a_provider_cannot_be_its_own_parent(api):
    p = make_provider("p")
    r = api.put(f"/resource_providers/{p.uuid}", {"name": "p", "parent_provider_uuid": str(p.uuid)})
    assert r.status == 400
    assert "creating loop in the provider tree is not allowed." in r.error["detail"]


@pytest.mark.parametrize("version", ["1.14", "1.37"])
def test_a_provider_cannot_move_under_its_descendant(api_at, version):
    root = make_provider("root")
    child = make_provider("child", parent=root)
    grandchild = make_provider("gc", parent=child)
    r = api_at(version).put(
        f"/resource_providers/{root.uuid}",
        {"name": "root", "parent_provider_uuid": str(grandchild.uuid)},
    )
    assert r.status == 400
    assert "creating loop in the provider tree is not allowed." in r.error["detail"]
    assert ResourceProvider.objects.get(pk=root.pk).parent_id is None


def test_update_with_unknown_parent_is_400(api):
    p = make_provider("p")
    r = api.put(f"/resource_providers/{p.uuid}", {"name": "p", "parent_provider_uuid": new_uuid()})
    assert r.status == 400
    assert "parent provider UUID does not exist." in r.error["detail"]


def test_update_without_parent_key_keeps_the_parent(api):
    root = make_provider("root")
    p = make_provider("p", parent=root)
    r = api.put(f"/resource_providers/{p.uuid}", {"name": "renamed"})
    assert r.status == 200
    assert r.json["parent_provider_uuid"] == str(root.uuid)


# --- DELETE /resource_providers/{uuid} ------------------------------------


def test_delete_removes_provider_inventories_traits_and_aggregate_links(api):
    p = make_provider(
        "p", inventories={"VCPU": 8}, traits=["HW_CPU_X86_AVX"], aggregates=[new_uuid()]
    )
    r = api.delete(f"/resource_providers/{p.uuid}")
    assert r.status == 204
    assert api.get(f"/resource_providers/{p.uuid}").status == 404
    assert not Inventory.objects.exists()
    assert not ResourceProviderTrait.objects.exists()
    assert not ResourceProviderAggregate.objects.exists()


def test_delete_child_leaves_parent(api):
    root = make_provider("root")
    child = make_provider("child", parent=root)
    assert api.delete(f"/resource_providers/{child.uuid}").status == 204
    assert api.delete(f"/resource_providers/{root.uuid}").status == 204


def test_delete_provider_with_allocations_is_409_inuse(api):
    p = make_provider("p", inventories={"VCPU": 8})
    make_allocation(p, make_consumer(), {"VCPU": 2})
    r = api.delete(f"/resource_providers/{p.uuid}")
    assert r.status == 409
    assert r.error_code == "placement.resource_provider.inuse"
    assert Allocation.objects.count() == 1
    assert Inventory.objects.count() == 1


def test_delete_parent_is_409_cannot_delete_parent(api):
    root = make_provider("root")
    make_provider("child", parent=root)
    r = api.delete(f"/resource_providers/{root.uuid}")
    assert r.status == 409
    assert r.error_code == "placement.resource_provider.cannot_delete_parent"
    assert ResourceProvider.objects.count() == 2


def test_delete_unknown_provider_is_404(api):
    uuid = new_uuid()
    r = api.delete(f"/resource_providers/{uuid}")
    assert r.status == 404
    assert f"No resource provider with uuid {uuid} found for delete" in r.error["detail"]


def test_delete_malformed_uuid_is_404(api):
    assert api.delete("/resource_providers/nope").status == 404


# --- policy ---------------------------------------------------------------


@pytest.mark.parametrize(
    "method, path, body",
    [
        ("GET", "/resource_providers", None),
        ("POST", "/resource_providers", {"name": "x"}),
        ("GET", "/resource_providers/{uuid}", None),
        ("PUT", "/resource_providers/{uuid}", {"name": "y"}),
        ("DELETE", "/resource_providers/{uuid}", None),
    ],
)
def test_non_admin_is_forbidden(api_at, method, path, body):
    p = make_provider("p")
    client = api_at("latest", token="user")
    r = client.request(method, path.format(uuid=p.uuid), body)
    assert r.status == 403
    assert ResourceProvider.objects.get(pk=p.pk).name == "p"
