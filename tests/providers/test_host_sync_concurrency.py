"""Syncs racing each other and allocation writes, in several processes, on PostgreSQL.

Second, syncs that reshape (NUMA turned on and off under running servers, two sync processes
at a time) while clients boot and delete servers through /api/: every server holds exactly
its flavor, no deleted server holds anything, nothing is over-allocated.

A gunicorn with several worker processes takes allocations from client threads
while reports change and two ``sync_inventory`` processes at a time sync them.
Every allocation the API accepted must still be there, with the usage it
claimed; every host ends with the inventory of its last report; the history of
each host's VCPU is one unbroken chain (no change applied twice or lost).
"""

import os
import random
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pytest

from allocations.models import Allocation
from providers.models import ComputeNode, Inventory, InventoryChange
from providers.services.compute_nodes import compute_node_report
from providers.services.host_sync import compute_nodes_sync
from tests.allocations.test_concurrency import Client, claim_body, is_conflict, server  # noqa: F401
from tests.conftest import test_database_url
from tests.gunicorn_server import running_gunicorn
from tests.providers.hosts import report

pytestmark = [pytest.mark.live, pytest.mark.postgresql, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
HOSTS = ["race-host-0", "race-host-1", "race-host-2"]
CLIENTS = 6
CLAIMS_PER_CLIENT = 12
ROUNDS = 4
PLUGINS = "vcpu,memory,disk"


def _sync_processes(count, env=None):
    env = {
        **os.environ,
        "DATABASE_URL": test_database_url(),
        "PLACEMENT_RESOURCE_PLUGINS": PLUGINS,
        "DJANGO_SETTINGS_MODULE": "placementsite.settings",
        **(env or {}),
    }
    processes = [
        subprocess.Popen(
            [sys.executable, "manage.py", "sync_inventory"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for _ in range(count)
    ]
    outputs = [p.communicate(timeout=300)[0] for p in processes]
    assert all(p.returncode == 0 for p in processes), outputs
    return outputs


def test_syncs_and_allocations_racing_lose_nothing(server, settings):  # noqa: F811
    settings.PLACEMENT_RESOURCE_PLUGINS = PLUGINS.split(",")
    for hostname in HOSTS:
        compute_node_report(hostname=hostname, report=report(vcpus=64))
    compute_nodes_sync()
    roots = {h: str(ComputeNode.objects.get(hostname=h).provider.uuid) for h in HOSTS}

    accepted = []  # (consumer uuid, provider uuid)
    failures = []
    lock = threading.Lock()

    def allocate(index):
        client = Client(server)
        rng = random.Random(index)
        for _ in range(CLAIMS_PER_CLIENT):
            provider = roots[rng.choice(HOSTS)]
            consumer = str(uuid.uuid4())
            status, body = client.call(
                "PUT", f"/allocations/{consumer}", claim_body({provider: {"VCPU": 1}})
            )
            with lock:
                if status == 204:
                    accepted.append((consumer, provider))
                elif not is_conflict(status, body):
                    failures.append((status, body))

    last_vcpus = {}

    def report_and_sync():
        client = Client(server)
        for round_number in range(ROUNDS):
            vcpus = 40 if round_number % 2 == 0 else 64
            for hostname in HOSTS:
                status, body = client.call(
                    "PUT", f"/api/compute-nodes/{hostname}/", report(vcpus=vcpus)
                )
                assert status == 200, body
                last_vcpus[hostname] = vcpus
            _sync_processes(2)

    threads = [threading.Thread(target=allocate, args=(i,)) for i in range(CLIENTS)]
    threads.append(threading.Thread(target=report_and_sync))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    assert not failures, failures
    assert accepted

    assert_nothing_lost(accepted)

    # A conflict left for the next run is taken by the next run.
    compute_nodes_sync()
    for hostname in HOSTS:
        assert_synced_with_a_whole_history(hostname, last_vcpus[hostname])


def assert_nothing_lost(accepted):
    """Every allocation the API accepted (``[(consumer, provider)]``) is there, no other."""
    rows = {
        str(c): (str(p), used)
        for c, p, used in Allocation.objects.values_list(
            "consumer__uuid", "resource_provider__uuid", "used"
        )
    }
    for consumer, provider in accepted:
        assert rows[consumer] == (provider, 1)
    assert len(rows) == len(accepted)


def assert_synced_with_a_whole_history(hostname, vcpus):
    """The host's VCPU is its last report, and its change history an unbroken chain."""
    node = ComputeNode.objects.get(hostname=hostname)
    assert node.sync_status == "ok", (hostname, node.sync_error)
    vcpu = Inventory.objects.get(resource_provider=node.provider, resource_class__name="VCPU")
    assert vcpu.total == vcpus
    chain = list(
        InventoryChange.objects.filter(
            provider=node.provider, resource_class__name="VCPU"
        ).order_by("changed_at", "id")
    )
    assert chain[0].old_total is None and chain[0].new_total == 64
    for before, after in zip(chain, chain[1:], strict=False):
        assert after.old_total == before.new_total != after.new_total
    assert chain[-1].new_total == vcpus
    assert len(chain) <= ROUNDS + 1


# --- syncs that reshape, racing boots and deletes ----------------------------------------------

NUMA_PLUGINS = "vcpu,memory,disk,numa"
NUMA_ENV = {
    "PLACEMENT_RESOURCE_PLUGINS": NUMA_PLUGINS,
    "PLACEMENT_CPU_ALLOCATION_RATIO": "1.0",
    "PLACEMENT_RAM_ALLOCATION_RATIO": "1.0",
    "PLACEMENT_RESERVED_HOST_MEMORY_MB": "0",
}
FLAVOR = {"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 1}
BOOTERS = 4
BOOTS_PER_BOOTER = 10


def _numa_report(numa):
    cells = {
        "cells": [
            {"id": 0, "cpus": [0, 1, 2, 3], "memory_mb": 4096},
            {"id": 1, "cpus": [4, 5, 6, 7], "memory_mb": 4096},
        ]
    }
    return report(vcpus=8, memory_mb=8192, local_gb=100, numa_topology=cells if numa else None)


@pytest.fixture
def numa_server(transactional_db):
    with running_gunicorn(workers=4, env=NUMA_ENV) as base:
        yield base


class Fleet:
    """The servers the racing clients booted and deleted, and anything that went wrong."""

    def __init__(self):
        self.live, self.deleted, self.failures = set(), set(), []
        self.sync_outputs = []
        self.lock = threading.Lock()

    def failed(self, what):
        with self.lock:
            self.failures.append(what)

    def boot_and_delete(self, base, index):
        client = Client(base)
        rng = random.Random(index)
        mine = []
        for _ in range(BOOTS_PER_BOOTER):
            body = {"name": "vm", "flavor": "race", "project_id": "p", "user_id": "u"}
            status, answer = client.call("POST", "/api/servers/", body)
            if status == 201:
                mine.append(answer["servers"][0]["id"])
                with self.lock:
                    self.live.add(mine[-1])
            elif status != 409:
                self.failed((status, answer))
            if mine and rng.random() < 0.4:
                self.delete(client, mine.pop(rng.randrange(len(mine))))

    def delete(self, client, server_id):
        status, answer = client.call("DELETE", f"/api/servers/{server_id}/")
        if status != 204:
            return self.failed((status, answer))
        with self.lock:
            self.live.discard(server_id)
            self.deleted.add(server_id)

    def reshape(self, base):
        client = Client(base)
        for round_number in range(ROUNDS):
            for hostname in HOSTS:
                status, body = client.call(
                    "PUT", f"/api/compute-nodes/{hostname}/", _numa_report(round_number % 2 == 1)
                )
                if status != 200:
                    self.failed((status, body))
            self.sync_outputs.extend(_sync_processes(2, env=NUMA_ENV))

    def run(self, base):
        def guarded(work, *args):
            try:
                work(*args)
            except Exception as exc:  # a thread's failure fails the test
                self.failed(repr(exc))

        threads = [
            threading.Thread(target=guarded, args=(self.boot_and_delete, base, i))
            for i in range(BOOTERS)
        ]
        threads.append(threading.Thread(target=guarded, args=(self.reshape, base)))
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=600)


def test_reshaping_syncs_racing_boots_and_deletes_lose_no_allocation(numa_server, settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = NUMA_PLUGINS.split(",")
    settings.PLACEMENT_ALLOCATION_RATIOS = {"VCPU": 1.0, "MEMORY_MB": 1.0, "DISK_GB": 1.0}
    settings.PLACEMENT_RESERVED = {}
    for hostname in HOSTS:
        compute_node_report(hostname=hostname, report=_numa_report(True))
    compute_nodes_sync()
    status, body = Client(numa_server).call(
        "POST", "/api/flavors/", {"name": "race", "vcpus": 1, "ram": 512, "disk": 1}
    )
    assert status == 201, body

    fleet = Fleet()
    fleet.run(numa_server)
    assert not fleet.failures, fleet.failures
    assert fleet.live and fleet.deleted
    # The syncs did change the hosts' shape under their servers.
    assert any(": ok, " in output for output in fleet.sync_outputs), fleet.sync_outputs

    # What a race left failed (a consumer changed while its allocations were moved) is
    # retried and converges.
    for _ in range(3):
        compute_nodes_sync(due_only=False)
    for node in ComputeNode.objects.all():
        assert node.sync_status == "ok", (node.hostname, node.sync_error)
        # The last report's shape: two cells when NUMA was on in the last round.
        assert node.provider.children.count() == (2 if (ROUNDS - 1) % 2 else 0)

    held = {}
    for consumer, name, used in Allocation.objects.values_list(
        "consumer__uuid", "resource_class__name", "used"
    ):
        held.setdefault(str(consumer), {}).setdefault(name, 0)
        held[str(consumer)][name] += used
    assert set(held) == fleet.live  # no lost allocation, none left by a deleted server
    for consumer, totals in held.items():
        assert totals == FLAVOR, consumer
    assert_not_over_allocated()


def assert_not_over_allocated():
    used = {}
    for provider, name, amount in Allocation.objects.values_list(
        "resource_provider_id", "resource_class__name", "used"
    ):
        used[(provider, name)] = used.get((provider, name), 0) + amount
    for inventory in Inventory.objects.select_related("resource_class"):
        key = (inventory.resource_provider_id, inventory.resource_class.name)
        assert used.get(key, 0) <= inventory.capacity.usable, key


def test_syncs_racing_over_new_hosts_write_each_tree_once(settings):
    """Two sync processes over hosts never synced (more than one batch of them, each batch
    written in one transaction): every host gets one tree with its report's inventory and
    one history row per class; no tree is written twice, none is lost."""
    settings.PLACEMENT_RESOURCE_PLUGINS = PLUGINS.split(",")
    settings.PLACEMENT_SYNC_ON_REPORT = False
    names = [f"new-race-{i:03d}" for i in range(450)]
    for index, hostname in enumerate(names):
        compute_node_report(hostname=hostname, report=report(vcpus=8 + index % 4))
    _sync_processes(2)
    nodes = ComputeNode.objects.filter(hostname__in=names).select_related("provider")
    assert {node.sync_status for node in nodes} == {"ok"}
    assert {node.provider.name for node in nodes} == set(names)
    vcpus = dict(
        Inventory.objects.filter(
            resource_provider__name__in=names, resource_class__name="VCPU"
        ).values_list("resource_provider__name", "total")
    )
    assert vcpus == {hostname: 8 + index % 4 for index, hostname in enumerate(names)}
    history = InventoryChange.objects.filter(compute_node__hostname__in=names)
    assert history.count() == len(names) * len(PLUGINS.split(","))
