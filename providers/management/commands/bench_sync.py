"""Time the host sync on N hosts: all new, 1% changed, nothing changed; then the pool sync of
P pools sharing them: first sync, 1% of the hosts moved between pools, nothing changed.

    python manage.py bench_sync --hosts 1000 [--pools 10]

A scratch database (``<NAME>_bench_sync``) is created next to the configured
one and dropped at the end (``--keep`` keeps it). Every host reports two NUMA
cells and one in ten a GPU, so with the default plugins (vcpu, memory, disk,
numa, pci) a host is a tree of three or four providers. The sync runs in this
process exactly as ``sync_inventory`` and the beat task run it.
"""

import random
import time

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import connection

from providers.models import ComputeNode, Inventory, ResourceProvider
from providers.services.compute_nodes import compute_node_report
from providers.services.host_sync import compute_nodes_sync
from providers.services.pool_sync import resource_pools_sync
from providers.services.resource_pools import resource_pool_report


def host_report(index, rng, vcpus=None):
    cores = vcpus or rng.choice([32, 48, 64])
    half = cores // 2
    memory = rng.choice([131072, 262144])
    report = {
        "vcpus": cores,
        "memory_mb": memory,
        "local_gb": rng.choice([960, 1920]),
        "cpu_info": {"model": "Cascadelake-Server", "vendor": "Intel"},
        "hypervisor_type": "QEMU",
        "stats": {},
        "numa_topology": {
            "cells": [
                {"id": 0, "cpus": list(range(half)), "memory_mb": memory // 2},
                {"id": 1, "cpus": list(range(half, cores)), "memory_mb": memory // 2},
            ]
        },
        "pci_devices": [],
    }
    if index % 10 == 0:
        report["pci_devices"] = [
            {
                "address": "0000:81:00.0",
                "vendor_id": "10de",
                "product_id": "1eb8",
                "resource_class": "VGPU",
                "count": 4,
                "numa_node": None,
            }
        ]
    return report


class Command(BaseCommand):
    help = "Print the time of a full, a 1%-changed and a no-change sync of N hosts."

    def add_arguments(self, parser):
        parser.add_argument("--hosts", type=int, default=1000)
        parser.add_argument("--keep", action="store_true", help="keep the scratch database")
        parser.add_argument(
            "--pools", type=int, default=10, help="resource pools sharing the hosts (0: none)"
        )

    def handle(self, *args, hosts, keep, pools, **options):
        # The sync alone is timed: no report asks a worker for it.
        settings.PLACEMENT_SYNC_ON_REPORT = False
        old_name = connection.settings_dict["NAME"]
        connection.settings_dict.setdefault("TEST", {})["NAME"] = f"{old_name}_bench_sync"
        connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=False)
        try:
            self.run(hosts)
            if pools:
                self.run_pools(hosts, pools)
        finally:
            if not keep:
                connection.creation.destroy_test_db(old_name, verbosity=0)

    def _timed(self, label, function):
        started = time.perf_counter()
        result = function()
        seconds = time.perf_counter() - started
        self.stdout.write(f"{label}: {seconds:.2f} s")
        return result, seconds

    def run(self, count):
        rng = random.Random(42)
        reports = {f"bench-host-{i:05d}": host_report(i, rng) for i in range(count)}

        def report_all():
            for hostname, report in reports.items():
                compute_node_report(hostname=hostname, report=report)

        self._timed(f"report {count} hosts", report_all)
        outcomes, _ = self._timed(f"full sync of {count} new hosts", compute_nodes_sync)
        self.stdout.write(
            f"  {len(outcomes)} hosts synced, {ResourceProvider.objects.count()} providers, "
            f"{Inventory.objects.count()} inventories"
        )
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")

        changed = rng.sample(sorted(reports), max(1, count // 100))
        for hostname in changed:
            compute_node_report(
                hostname=hostname, report=host_report(0, rng, vcpus=reports[hostname]["vcpus"] + 8)
            )
        outcomes, _ = self._timed(
            f"sync with {len(changed)} changed hosts (1%)", compute_nodes_sync
        )
        self.stdout.write(f"  {len(outcomes)} hosts synced")

        outcomes, _ = self._timed(f"sync with nothing changed ({count} hosts)", compute_nodes_sync)
        self.stdout.write(f"  {len(outcomes)} hosts synced")
        statuses = set(ComputeNode.objects.values_list("sync_status", flat=True))
        self.stdout.write(f"host statuses: {', '.join(sorted(statuses))}")

    def run_pools(self, count, pools):
        """``pools`` shared-storage pools, each naming an equal share of the hosts as members:
        the first sync (providers, inventories, aggregates of every member), a run where 1%
        of the hosts moved to another pool, and a run where nothing changed."""
        names = sorted(ComputeNode.objects.values_list("hostname", flat=True))
        share = {f"bench-pool-{p:03d}": names[p::pools] for p in range(pools)}

        def report_pools():
            for name, members in share.items():
                resource_pool_report(
                    name=name,
                    report={
                        "kind": "shared_storage",
                        "inventories": {"DISK_GB": {"total": 100000}},
                        "members": members,
                    },
                )

        self._timed(f"report {pools} pools", report_pools)
        outcomes, _ = self._timed(
            f"first sync of {pools} pools ({count} member hosts)", resource_pools_sync
        )
        self.stdout.write(f"  {len(outcomes)} pools synced")
        moved = names[: max(1, count // 100)]
        first, second = sorted(share)[:2]
        share[first] = [h for h in share[first] if h not in moved]
        share[second] = sorted({*share[second], *moved})
        report_pools()
        outcomes, _ = self._timed(
            f"pool sync with {len(moved)} hosts moved (1%)", resource_pools_sync
        )
        self.stdout.write(f"  {len(outcomes)} pools synced")
        outcomes, _ = self._timed(
            f"pool sync with nothing changed ({pools} pools)", resource_pools_sync
        )
        self.stdout.write(f"  {len(outcomes)} pools synced")
