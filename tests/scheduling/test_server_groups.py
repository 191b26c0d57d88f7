"""Server groups through HTTP: each policy and rule, count=N all or none, moves that honour
the group, membership through deletes, and who sees which group."""

import pytest

from scheduling.models import ServerGroupMember
from tests.conftest import PlacementClient
from tests.scheduling.move_helpers import setup_hosts
from tests.scheduling.scheduler_helpers import boot, make_host


def _group(api, policy, name="g", **extra):
    response = api.post("/api/server-groups/", {"name": name, "policy": policy, **extra})
    assert response.status == 201, response
    return response.json


def _boot_into(api, group, **extra):
    return boot(api, "m1.small", scheduler_hints={"group": group["id"]}, **extra)


def _hosts(response):
    return [s["host"] for s in response.json["servers"]]


@pytest.fixture
def three_hosts(api):
    return setup_hosts(api, names=("g1", "g2", "g3"))


def test_anti_affinity_keeps_members_apart_and_lists_them(api, three_hosts):
    group = _group(api, "anti-affinity", name="web")
    assert group["members"] == [] and group["rules"] == {} and group["project_id"] == "admin"
    hosts = []
    for _ in range(3):
        response = _boot_into(api, group)
        assert response.status == 201, response
        hosts += _hosts(response)
    assert sorted(hosts) == ["g1", "g2", "g3"]
    response = _boot_into(api, group)
    assert response.status == 409
    assert response.error_code == "scheduler.no_valid_host"
    step = next(
        s for s in response.error["explain"]["filters"] if s["name"] == "server_group_anti_affinity"
    )
    assert len(step["dropped"]) == 3
    shown = api.get(f"/api/server-groups/{group['id']}/").json
    assert len(shown["members"]) == 3


def test_max_server_per_host_allows_that_many_per_host(api):
    make_host(api, "only")
    api.post("/api/flavors/", {"name": "m1.small", "vcpus": 1, "ram": 512, "disk": 1})
    group = _group(api, "anti-affinity", rules={"max_server_per_host": 2})
    assert group["rules"] == {"max_server_per_host": 2}
    assert _boot_into(api, group, count=2).status == 201
    assert _boot_into(api, group).status == 409


def test_affinity_count_three_lands_on_one_host_and_later_boots_follow(api, three_hosts):
    group = _group(api, "affinity", name="pack")
    response = _boot_into(api, group, count=3)
    assert response.status == 201, response
    hosts = _hosts(response)
    assert len(set(hosts)) == 1
    assert _hosts(_boot_into(api, group)) == hosts[:1]


def test_a_count_boot_is_all_or_none(api, three_hosts):
    group = _group(api, "anti-affinity")
    response = _boot_into(api, group, count=4)
    assert response.status == 409
    assert api.get("/api/servers/").json["count"] == 0
    assert api.get(f"/api/server-groups/{group['id']}/").json["members"] == []
    assert _boot_into(api, group, count=3).status == 201


def test_affinity_full_host_refuses_rather_than_spreading(api):
    make_host(api, "small", {"VCPU": 4, "MEMORY_MB": 16384, "DISK_GB": 100})
    make_host(api, "big", {"VCPU": 64, "MEMORY_MB": 16384, "DISK_GB": 100})
    api.post("/api/flavors/", {"name": "m1.small", "vcpus": 2, "ram": 512, "disk": 1})
    group = _group(api, "affinity")
    first = _hosts(_boot_into(api, group))[0]
    assert first == "big"  # the spreading weighers pick the emptiest
    assert _boot_into(api, group, count=31).status == 201
    response = _boot_into(api, group)
    assert response.status == 409  # "big" is full; "small" is not its members' host


def test_soft_policies_prefer_but_do_not_refuse(api, three_hosts):
    pack = _group(api, "soft-affinity", name="pack")
    hosts = [_hosts(_boot_into(api, pack))[0] for _ in range(3)]
    assert len(set(hosts)) == 1  # together, though the spreading weighers say otherwise
    spread = _group(api, "soft-anti-affinity", name="spread")
    hosts = [_hosts(_boot_into(api, spread))[0] for _ in range(4)]
    assert len(set(hosts[:3])) == 3  # apart while it can be
    assert hosts[3] in {"g1", "g2", "g3"}  # then anywhere, never refused


