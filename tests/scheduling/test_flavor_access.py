"""Private flavors (``is_public: false``) are listed and used only by the projects given them
(``/api/flavors/{id}/access/``, as Nova's flavor access) and by admins."""

import pytest

from tests.conftest import PlacementClient
from tests.scheduling.scheduler_helpers import make_flavor, make_host

pytestmark = pytest.mark.django_db


def caller(project, roles="member", user="uc"):
    return PlacementClient(token=f"{user}:{project}", version="latest", roles=roles)


@pytest.fixture
def flavors(api, settings, policy_file):
    # Members may boot, explain and count: only flavor access decides which flavors.
    settings.PLACEMENT_POLICY_DEFAULTS = "secure"
    policy_file(
        {
            "placement:api:servers:create": "role:member",
            "placement:api:scheduler:explain": "role:member",
            "placement:api:capacity:list": "role:member",
        }
    )
    make_host(api, "cn1")
    make_flavor(api, "public", vcpus=1, ram=512, disk=1)
    private = make_flavor(
        api,
        "private",
        vcpus=1,
        ram=512,
        disk=1,
        is_public=False,
        extra_specs={"hw:cpu_policy": "shared"},
    )
    return private


def names(response):
    assert response.status == 200, response
    return [f["name"] for f in response.json["results"]]


def test_private_flavor_is_not_listed_to_other_projects(flavors):
    assert names(caller("projC").get("/api/flavors/")) == ["public"]


def test_private_flavor_is_not_listed_to_a_token_without_roles(flavors):
    assert names(caller("projC", roles="").get("/api/flavors/")) == ["public"]


@pytest.mark.parametrize("defaults", ["legacy", "admin-only"])
def test_private_flavor_is_not_listed_under_other_defaults(flavors, settings, defaults):
    settings.PLACEMENT_POLICY_DEFAULTS = defaults
    assert names(caller("projC").get("/api/flavors/")) == ["public"]


def test_private_flavor_cannot_be_shown_by_name_or_id_elsewhere(flavors):
    assert caller("projC").get("/api/flavors/private/").status == 404
    assert caller("projC").get(f"/api/flavors/{flavors['id']}/").status == 404


def test_admin_lists_every_flavor(api, flavors):
    assert names(api.get("/api/flavors/")) == ["private", "public"]


def test_project_given_access_lists_and_shows_it(api, flavors):
    response = api.post("/api/flavors/private/access/", {"project_id": "projA"})
    assert response.status == 201, response
    assert response.json == {"flavor": "private", "projects": ["projA"]}
    assert names(caller("projA").get("/api/flavors/")) == ["private", "public"]
    shown = caller("projA").get("/api/flavors/private/")
    assert shown.status == 200 and shown.json["extra_specs"] == {"hw:cpu_policy": "shared"}
    assert names(caller("projC").get("/api/flavors/")) == ["public"]


def test_private_flavor_cannot_be_booted_elsewhere(flavors):
    body = {"name": "vm", "flavor": "private", "project_id": "projC", "user_id": "uc"}
    response = caller("projC").post("/api/servers/", body)
    assert response.status == 400, response
    assert response.error["fields"] == {"flavor": ["No flavor private."]}


def test_private_flavor_cannot_be_explained_or_counted_elsewhere(flavors):
    body = {"name": "vm", "flavor": "private", "project_id": "projC", "user_id": "uc"}
    assert caller("projC").post("/api/scheduler/explain/", body).status == 400
    assert caller("projC").get("/api/capacity/?flavor=private").status == 400


def test_project_given_access_boots_it(api, flavors):
    api.post("/api/flavors/private/access/", {"project_id": "projA"})
    body = {"name": "vm", "flavor": "private", "project_id": "projA", "user_id": "ua"}
    assert caller("projA").post("/api/servers/", body).status == 201


def test_access_removed_hides_it_again(api, flavors):
    api.post("/api/flavors/private/access/", {"project_id": "projA"})
    assert api.delete("/api/flavors/private/access/projA/").status == 204
    assert names(caller("projA").get("/api/flavors/")) == ["public"]
    assert api.get("/api/flavors/private/access/").json["projects"] == []


def test_access_to_a_public_flavor_is_a_conflict(api, flavors):
    response = api.post("/api/flavors/public/access/", {"project_id": "projA"})
    assert response.status == 409
    assert response.error_code == "scheduler.flavor_access_conflict"


def test_access_given_twice_is_a_conflict(api, flavors):
    api.post("/api/flavors/private/access/", {"project_id": "projA"})
    response = api.post("/api/flavors/private/access/", {"project_id": "projA"})
    assert response.status == 409
    assert response.error_code == "scheduler.flavor_access_conflict"


def test_removing_access_a_project_lacks_is_404(api, flavors):
    assert api.delete("/api/flavors/private/access/projZ/").status == 404


def test_access_is_managed_by_admins_only(flavors):
    member = caller("projA")
    assert member.post("/api/flavors/private/access/", {"project_id": "projA"}).status in (
        403,
        404,
    )
    assert member.get("/api/flavors/public/access/").status == 403


def test_access_body_is_checked(api, flavors):
    response = api.post("/api/flavors/private/access/", {})
    assert response.status == 400
    assert response.error["fields"] == {"project_id": ["This field is required."]}
