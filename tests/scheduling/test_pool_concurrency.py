"""Clients booting on a nearly full resource pool (shared disk, or an IP pool's addresses
asked as ``requested_resources``) at once, through HTTP against a gunicorn of
several worker processes on PostgreSQL: the pool is never over-allocated, every request is
placed (201) or refused with scheduler.no_valid_host (409), and what the pool holds is what
the servers hold."""

from collections import Counter

import pytest
from django.db.models import Sum

from allocations.models import Allocation
from providers.models import ResourcePool
from providers.services.compute_nodes import compute_node_report
from providers.services.host_sync import compute_nodes_sync
from providers.services.pool_sync import resource_pools_sync
from providers.services.resource_pools import resource_pool_report
from scheduling.models import Flavor, Server
from tests.allocations.test_concurrency import Client, race, server  # noqa: F401  (fixture)

pytestmark = [
    pytest.mark.live,
    pytest.mark.postgresql,
    pytest.mark.django_db(transaction=True),
]

CLIENTS = 12
BOOTS_PER_CLIENT = 2
HOSTS = 4
POOL_SLOTS = 10  # DISK_GB 1000 for flavors of 100: the hosts have room for far more


def test_boots_racing_for_a_nearly_full_pool_never_over_allocate_it(server, settings):  # noqa: F811
    settings.PLACEMENT_RESOURCE_PLUGINS = ["vcpu", "memory", "disk", "numa", "pci"]
    settings.PLACEMENT_SYNC_ON_REPORT = False
    for index in range(HOSTS):
        compute_node_report(
            hostname=f"s{index}",
            report={"vcpus": 16, "memory_mb": 65536, "local_gb": 500, "disk_pool": "ceph1"},
        )
    resource_pool_report(
        name="ceph1",
        report={
            "kind": "shared_storage",
            "inventories": {"DISK_GB": {"total": 100 * POOL_SLOTS}},
            "members": [],
        },
    )
    compute_nodes_sync(due_only=False)
    assert [o.status for o in resource_pools_sync(due_only=False)] == ["ok"]
    pool = ResourcePool.objects.get(name="ceph1").provider
    Flavor.objects.create(name="p.f", vcpus=1, ram=512, disk=100)
    clients = [Client(server) for _ in range(CLIENTS)]
    status, body = clients[0].call(
        "POST",
        "/api/servers/",
        {"name": "first", "flavor": "p.f", "project_id": "p", "user_id": "u"},
    )
    assert status == 201, body

    def work(client, index):
        answers = []
        for n in range(BOOTS_PER_CLIENT):
            request = {"name": f"c{index}-{n}", "flavor": "p.f", "project_id": "p", "user_id": "u"}
            status, payload = client.call("POST", "/api/servers/", request)
            code = payload["errors"][0]["code"] if status >= 400 else None
            answers.append((status, code))
        return answers

    answers = [a for per_client in race(clients, work) for a in per_client]
    outcomes = Counter(answers)
    assert set(outcomes) <= {(201, None), (409, "scheduler.no_valid_host")}, outcomes
    placed = outcomes[(201, None)]
    assert 0 < placed <= POOL_SLOTS - 1
    held = Allocation.objects.filter(resource_provider=pool).aggregate(n=Sum("used"))["n"]
    assert held <= 100 * POOL_SLOTS
    assert held == 100 * (placed + 1) == 100 * Server.objects.count()


IP_SLOTS = 6


def test_boots_racing_for_the_last_addresses_of_an_ip_pool_never_over_allocate_it(server, settings):  # noqa: F811
    settings.PLACEMENT_RESOURCE_PLUGINS = ["vcpu", "memory", "disk", "numa", "pci"]
    settings.PLACEMENT_SYNC_ON_REPORT = False
    for index in range(HOSTS):
        compute_node_report(
            hostname=f"s{index}", report={"vcpus": 16, "memory_mb": 65536, "local_gb": 500}
        )
    resource_pool_report(
        name="net1",
        report={
            "kind": "ip_pool",
            "inventories": {"IPV4_ADDRESS": {"total": IP_SLOTS}},
            "members": [f"s{index}" for index in range(HOSTS)],
        },
    )
    compute_nodes_sync(due_only=False)
    assert [o.status for o in resource_pools_sync(due_only=False)] == ["ok"]
    pool = ResourcePool.objects.get(name="net1").provider
    Flavor.objects.create(name="small", vcpus=1, ram=512, disk=1)
    asked = [{"resources": {"IPV4_ADDRESS": 1}}]
    clients = [Client(server) for _ in range(CLIENTS)]
    status, body = clients[0].call(
        "POST",
        "/api/servers/",
        {
            "name": "first",
            "flavor": "small",
            "project_id": "p",
            "user_id": "u",
            "requested_resources": asked,
        },
    )
    assert status == 201, body

    def work(client, index):
        answers = []
        for n in range(BOOTS_PER_CLIENT):
            request = {
                "name": f"c{index}-{n}",
                "flavor": "small",
                "project_id": "p",
                "user_id": "u",
                "requested_resources": asked,
            }
            status, payload = client.call("POST", "/api/servers/", request)
            code = payload["errors"][0]["code"] if status >= 400 else None
            answers.append((status, code))
        return answers

    answers = [a for per_client in race(clients, work) for a in per_client]
    outcomes = Counter(answers)
    assert set(outcomes) <= {(201, None), (409, "scheduler.no_valid_host")}, outcomes
    placed = outcomes[(201, None)]
    # The hosts have room for every boot: only the pool's addresses run out.
    assert 0 < placed <= IP_SLOTS - 1, outcomes
    held = Allocation.objects.filter(resource_provider=pool).aggregate(n=Sum("used"))["n"]
    assert held <= IP_SLOTS
    assert held == placed + 1 == Server.objects.count()
