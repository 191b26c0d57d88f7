"""Scheduling on resource pools through HTTP on PostgreSQL: DISK_GB of pool-backed hosts
from the pool, capacity counting a pool's units once, explain showing the pool, IPV4_ADDRESS
from an IP pool, and stale or disabled pools not taken."""

import pytest

from tests.providers.pools import ceph, provider, put_host, put_pool, sync_all, usages
from tests.scheduling.scheduler_helpers import boot, make_flavor

pytestmark = [pytest.mark.django_db, pytest.mark.postgresql]


@pytest.fixture(autouse=True)
def host_settings(settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = ["vcpu", "memory", "disk", "numa", "pci"]
    settings.PLACEMENT_SYNC_ON_REPORT = False
    return settings


@pytest.fixture
def pool_hosts(api):
    put_host(api, "s1", disk_pool="ceph1")
    put_host(api, "s2", disk_pool="ceph1")
    put_pool(api, "ceph1", ceph())
    sync_all()
    make_flavor(api, "p.f", vcpus=1, ram=512, disk=100)
    return provider(api, "ceph1")["uuid"]


def test_capacity_counts_the_pools_units_once(api, pool_hosts):
    body = api.get("/api/capacity/?flavor=p.f").json
    assert body["total"] == 10, body


def test_a_boot_takes_its_disk_from_the_pool(api, pool_hosts):
    response = boot(api, "p.f")
    assert response.status == 201, response
    server = response.json["servers"][0]
    allocations = api.get(f"/allocations/{server['id']}").json["allocations"]
    assert allocations[pool_hosts]["resources"] == {"DISK_GB": 100}
    hosts = [rp for rp in allocations if rp != pool_hosts]
    assert len(hosts) == 1
    assert "DISK_GB" not in allocations[hosts[0]]["resources"]
    assert usages(api, pool_hosts)["DISK_GB"] == 100


def test_boots_stop_when_the_pool_is_full(api, pool_hosts):
    for index in range(10):
        assert boot(api, "p.f", name=f"vm{index}").status == 201
    refused = boot(api, "p.f", name="vm10")
    assert refused.status == 400 or refused.status == 409, refused
    assert usages(api, pool_hosts)["DISK_GB"] == 1000
    assert api.get("/api/capacity/?flavor=p.f").json["total"] == 0


def test_explain_shows_the_pool_in_the_chosen_candidate(api, pool_hosts):
    response = api.post(
        "/api/scheduler/explain/",
        {"name": "vm", "flavor": "p.f", "project_id": "p1", "user_id": "u1"},
    )
    assert response.status == 200, response
    chosen = response.json["chosen"]
    assert pool_hosts in chosen["allocations"]
    assert "ceph1" in [pool["name"] for pool in chosen["pools"]]


def test_a_stale_pool_is_not_taken_and_explain_names_it(api, pool_hosts, settings):
    settings.PLACEMENT_POOL_STALE_SECONDS = 0
    refused = boot(api, "p.f")
    assert refused.status in (400, 409), refused
    assert "ceph1" in str(refused.json)
    assert usages(api, pool_hosts)["DISK_GB"] == 0
    assert api.get("/api/capacity/?flavor=p.f").json["total"] == 0


def test_a_disabled_pool_is_not_taken(api, pool_hosts):
    api.request("PATCH", "/api/resource-pools/ceph1/", {"enabled": False})
    assert boot(api, "p.f").status in (400, 409)
    assert api.get("/api/capacity/?flavor=p.f").json["total"] == 0


def test_a_flavor_asking_for_an_address_gets_a_host_whose_ip_pool_has_one(api):
    put_host(api, "s1")
    put_host(api, "s2")
    put_pool(
        api,
        "net1",
        {"kind": "ip_pool", "inventories": {"IPV4_ADDRESS": {"total": 2}}, "members": ["s2"]},
    )
    sync_all()
    net = provider(api, "net1")["uuid"]
    make_flavor(api, "ip.f", vcpus=1, ram=512, disk=1, extra_specs={"resources:IPV4_ADDRESS": "1"})
    for index in range(2):
        response = boot(api, "ip.f", name=f"vm{index}")
        assert response.status == 201, response
        assert response.json["servers"][0]["host"] == "s2"
    assert usages(api, net)["IPV4_ADDRESS"] == 2
    assert boot(api, "ip.f", name="vm2").status in (400, 409)