def test_deleting_a_server_removes_it_from_its_group(api, three_hosts):
    group = _group(api, "anti-affinity")
    servers = [_boot_into(api, group).json["servers"][0] for _ in range(3)]
    assert api.delete(f"/api/servers/{servers[0]['id']}/").status == 204
    members = api.get(f"/api/server-groups/{group['id']}/").json["members"]
    assert members == [servers[1]["id"], servers[2]["id"]]
    assert _boot_into(api, group).json["servers"][0]["host"] == servers[0]["host"]


def test_deleting_a_group_keeps_its_servers(api, three_hosts):
    group = _group(api, "anti-affinity")
    server = _boot_into(api, group).json["servers"][0]
    assert api.delete(f"/api/server-groups/{group['id']}/").status == 204
    assert api.get(f"/api/server-groups/{group['id']}/").status == 404
    assert api.get(f"/api/servers/{server['id']}/").status == 200
    assert not ServerGroupMember.objects.exists()


def test_moves_honour_the_group(api, three_hosts):
    group = _group(api, "anti-affinity")
    servers = [_boot_into(api, group).json["servers"][0] for _ in range(2)]
    free = ({"g1", "g2", "g3"} - {s["host"] for s in servers}).pop()
    response = api.post(f"/api/servers/{servers[0]['id']}/migrate/", {})
    assert response.status == 201, response
    assert response.json["migration"]["dest_host"] == free
    # The other member may not move onto a host a member runs on.
    response = api.post(f"/api/servers/{servers[1]['id']}/migrate/", {"host": free})
    assert response.status == 409
    assert response.error_code == "scheduler.no_valid_host"


def test_an_affinity_member_cannot_leave_its_fellows(api, three_hosts):
    group = _group(api, "affinity")
    first = _boot_into(api, group, count=2).json["servers"][0]
    response = api.post(f"/api/servers/{first['id']}/migrate/", {})
    assert response.status == 409


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": "g", "policy": "sometimes"}, "policy"),
        ({"policy": "affinity"}, "name"),
        ({"name": "g", "policy": "affinity", "rules": {"max_server_per_host": 2}}, "rules"),
        ({"name": "g", "policy": "anti-affinity", "rules": {"max_server_per_host": 0}}, "rules"),
        ({"name": "g", "policy": "anti-affinity", "rules": {"nope": 1}}, "rules"),
        ({"name": "g", "policy": "anti-affinity", "bogus": 1}, "bogus"),
    ],
)
def test_bad_groups_are_400(api, body, field):
    response = api.post("/api/server-groups/", body)
    assert response.status == 400, response
    assert field in response.error["detail"] or field in response.error.get("fields", {})


def test_an_unknown_group_hint_is_400_naming_it(api, three_hosts):
    missing = "8d3b7a46-7f8e-4d1c-9a4b-2a6d5b1c0e9f"
    response = boot(api, "m1.small", scheduler_hints={"group": missing})
    assert response.status == 400, response
    assert missing in response.error["detail"]
    assert boot(api, "m1.small", scheduler_hints={"group": "not-a-uuid"}).status == 400


def test_groups_are_project_scoped_under_secure_defaults(api, three_hosts):
    alice = PlacementClient(token="alice:project-a", roles="member,reader")
    bob = PlacementClient(token="bob:project-b", roles="member,reader")
    mine = alice.post("/api/server-groups/", {"name": "a", "policy": "anti-affinity"})
    assert mine.status == 201, mine
    assert mine.json["project_id"] == "project-a"
    theirs = bob.post("/api/server-groups/", {"name": "b", "policy": "affinity"}).json
    assert [g["name"] for g in alice.get("/api/server-groups/").json["results"]] == ["a"]
    assert alice.get(f"/api/server-groups/{theirs['id']}/").status == 403
    assert alice.delete(f"/api/server-groups/{theirs['id']}/").status == 403
    forged = {"name": "x", "policy": "affinity", "project_id": "project-b"}
    assert alice.post("/api/server-groups/", forged).status == 403
    # Admins see every project's; a boot names only a group its caller may see.
    assert api.get("/api/server-groups/").json["count"] == 2
    response = alice.post(
        "/api/servers/",
        {
            "name": "vm",
            "flavor": "m1.small",
            "project_id": "project-a",
            "user_id": "alice",
            "scheduler_hints": {"group": theirs["id"]},
        },
    )
    assert response.status in (400, 403), response
    assert alice.delete(f"/api/server-groups/{mine.json['id']}/").status == 204
