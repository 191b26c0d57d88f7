"""The issue's acceptance contract, through the HTTP stack, on providers made through the
Placement API alone (no host reports)."""

from tests.scheduling.scheduler_helpers import make_host, usage


def test_contract(api):
    hosts = [make_host(api, "cn1"), make_host(api, "cn2")]
    response = api.post(
        "/api/flavors/",
        {"name": "bar.small", "vcpus": 2, "ram": 2048, "disk": 10, "extra_specs": {}},
    )
    assert response.status == 201, response

    capacity = api.get("/api/capacity/?flavor=bar.small")
    assert capacity.status == 200, capacity
    assert capacity.json["flavor"] == "bar.small"
    assert capacity.json["total"] == 8
    assert sorted(h["uuid"] for h in capacity.json["hosts"]) == sorted(hosts)
    assert {h["fits"] for h in capacity.json["hosts"]} == {4}
    assert {h["name"] for h in capacity.json["hosts"]} == {"cn1", "cn2"}

    ids = []
    for index in range(8):
        response = api.post(
            "/api/servers/",
            {"name": f"vm{index}", "flavor": "bar.small", "project_id": "p", "user_id": "u"},
        )
        assert response.status == 201, response
        (server,) = response.json["servers"]
        assert set(server) >= {"id", "name", "host", "host_uuid", "allocations", "alternates"}
        assert server["host_uuid"] in hosts
        assert server["allocations"] == {
            server["host_uuid"]: {"VCPU": 2, "MEMORY_MB": 2048, "DISK_GB": 10}
        }
        ids.append(server["id"])
    assert usage(api, hosts[0])["VCPU"] == usage(api, hosts[1])["VCPU"] == 8

    ninth = api.post(
        "/api/servers/",
        {"name": "vm9", "flavor": "bar.small", "project_id": "p", "user_id": "u"},
    )
    assert ninth.status == 409, ninth
    assert "no_valid_host" in ninth.error_code
    assert api.get("/api/capacity/?flavor=bar.small").json["total"] == 0

    assert api.delete(f"/api/servers/{ids[0]}/").status == 204
    assert api.get("/api/capacity/?flavor=bar.small").json["total"] == 1

    explained = api.post(
        "/api/scheduler/explain/",
        {"name": "vm10", "flavor": "bar.small", "project_id": "p", "user_id": "u"},
    )
    assert explained.status == 200, explained
