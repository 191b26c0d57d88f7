"""What a new host's first sync costs the database, and the provider of its name it still
never takes over now that the name is looked up only when the new tree collides on it."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from providers.models import ComputeNode, ResourcePool
from tests.providers.hosts import report, sync, tree
from tests.providers.pools import ceph, put_pool, sync_all

pytestmark = [pytest.mark.django_db, pytest.mark.postgresql]

SERVICE = {"token": "svc:service-project", "headers": {"X-Roles": "service"}}
TWO_CELLS = {
    "cells": [
        {"id": 0, "cpus": [0, 1, 2, 3], "memory_mb": 32768},
        {"id": 1, "cpus": [4, 5, 6, 7], "memory_mb": 32768},
    ]
}
# New hosts (up to host_sync.READ_BATCH of them) in one transaction: their rows read, then
# locked; a savepoint, the trees' ids taken and their providers, inventories and traits (those
# held first) inserted in a savepoint of their own, the inventory history, the hosts' rows in
# one update (BEGIN and COMMIT counted); the run's own reads (who needs a sync, the classes
# and traits known) besides. The same for any number of hosts.
NEW_HOSTS_STATEMENTS = 19


@pytest.fixture(autouse=True)
def host_settings(settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = ["vcpu", "memory", "disk", "numa", "pci"]
    settings.PLACEMENT_SYNC_ON_REPORT = False


def synced(api, hostnames):
    """The statements of one sync of ``hostnames``, each reported new first."""
    for hostname in hostnames:
        body = report(vcpus=8, numa_topology=TWO_CELLS)
        assert api.put(f"/api/compute-nodes/{hostname}/", body, **SERVICE).status == 201
    with CaptureQueriesContext(connection) as queries:
        sync()
    statuses = ComputeNode.objects.filter(hostname__in=hostnames).values_list(
        "sync_status", flat=True
    )
    assert set(statuses) == {"ok"}
    return len(queries)


def test_new_hosts_cost_a_fixed_number_of_statements(api):
    """New hosts' trees are written together: four hosts cost the statements of two."""
    two = synced(api, ["st-1", "st-2"])
    four = synced(api, ["st-3", "st-4", "st-5", "st-6"])
    assert two == four == NEW_HOSTS_STATEMENTS
    cells = {name for name in tree(api, "st-6") if name != "st-6"}
    assert cells == {"st-6_NUMA0", "st-6_NUMA1"}


def test_a_provider_made_before_a_pools_first_sync_is_not_taken_over(api):
    """A provider of the pool's name made through the Placement API before the pool's first
    sync stays its maker's: the pool fails with a reason naming it, its inventory untouched."""
    put_pool(api, "taken-pool", ceph(members=()))
    made = api.post("/resource_providers", {"name": "taken-pool"}).json
    sync_all()
    pool = ResourcePool.objects.get(name="taken-pool")
    assert pool.sync_status == ResourcePool.SyncStatus.FAILED
    assert made["uuid"] in pool.sync_error and "did not create" in pool.sync_error
    assert api.get(f"/resource_providers/{made['uuid']}/inventories").json["inventories"] == {}


def test_a_changed_hosts_inventories_move_each_changed_provider_one_generation(api):
    """A changed host's inventories are written together (its tree's rows held): each
    provider whose inventory changed is one generation further and shows the new figures;
    a provider whose inventory did not change keeps its generation."""
    body = report(vcpus=8, local_gb=500, numa_topology=TWO_CELLS)
    assert api.put("/api/compute-nodes/gen-1/", body, **SERVICE).status == 201
    sync()
    before = tree(api, "gen-1")
    cells = [dict(cell) for cell in TWO_CELLS["cells"]]
    cells[1]["memory_mb"] = 65536
    body = report(vcpus=8, local_gb=900, numa_topology={"cells": cells})
    assert api.put("/api/compute-nodes/gen-1/", body, **SERVICE).status == 200
    sync()
    after = tree(api, "gen-1")
    moved = {name: after[name]["generation"] - before[name]["generation"] for name in after}
    assert moved == {"gen-1": 1, "gen-1_NUMA0": 0, "gen-1_NUMA1": 1}
    assert after["gen-1"]["inventories"]["DISK_GB"]["total"] == 900
    assert after["gen-1_NUMA1"]["inventories"]["MEMORY_MB"]["total"] == 65536
