"""Syncs racing each other and allocation writes, in several processes, on PostgreSQL.

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
from tests.providers.hosts import report

pytestmark = [pytest.mark.live, pytest.mark.postgresql, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
HOSTS = ["race-host-0", "race-host-1", "race-host-2"]
CLIENTS = 6
CLAIMS_PER_CLIENT = 12
ROUNDS = 4
PLUGINS = "vcpu,memory,disk"


def _sync_processes(count):
    env = dict(
        os.environ,
        DATABASE_URL=test_database_url(),
        PLACEMENT_RESOURCE_PLUGINS=PLUGINS,
        DJANGO_SETTINGS_MODULE="placementsite.settings",
    )
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
