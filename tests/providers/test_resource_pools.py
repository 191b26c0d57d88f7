"""Resource pools through HTTP on PostgreSQL: reports, the pool sync (a sharing provider, its
inventories, one aggregate with its members' roots), hosts on shared storage, statuses,
deleting, and bad input."""

import uuid

import pytest

from tests.providers.pools import (
    aggregates,
    ceph,
    inventories,
    provider,
    put_host,
    put_pool,
    sync_all,
    traits,
    tree_classes,
)

pytestmark = [pytest.mark.django_db, pytest.mark.postgresql]


@pytest.fixture(autouse=True)
def host_settings(settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = ["vcpu", "memory", "disk", "numa", "pci"]
    settings.PLACEMENT_SYNC_ON_REPORT = False
    return settings


def allocate(api, consumer, allocations):
    body = {
        "allocations": {rp: {"resources": res} for rp, res in allocations.items()},
        "project_id": "p",
        "user_id": "u",
        "consumer_generation": None,
        "consumer_type": "INSTANCE",
    }
    response = api.put(f"/allocations/{consumer}", body)
    assert response.status == 204, response


def test_hosts_on_a_pool_share_its_disk_through_one_aggregate(api):
    put_host(api, "s1", disk_pool="ceph1")
    put_host(api, "s2", disk_pool="ceph1")
    put_pool(api, "ceph1", ceph())
    lines = sync_all()
    assert "ok" in lines["ceph1"], lines
    s1, s2, pool = provider(api, "s1"), provider(api, "s2"), provider(api, "ceph1")
    assert "DISK_GB" not in tree_classes(api, s1["uuid"])
    assert "DISK_GB" not in tree_classes(api, s2["uuid"])
    assert inventories(api, pool["uuid"])["DISK_GB"]["total"] == 1000
    assert "MISC_SHARES_VIA_AGGREGATE" in traits(api, pool["uuid"])
    shared = aggregates(api, pool["uuid"])
    assert len(shared) == 1
    assert shared <= aggregates(api, s1["uuid"]) and shared <= aggregates(api, s2["uuid"])
    body = api.get("/api/resource-pools/ceph1/").json
    assert body["provider"] == pool["uuid"]
    assert body["aggregate"] == next(iter(shared))
    assert body["sync_status"] == "ok" and body["stale"] is False
    assert body["usage"] == {}


def test_a_host_may_name_a_pool_that_has_not_reported_yet(api):
    put_host(api, "s1", disk_pool="ceph1")
    sync_all()
    s1 = provider(api, "s1")
    assert "DISK_GB" not in tree_classes(api, s1["uuid"])
    put_pool(api, "ceph1", ceph(members=[]))
    sync_all()
    pool = provider(api, "ceph1")
    assert aggregates(api, pool["uuid"]) <= aggregates(api, s1["uuid"])


def test_members_joining_and_leaving_leave_a_hosts_other_aggregates_alone(api):
    put_host(api, "s1")
    put_host(api, "s2")
    put_pool(api, "ceph1", ceph(members=["s1"]))
    sync_all()
    s1, s2, pool = provider(api, "s1"), provider(api, "s2"), provider(api, "ceph1")
    (pool_aggregate,) = aggregates(api, pool["uuid"])
    other = str(uuid.uuid4())
    s1_now = provider(api, "s1")
    response = api.put(
        f"/resource_providers/{s1['uuid']}/aggregates",
        {
            "resource_provider_generation": s1_now["generation"],
            "aggregates": [*aggregates(api, s1["uuid"]), other],
        },
        version="1.19",
    )
    assert response.status == 200, response
    assert pool_aggregate not in aggregates(api, s2["uuid"])

    put_pool(api, "ceph1", ceph(members=["s2"]))
    lines = sync_all()
    assert "ok" in lines["ceph1"], lines
    assert aggregates(api, s1["uuid"]) == {other}
    assert pool_aggregate in aggregates(api, s2["uuid"])


def test_an_aggregate_names_members(api):
    put_host(api, "s1")
    put_host(api, "s2")
    sync_all()
    rack = str(uuid.uuid4())
    s2 = provider(api, "s2")
    api.put(
        f"/resource_providers/{s2['uuid']}/aggregates",
        {"resource_provider_generation": s2["generation"], "aggregates": [rack]},
        version="1.19",
    )
    put_pool(api, "ceph1", ceph(members=[rack]))
    sync_all()
    pool = provider(api, "ceph1")
    (pool_aggregate,) = aggregates(api, pool["uuid"])
    assert pool_aggregate in aggregates(api, s2["uuid"])
    assert pool_aggregate not in aggregates(api, provider(api, "s1")["uuid"])


def test_a_pool_shrunk_below_its_usage_is_blocked_and_nothing_applied(api):
    put_host(api, "s1", disk_pool="ceph1")
    put_pool(api, "ceph1", ceph(members=[]))
    sync_all()
    pool = provider(api, "ceph1")
    allocate(api, str(uuid.uuid4()), {pool["uuid"]: {"DISK_GB": 600}})
    put_pool(api, "ceph1", ceph(total=500, members=[]))
    lines = sync_all()
    assert "blocked" in lines["ceph1"], lines
    assert inventories(api, pool["uuid"])["DISK_GB"]["total"] == 1000
    body = api.get("/api/resource-pools/ceph1/").json
    assert body["sync_status"] == "blocked"
    assert "DISK_GB" in body["sync_error"]
    assert body["usage"] == {"DISK_GB": 600}
    assert api.get("/api/resource-pools/?sync_status=blocked").json["count"] == 1

    put_pool(api, "ceph1", ceph(total=700, members=[]))
    assert "ok" in sync_all()["ceph1"]
    assert inventories(api, pool["uuid"])["DISK_GB"]["total"] == 700


def test_an_operators_reserved_and_ratio_are_kept(api):
    put_pool(api, "ceph1", ceph(members=[]))
    sync_all()
    pool = provider(api, "ceph1")
    current = inventories(api, pool["uuid"])["DISK_GB"]
    response = api.put(
        f"/resource_providers/{pool['uuid']}/inventories/DISK_GB",
        {
            "resource_provider_generation": provider(api, "ceph1")["generation"],
            "total": current["total"],
            "reserved": 50,
            "allocation_ratio": 2.0,
        },
    )
    assert response.status == 200, response
    put_pool(api, "ceph1", ceph(total=1200, members=[]))
    sync_all()
    now = inventories(api, pool["uuid"])["DISK_GB"]
    assert (now["total"], now["reserved"], now["allocation_ratio"]) == (1200, 50, 2.0)


def test_an_ip_pool_gives_ipv4_addresses(api):
    put_pool(
        api,
        "net1",
        {"kind": "ip_pool", "inventories": {"IPV4_ADDRESS": {"total": 254}}, "members": []},
    )
    sync_all()
    pool = provider(api, "net1")
    assert inventories(api, pool["uuid"])["IPV4_ADDRESS"]["total"] == 254


def test_the_same_report_again_needs_no_sync(api):
    assert put_pool(api, "ceph1", ceph(members=[])).status == 201
    sync_all()
    assert put_pool(api, "ceph1", ceph(members=[])).status == 200
    assert "ceph1" not in sync_all()


def test_delete_is_refused_while_allocated_and_otherwise_removes_the_provider(api):
    put_host(api, "s1", disk_pool="ceph1")
    put_pool(api, "ceph1", ceph(members=["s1"]))
    sync_all()
    pool = provider(api, "ceph1")
    consumer = str(uuid.uuid4())
    allocate(api, consumer, {pool["uuid"]: {"DISK_GB": 10}})
    refused = api.delete("/api/resource-pools/ceph1/")
    assert refused.status == 409 and refused.error_code == "resource_pool.in_use"
    assert api.get(f"/resource_providers/{pool['uuid']}").status == 200
    assert api.delete(f"/allocations/{consumer}").status == 204
    assert api.delete("/api/resource-pools/ceph1/").status == 204
    assert api.get(f"/resource_providers/{pool['uuid']}").status == 404
    assert api.get("/api/resource-pools/ceph1/").status == 404
    assert aggregates(api, provider(api, "s1")["uuid"]) == set()


def test_patch_enables_and_disables_and_nothing_else(api):
    put_pool(api, "ceph1", ceph(members=[]))
    response = api.request(
        "PATCH", "/api/resource-pools/ceph1/", {"enabled": False, "disabled_reason": "maintenance"}
    )
    assert response.status == 200, response
    assert response.json["enabled"] is False
    assert response.json["disabled_reason"] == "maintenance"
    refused = api.request("PATCH", "/api/resource-pools/ceph1/", {"kind": "ip_pool"})
    assert refused.status == 400 and "kind" in refused.json["errors"][0]["detail"]
    response = api.request("PATCH", "/api/resource-pools/ceph1/", {"enabled": True})
    assert response.json["enabled"] is True and response.json["disabled_reason"] == ""


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"kind": "nosuch", "inventories": {}}, "kind"),
        ({"kind": "shared_storage", "inventories": {"VCPU": {"total": 4}}}, "inventories.VCPU"),
        (
            {"kind": "shared_storage", "inventories": {"DISK_GB": {"total": 4, "reserved": 5}}},
            "inventories",
        ),
        ({"kind": "shared_storage", "inventories": {"DISK_GB": {"total": -1}}}, "inventories"),
        ({"kind": "shared_storage", "members": ["not a host!"]}, "members"),
        ({"kind": "shared_storage", "traits": ["lower_case"]}, "traits"),
        ({"kind": "shared_storage", "colour": "blue"}, "colour"),
    ],
)
def test_bad_reports_are_a_400_naming_the_field_and_store_nothing(api, body, field):
    response = api.put("/api/resource-pools/ceph1/", body)
    assert response.status == 400, response
    assert field in response.json["errors"][0]["detail"], response.json
    assert api.get("/api/resource-pools/ceph1/").status == 404


