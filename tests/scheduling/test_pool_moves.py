"""Moves of servers on resource pools through HTTP on PostgreSQL: within one pool the pool's
allocation is held once (it stays with the server; confirm, revert, failures and the
cleanup's expired actions leave it exactly as before); across pools the source pool is held
by the migration consumer and the destination pool claimed, as host resources are."""

import io

import pytest
from django.core.management import call_command

from scheduling.models import Migration
from tests.providers.pools import ceph, provider, put_host, put_pool, sync_all, usages
from tests.scheduling.move_helpers import boot_one, resources_of
from tests.scheduling.scheduler_helpers import make_flavor

pytestmark = [pytest.mark.django_db, pytest.mark.postgresql]


@pytest.fixture(autouse=True)
def host_settings(settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = ["vcpu", "memory", "disk", "numa", "pci"]
    settings.PLACEMENT_SYNC_ON_REPORT = False
    return settings


@pytest.fixture
def one_pool(api):
    put_host(api, "s1", disk_pool="ceph1")
    put_host(api, "s2", disk_pool="ceph1")
    put_pool(api, "ceph1", ceph())
    sync_all()
    make_flavor(api, "p.f", vcpus=1, ram=512, disk=100)
    return provider(api, "ceph1")["uuid"]


def pool_used(api, pool):
    return usages(api, pool).get("DISK_GB", 0)


def migrate(api, server):
    response = api.post(f"/api/servers/{server['id']}/migrate/", {})
    assert response.status == 201, response
    migration = response.json["migration"]
    assert migration["dest"] != migration["source"]
    return migration


def settle(api, migration, verb):
    response = api.post(f"/api/migrations/{migration['id']}/{verb}/", {})
    assert response.status == 200, response


def test_a_move_within_a_pool_holds_it_once_through_confirm_and_revert(api, one_pool):
    first = boot_one(api, "p.f", name="vm1")
    moving = migrate(api, first)
    assert pool_used(api, one_pool) == 100
    assert one_pool not in resources_of(api, moving["id"])
    assert resources_of(api, first["id"])[one_pool] == {"DISK_GB": 100}
    settle(api, moving, "confirm")
    assert pool_used(api, one_pool) == 100

    second = boot_one(api, "p.f", name="vm2")
    assert pool_used(api, one_pool) == 200
    before = resources_of(api, second["id"])
    moving = migrate(api, second)
    assert pool_used(api, one_pool) == 200
    settle(api, moving, "revert")
    assert pool_used(api, one_pool) == 200
    assert resources_of(api, second["id"]) == before
    assert resources_of(api, second["id"])[one_pool] == {"DISK_GB": 100}


@pytest.mark.parametrize("verb", ["confirm", "revert"])
def test_a_move_within_a_full_pool_takes_nothing_more(api, one_pool, verb):
    servers = [boot_one(api, "p.f", name=f"vm{i}") for i in range(10)]
    assert pool_used(api, one_pool) == 1000
    assert api.get("/api/capacity/?flavor=p.f").json["total"] == 0
    moving = migrate(api, servers[0])
    assert pool_used(api, one_pool) == 1000
    assert resources_of(api, servers[0]["id"])[one_pool] == {"DISK_GB": 100}
    settle(api, moving, verb)
    assert pool_used(api, one_pool) == 1000


def test_a_move_prefers_a_host_of_the_servers_pool(api, one_pool):
    server = boot_one(api, "p.f")
    put_host(api, "local1", vcpus=64, memory_mb=262144)  # local disk, the most room of all
    sync_all()
    for _ in range(3):
        moving = migrate(api, server)
        assert moving["dest"] in ("s1", "s2") or moving["dest"] in {
            provider(api, "s1")["uuid"],
            provider(api, "s2")["uuid"],
        }, moving
        settle(api, moving, "revert")


@pytest.mark.parametrize(("disk", "during", "confirmed"), [(200, 200, 200), (50, 100, 50)])
def test_a_resize_within_a_pool_holds_the_larger_amount_and_settles_exactly(
    api, one_pool, settings, disk, during, confirmed
):
    make_flavor(api, "p.other", vcpus=1, ram=512, disk=disk)
    server = boot_one(api, "p.f")
    before = resources_of(api, server["id"])
    response = api.post(f"/api/servers/{server['id']}/resize/", {"flavor": "p.other"})
    assert response.status == 201, response
    resizing = response.json["migration"]
    assert pool_used(api, one_pool) == during
    settle(api, resizing, "revert")
    assert pool_used(api, one_pool) == 100
    assert resources_of(api, server["id"]) == before

    response = api.post(f"/api/servers/{server['id']}/resize/", {"flavor": "p.other"})
    settle(api, response.json["migration"], "confirm")
    assert pool_used(api, one_pool) == confirmed


@pytest.mark.parametrize("action", ["confirm", "revert"])
def test_the_cleanups_expired_actions_leave_the_pool_as_before(api, one_pool, settings, action):
    server = boot_one(api, "p.f")
    before = resources_of(api, server["id"])
    migrate(api, server)
    settings.PLACEMENT_MIGRATION_EXPIRED_ACTION = action
    Migration.objects.update(lease_started_at="2000-01-01T00:00:00Z")
    call_command("cleanup_migrations", stdout=io.StringIO())
    assert pool_used(api, one_pool) == 100
    assert Migration.objects.get().status == {"confirm": "confirmed", "revert": "reverted"}[action]
    if action == "revert":
        assert resources_of(api, server["id"]) == before


def test_a_failed_move_within_a_pool_puts_it_back(api, one_pool):
    server = boot_one(api, "p.f")
    before = resources_of(api, server["id"])
    moving = migrate(api, server)
    response = api.post(f"/api/migrations/{moving['id']}/fail/", {})
    assert response.status == 200, response
    assert pool_used(api, one_pool) == 100
    assert resources_of(api, server["id"]) == before


@pytest.fixture
def two_pools(api):
    put_host(api, "s1", disk_pool="ceph1")
    put_host(api, "s2", disk_pool="ceph2")
    put_pool(api, "ceph1", ceph(members=[]))
    put_pool(api, "ceph2", ceph(members=[]))
    sync_all()
    make_flavor(api, "p.f", vcpus=1, ram=512, disk=100)
    return provider(api, "ceph1")["uuid"], provider(api, "ceph2")["uuid"]


def held_by(api, consumer):
    response = api.get(f"/allocations/{consumer}")
    assert response.status == 200, response
    return {rp: a["resources"] for rp, a in response.json["allocations"].items()}


@pytest.mark.parametrize("verb", ["confirm", "revert"])
def test_a_move_across_pools_holds_both_as_host_resources(api, two_pools, verb):
    one, two = two_pools
    server = boot_one(api, "p.f")
    before = resources_of(api, server["id"])
    source = one if server["host"] == "s1" else two
    dest = two if source == one else one
    moving = migrate(api, server)
    assert resources_of(api, moving["id"])[source] == {"DISK_GB": 100}
    assert resources_of(api, server["id"])[dest] == {"DISK_GB": 100}
    assert (pool_used(api, source), pool_used(api, dest)) == (100, 100)
    settle(api, moving, verb)
    expected = (0, 100) if verb == "confirm" else (100, 0)
    assert (pool_used(api, source), pool_used(api, dest)) == expected
    assert held_by(api, moving["id"]) == {}  # the migration consumer holds nothing after
    if verb == "revert":
        assert resources_of(api, server["id"]) == before
    else:
        assert source not in resources_of(api, server["id"])


@pytest.mark.parametrize("action", ["confirm", "revert"])
def test_the_cleanups_expired_actions_settle_a_move_across_pools_exactly(
    api, two_pools, settings, action
):
    one, two = two_pools
    server = boot_one(api, "p.f")
    before = resources_of(api, server["id"])
    source = one if server["host"] == "s1" else two
    dest = two if source == one else one
    moving = migrate(api, server)
    settings.PLACEMENT_MIGRATION_EXPIRED_ACTION = action
    Migration.objects.update(lease_started_at="2000-01-01T00:00:00Z")
    call_command("cleanup_migrations", stdout=io.StringIO())
    expected = (0, 100) if action == "confirm" else (100, 0)
    assert (pool_used(api, source), pool_used(api, dest)) == expected
    assert held_by(api, moving["id"]) == {}
    if action == "revert":
        assert resources_of(api, server["id"]) == before
