"""POST/GET/DELETE /api/servers/: multi-instance requests, no valid host with the funnel,
alternates, claims retried on conflicts."""

import pytest

from allocations.models import Allocation, Consumer
from allocations.services.allocations import AllocationRefused
from placementsite.core.exceptions import ConcurrentUpdate
from scheduling.models import Server
from scheduling.services import claims
from tests.scheduling.scheduler_helpers import boot, make_flavor, make_host, usage


@pytest.fixture
def flavor(api):
    return make_flavor(api, "f", vcpus=2, ram=2048, disk=10)


def test_multi_instance_request_claims_as_it_goes(api, flavor):
    host = make_host(api, "cn1")  # room for exactly 4
    response = boot(api, "f", name="web", count=4)
    assert response.status == 201, response
    servers = response.json["servers"]
    assert [s["name"] for s in servers] == ["web-1", "web-2", "web-3", "web-4"]
    assert {s["host_uuid"] for s in servers} == {host}
    assert usage(api, host) == {"VCPU": 8, "MEMORY_MB": 8192, "DISK_GB": 40}


def test_multi_instance_request_that_cannot_all_fit_leaves_nothing_claimed(api, flavor):
    host = make_host(api, "cn1")
    assert boot(api, "f", name="one").status == 201
    response = boot(api, "f", name="web", count=4)  # only 3 more fit
    assert response.status == 409
    assert response.error_code == "scheduler.no_valid_host"
    assert "web-4" in response.error["detail"]
    assert usage(api, host)["VCPU"] == 2
    assert Server.objects.count() == 1
    assert Consumer.objects.count() == 1


def test_count_is_bounded(api, flavor):
    make_host(api, "cn1")
    assert boot(api, "f", count=0).status == 400
    assert boot(api, "f", count=101).status == 400


def test_no_valid_host_answers_with_the_funnel(api):
    make_host(api, "small", {"VCPU": 1, "MEMORY_MB": 1024, "DISK_GB": 10})
    make_host(api, "avx", traits=["HW_CPU_X86_AVX2"])
    make_flavor(
        api, "big", vcpus=4, ram=2048, disk=5, extra_specs={"trait:HW_CPU_X86_AVX2": "forbidden"}
    )
    response = boot(api, "big")
    assert response.status == 409
    error = response.error
    assert error["code"] == "scheduler.no_valid_host"
    funnel = error["explain"]
    assert funnel["hosts"] == 2 and funnel["candidate_hosts"] == 0
    (group,) = funnel["groups"]
    assert group["fitting"] == 0 and group["left_out"] == 2
    assert group["reasons"] == {"capacity": 1, "forbidden_trait": 1}
    reasons = {e["provider"]: e["reasons"] for e in group["left_out_examples"]}
    assert any("VCPU" in r for r in reasons["small"])
    assert any("HW_CPU_X86_AVX2" in r for r in reasons["avx"])
    assert funnel["chosen"] is None


def test_explain_claims_nothing_and_shows_each_step(api, flavor):
    a = make_host(api, "a")
    make_host(api, "b", {"VCPU": 8, "MEMORY_MB": 4096, "DISK_GB": 100})
    body = {"name": "x", "flavor": "f", "project_id": "p", "user_id": "u"}
    funnel = api.post("/api/scheduler/explain/", body).json
    assert funnel["flavor"] == "f"
    assert funnel["candidate_hosts"] == 2
    assert [s["name"] for s in funnel["filters"]][0] == "host_enabled"
    assert all(s["passed"] == 2 for s in funnel["filters"])
    assert [w["host"] for w in funnel["weighed"]] == ["a", "b"]  # more RAM free
    assert set(funnel["weighed"][0]["weights"]) == {
        "ram",
        "cpu",
        "disk",
        "server_group_soft_affinity",
        "server_group_soft_anti_affinity",
    }
    assert funnel["chosen"]["host_uuid"] == a
    assert funnel["chosen"]["allocations"] == {a: {"VCPU": 2, "MEMORY_MB": 2048, "DISK_GB": 10}}
    assert Allocation.objects.count() == 0 and Server.objects.count() == 0


def test_alternates_are_returned_and_stored(api, settings, flavor):
    settings.PLACEMENT_SCHEDULER_MAX_ATTEMPTS = 3
    for index, ram in enumerate((16384, 8192, 4096, 2048)):
        make_host(api, f"cn{index}", {"VCPU": 8, "MEMORY_MB": ram, "DISK_GB": 100})
    server = boot(api, "f").json["servers"][0]
    assert server["host"] == "cn0"
    assert [a["host"] for a in server["alternates"]] == ["cn1", "cn2"]
    first = server["alternates"][0]
    assert first["allocations"] == {
        first["host_uuid"]: {"VCPU": 2, "MEMORY_MB": 2048, "DISK_GB": 10}
    }
    stored = api.get(f"/api/servers/{server['id']}/").json
    assert stored["alternates"] == server["alternates"]
    settings.PLACEMENT_SCHEDULER_MAX_ATTEMPTS = 1
    assert boot(api, "f").json["servers"][0]["alternates"] == []