def test_a_pool_report_needs_a_service_or_admin(api):
    reader = api.put("/api/resource-pools/ceph1/", ceph(members=[]), headers={"X-Roles": "reader"})
    assert reader.status == 403
    service = api.put(
        "/api/resource-pools/ceph1/", ceph(members=[]), headers={"X-Roles": "service"}
    )
    assert service.status == 201


def test_stale_pools_are_flagged(api, settings):
    put_pool(api, "ceph1", ceph(members=[]))
    settings.PLACEMENT_POOL_STALE_SECONDS = 0
    body = api.get("/api/resource-pools/").json
    assert body["results"][0]["stale"] is True
    assert api.get("/api/resource-pools/?stale=true").json["count"] == 1


def test_a_pool_plugin_named_by_dotted_path_reads_the_backends_stats(api):
    body = {
        "kind": "tests.providers.plugin_fixtures:CephPoolPlugin",
        "stats": {"max_avail": 3 * 1024**4},
        "members": [],
    }
    put_pool(api, "ceph2", body)
    assert "ok" in sync_all()["ceph2"]
    pool = provider(api, "ceph2")
    assert inventories(api, pool["uuid"])["DISK_GB"]["total"] == 3072


def test_a_raising_pool_plugin_keeps_what_it_gave_last_time(api):
    kind = "tests.providers.plugin_fixtures:BrokenPoolPlugin"
    put_pool(api, "flaky", {"kind": kind, "inventories": {"DISK_GB": {"total": 100}}})
    sync_all()
    put_pool(
        api,
        "flaky",
        {"kind": kind, "inventories": {"DISK_GB": {"total": 200}}, "stats": {"broken": True}},
    )
    assert "partial" in sync_all()["flaky"]
    pool = provider(api, "flaky")
    assert inventories(api, pool["uuid"])["DISK_GB"]["total"] == 100
    body = api.get("/api/resource-pools/flaky/").json
    assert body["sync_status"] == "partial"
    assert "backend unreachable" in body["plugin_errors"][kind]


def test_the_pool_list_reads_a_fixed_number_of_queries(api):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def counted():
        with CaptureQueriesContext(connection) as queries:
            response = api.get("/api/resource-pools/")
        assert response.status == 200
        return len(queries), response.json["count"]

    put_pool(api, "p0", ceph(members=[]))
    sync_all()
    allocate(api, str(uuid.uuid4()), {provider(api, "p0")["uuid"]: {"DISK_GB": 10}})
    one = counted()
    for index in range(1, 6):
        put_pool(api, f"p{index}", ceph(members=[]))
    sync_all()
    for index in range(1, 6):
        pool = provider(api, f"p{index}")["uuid"]
        allocate(api, str(uuid.uuid4()), {pool: {"DISK_GB": 10}})
    six = counted()
    assert (one[1], six[1]) == (1, 6)
    assert six[0] == one[0]
    assert all(
        p["usage"] == {"DISK_GB": 10} for p in api.get("/api/resource-pools/").json["results"]
    )
