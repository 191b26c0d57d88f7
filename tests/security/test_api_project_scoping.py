"""/api/ rows of one project (servers, migrations) are checked against their own project, and
lists hold the caller's project's rows unless a rule grants every project's.

Under ``secure`` with a policy file that lets members act on their own project's servers
(the rules an operator writes for self-service), a member of one project neither sees nor
touches another project's.
"""

import pytest

from tests.conftest import PlacementClient
from tests.scheduling.move_helpers import boot_one, setup_hosts

pytestmark = pytest.mark.django_db

OWN = "role:admin or (role:member and project_id:%(project_id)s)"
PROJECT_RULES = {
    "placement:api:servers:list": "role:member or role:admin",
    "placement:api:servers:show": OWN,
    "placement:api:servers:delete": OWN,
    "placement:api:servers:create": OWN,
    "placement:api:servers:migrate": OWN,
    "placement:api:migrations:list": "role:member or role:admin",
    "placement:api:migrations:show": OWN,
    "placement:api:migrations:confirm": OWN,
    "placement:api:migrations:revert": OWN,
}


def member_of(project, user="ua"):
    return PlacementClient(token=f"{user}:{project}", version="latest", roles="member")


@pytest.fixture
def cloud(settings, policy_file):
    settings.PLACEMENT_POLICY_DEFAULTS = "secure"
    policy_file(PROJECT_RULES)
    admin = PlacementClient(version="latest")
    setup_hosts(admin, names=("cn1", "cn2", "cn3"))
    servers = {
        project: boot_one(admin, name=f"vm-{project}", project_id=project)
        for project in ("projA", "projB")
    }
    return admin, servers


def test_member_cannot_show_another_projects_server(cloud):
    _admin, servers = cloud
    response = member_of("projA").get(f"/api/servers/{servers['projB']['id']}/")
    assert response.status == 403, response
    assert "placement:api:servers:show" in response.error["detail"]


def test_member_shows_its_own_projects_server(cloud):
    _admin, servers = cloud
    response = member_of("projA").get(f"/api/servers/{servers['projA']['id']}/")
    assert response.status == 200, response
    assert response.json["project_id"] == "projA"


def test_member_lists_only_its_own_projects_servers(cloud):
    _admin, servers = cloud
    listed = member_of("projA").get("/api/servers/").json["results"]
    assert [s["id"] for s in listed] == [servers["projA"]["id"]]


def test_reader_with_a_list_rule_lists_only_its_own_project(cloud, policy_file):
    _admin, servers = cloud
    policy_file({**PROJECT_RULES, "placement:api:servers:list": "role:reader"})
    reader = PlacementClient(token="ur:projA", version="latest", roles="reader")
    listed = reader.get("/api/servers/").json["results"]
    assert [s["id"] for s in listed] == [servers["projA"]["id"]]


def test_admin_lists_every_projects_servers(cloud):
    admin, servers = cloud
    listed = admin.get("/api/servers/").json["results"]
    assert {s["id"] for s in listed} == {s["id"] for s in servers.values()}


def test_all_projects_rule_lets_a_member_list_every_project(cloud, policy_file):
    _admin, servers = cloud
    policy_file({**PROJECT_RULES, "placement:api:servers:all_projects": "role:member"})
    listed = member_of("projA").get("/api/servers/").json["results"]
    assert {s["id"] for s in listed} == {s["id"] for s in servers.values()}


def test_member_cannot_delete_another_projects_server(cloud):
    admin, servers = cloud
    victim = servers["projB"]["id"]
    response = member_of("projA").delete(f"/api/servers/{victim}/")
    assert response.status == 403, response
    assert admin.get(f"/api/servers/{victim}/").status == 200
    assert admin.get(f"/allocations/{victim}").json["allocations"]


def test_member_deletes_its_own_projects_server(cloud):
    admin, servers = cloud
    mine = servers["projA"]["id"]
    assert member_of("projA").delete(f"/api/servers/{mine}/").status == 204
    assert admin.get(f"/api/servers/{mine}/").status == 404


def test_member_cannot_create_a_server_for_another_project(cloud):
    admin, _servers = cloud
    body = {"name": "intruder", "flavor": "m1.small", "project_id": "projB", "user_id": "ua"}
    response = member_of("projA").post("/api/servers/", body)
    assert response.status == 403, response
    assert "placement:api:servers:create" in response.error["detail"]
    assert admin.get("/api/servers/?name=intruder").json["count"] == 0


def test_member_creates_a_server_for_its_own_project(cloud):
    body = {"name": "mine", "flavor": "m1.small", "project_id": "projA", "user_id": "ua"}
    assert member_of("projA").post("/api/servers/", body).status == 201


def test_member_cannot_move_another_projects_server(cloud):
    admin, servers = cloud
    response = member_of("projA").post(f"/api/servers/{servers['projB']['id']}/migrate/", {})
    assert response.status == 403, response
    assert admin.get("/api/migrations/").json["count"] == 0


def test_member_cannot_confirm_another_projects_migration(cloud):
    admin, servers = cloud
    moved = admin.post(f"/api/servers/{servers['projB']['id']}/migrate/", {})
    assert moved.status == 201, moved
    migration = moved.json["migration"]["id"]
    response = member_of("projA").post(f"/api/migrations/{migration}/confirm/", {})
    assert response.status == 403, response
    assert admin.get(f"/api/migrations/{migration}/").json["status"] == "migrating"


def test_member_confirms_its_own_projects_migration(cloud):
    _admin, servers = cloud
    member = member_of("projA")
    moved = member.post(f"/api/servers/{servers['projA']['id']}/migrate/", {})
    assert moved.status == 201, moved
    migration = moved.json["migration"]["id"]
    response = member.post(f"/api/migrations/{migration}/confirm/", {})
    assert response.status == 200, response
    assert response.json["migration"]["status"] == "confirmed"


def test_member_lists_only_its_own_projects_migrations(cloud):
    admin, servers = cloud
    for project in ("projA", "projB"):
        assert admin.post(f"/api/servers/{servers[project]['id']}/migrate/", {}).status == 201
    listed = member_of("projA").get("/api/migrations/").json["results"]
    assert [m["server"] for m in listed] == [servers["projA"]["id"]]
    (theirs,) = admin.get(f"/api/migrations/?server={servers['projB']['id']}").json["results"]
    assert member_of("projA").get(f"/api/migrations/{theirs['id']}/").status == 403