def test_host_subset_size_picks_among_the_best(api, settings, flavor):
    settings.PLACEMENT_SCHEDULER_HOST_SUBSET_SIZE = 2
    settings.PLACEMENT_SCHEDULER_WEIGHERS = "ram"
    for index, ram in enumerate((65536, 65536, 2048)):
        make_host(api, f"cn{index}", {"VCPU": 64, "MEMORY_MB": ram, "DISK_GB": 1000})
    hosts = {boot(api, "f").json["servers"][0]["host"] for _ in range(12)}
    assert hosts <= {"cn0", "cn1"} and len(hosts) == 2


def test_capacity_taken_meanwhile_moves_to_the_next_host(api, flavor, monkeypatch):
    first = make_host(api, "cn0", {"VCPU": 8, "MEMORY_MB": 16384, "DISK_GB": 100})
    make_host(api, "cn1", {"VCPU": 8, "MEMORY_MB": 8192, "DISK_GB": 100})
    real = claims.allocations_replace
    calls = []

    def first_host_full(*, consumers, **options):
        calls.append(consumers)
        if len(calls) == 1:
            raise AllocationRefused("Unable to allocate inventory: would exceed", first)
        return real(consumers=consumers, **options)

    monkeypatch.setattr(claims, "allocations_replace", first_host_full)
    server = boot(api, "f").json["servers"][0]
    assert server["host"] == "cn1"
    assert len(calls) == 2


def test_concurrent_update_is_retried_on_the_same_host(api, flavor, monkeypatch):
    host = make_host(api, "cn0")
    make_host(api, "cn1", {"VCPU": 8, "MEMORY_MB": 8192, "DISK_GB": 100})
    real = claims.allocations_replace
    calls = []

    def conflicts_twice(*, consumers, **options):
        calls.append(consumers)
        if len(calls) <= 2:
            raise ConcurrentUpdate("Another thread concurrently updated the data.")
        return real(consumers=consumers, **options)

    monkeypatch.setattr(claims, "allocations_replace", conflicts_twice)
    server = boot(api, "f").json["servers"][0]
    assert server["host_uuid"] == host
    assert len(calls) == 3
    assert {c.allocations.keys() == {host} for call in calls for c in call} == {True}
    assert usage(api, host)["VCPU"] == 2


def test_list_show_and_delete_free_allocations(api, flavor):
    host = make_host(api, "cn1")
    ids = [s["id"] for s in boot(api, "f", name="vm", count=2).json["servers"]]
    listed = api.get("/api/servers/?host=cn1").json
    assert listed["count"] == 2
    shown = api.get(f"/api/servers/{ids[0]}/").json
    assert shown["flavor"] == "f" and shown["host"] == "cn1"
    allocations = api.get(f"/allocations/{ids[0]}").json["allocations"]
    assert allocations[host]["resources"] == {"VCPU": 2, "MEMORY_MB": 2048, "DISK_GB": 10}

    assert api.delete(f"/api/servers/{ids[0]}/").status == 204
    assert api.get(f"/api/servers/{ids[0]}/").status == 404
    assert api.get(f"/allocations/{ids[0]}").json["allocations"] == {}
    assert usage(api, host)["VCPU"] == 2
    assert api.delete(f"/api/servers/{ids[0]}/").status == 404
    assert api.get("/api/servers/not-a-uuid/").status == 404


def test_bad_bodies_are_400_and_unknown_flavor_named(api, flavor):
    make_host(api, "cn1")
    response = api.post("/api/servers/", {"name": "x", "flavor": "nope", "project_id": "p"})
    assert response.status == 400
    assert {"flavor", "user_id"} <= set(response.error["fields"])
    assert "No flavor nope" in response.error["detail"]
    assert api.post("/api/servers/", [1, 2]).status == 400


def test_disabled_flavor_cannot_boot(api, flavor):
    make_host(api, "cn1")
    api.request("PATCH", "/api/flavors/f/", {"disabled": True})
    response = boot(api, "f")
    assert response.status == 400
    assert "disabled" in response.error["detail"]


def test_servers_need_admin_under_legacy_policy(api, flavor):
    make_host(api, "cn1")
    body = {"name": "x", "flavor": "f", "project_id": "p", "user_id": "u"}
    response = api.post("/api/servers/", body, token="alice:p1")
    assert response.status == 403
    assert "placement:api:servers:create" in response.error["detail"]
    assert api.get("/api/flavors/", token="alice:p1").status == 200
