#!/usr/bin/env python3
"""Benchmark what assigning a device costs a boot: servers with one VF against servers without,
on the same hosts, in the same run.

One command prints the table (see docs/performance.md)::

    .venv/bin/python scripts/bench_device_boot.py --hosts 100 --boots 300

A gunicorn of this project (``--workers``) on a fresh PostgreSQL database (``bench_project``,
as scripts/bench_candidates.py starts it) gets ``--hosts`` host reports through
``PUT /api/compute-nodes/`` (32 CPUs and 128 GiB over two NUMA cells, one PF with 16 VFs on
cell 1, listed by address), synced by ``manage.py sync_inventory``. Two flavors differ only by
the VF: ``bench.plain`` (1 vCPU, 512 MB, 1 GB) and ``bench.vf`` (the same and
``resources:SRIOV_NET_VF: 1``, so each boot's claim also assigns one VF). The phases alternate
(plain, VF, plain, VF: ``--rounds`` times, sequential then ``--concurrency`` clients), so that
both flavors see the same database size and machine load. Reported per flavor and phase:
boots per second, p50 and p95 latency, refusals; then the VF boot's p50 and throughput as a
ratio of the plain boot's. At the end, every VF assigned is checked to be held once and the
VF usage to equal the units assigned.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_boot as bb  # noqa: E402  (phases and rows)
import bench_candidates as bc  # noqa: E402  (the server, the client)

FLAVORS = {
    "plain": {"name": "bench.plain", "vcpus": 1, "ram": 512, "disk": 1, "extra_specs": {}},
    "vf": {
        "name": "bench.vf",
        "vcpus": 1,
        "ram": 512,
        "disk": 1,
        "extra_specs": {"resources:SRIOV_NET_VF": "1"},
    },
}
VFS_PER_HOST = 16


def host_report(index):
    bus = 0x81
    return {
        "vcpus": 32,
        "memory_mb": 131072,
        "local_gb": 2000,
        "numa_topology": {
            "cells": [
                {"id": 0, "cpus": list(range(16)), "memory_mb": 65536},
                {"id": 1, "cpus": list(range(16, 32)), "memory_mb": 65536},
            ]
        },
        "pci_devices": [
            {
                "address": f"0000:{bus:02x}:00.0",
                "vendor_id": "8086",
                "product_id": "1572",
                "resource_class": "SRIOV_NET_VF",
                "numa_node": 1,
                "vfs": [f"0000:{bus:02x}:{1 + n // 8:02x}.{n % 8}" for n in range(VFS_PER_HOST)],
            }
        ],
    }


def load_hosts(client, count):
    def host(index):
        client.call("PUT", f"/api/compute-nodes/dev-{index:05d}/", host_report(index), (200, 201))

    return [(host, index) for index in range(count)]


class Topology(bb.Topology):
    def names(self):
        return {f"dev-{i:05d}" for i in range(self.size)}


def sync(server):
    """The host sync, run once over every reported host (as beat would)."""
    env = dict(os.environ, DATABASE_URL=f"{bc.PG_URL}/bench_project")
    python = str(bc.ROOT / ".venv" / "bin" / "python")
    started = time.monotonic()
    subprocess.run(
        [python, "manage.py", "sync_inventory", "--all"],
        cwd=bc.ROOT,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    bc.log(f"sync of every host: {time.monotonic() - started:.1f} s")


def boot_with(flavor):
    def boot(client, index, phase):
        body = {"name": f"{phase}-{index}", "flavor": flavor, "project_id": "b", "user_id": "b"}
        started = time.perf_counter()
        status, data, _ = client.request("POST", "/api/servers/", body)
        elapsed = time.perf_counter() - started
        if status == 201:
            return bb.Boot(elapsed, 0, True)
        if status == 409 and b"no_valid_host" in data:
            return bb.Boot(elapsed, 0, False)
        raise bc.ApiError("POST", "/api/servers/", status, data)

    return boot


def check_assignments(client, hosts):
    """Every VF held once at most, and VF usage equal to the units assigned, per host."""
    wrong = 0
    for index in range(hosts):
        devices = client.call("GET", f"/api/compute-nodes/dev-{index:05d}/devices/")["devices"]
        held = [d for d in devices if d["consumer"]]
        used = client.call("GET", f"/resource_providers/{devices[0]['provider']}/usages")
        wrong += int(used["usages"].get("SRIOV_NET_VF", 0) != len(held))
    return wrong


def merged(rows):
    """One row per flavor and phase over the rounds (latencies pooled, rates summed)."""
    by_key = {}
    for phase in rows:
        key = (phase.server, phase.phase)
        entry = by_key.setdefault(key, bb.Phase(phase.server, phase.phase, [], 0.0))
        entry.boots.extend(phase.boots)
        entry.seconds += phase.seconds
    return [p.row() for p in by_key.values()]


def main(argv=None):
    args = _arguments(argv)
    # Reports are synced here, once: no Celery task per report.
    os.environ["PLACEMENT_SYNC_ON_REPORT"] = "false"
    server = bc.Server("project", f"http://127.0.0.1:{args.port}", True, args)
    server.database = "bench_project"
    topology = Topology(args.hosts, loader=load_hosts)
    server.start(topology)
    try:
        bc.log(f"reporting {args.hosts} hosts")
        bc.load(server, topology, args.load_threads)
        sync(server)
        server.analyze()
        for flavor in FLAVORS.values():
            server.client.call("POST", "/api/flavors/", flavor, expect=(201,))
        phases = _boot_phases(server, args)
        wrong = check_assignments(server.client, args.hosts)
    finally:
        server.stop()
    _print_results(merged(phases))
    print(f"hosts whose VF usage differs from the VFs assigned: {wrong}")
    return 1 if wrong else 0


def _arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=100)
    parser.add_argument("--boots", type=int, default=300, help="boots per flavor and phase")
    parser.add_argument("--rounds", type=int, default=2, help="alternations of the two flavors")
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--load-threads", type=int, default=8)
    parser.add_argument("--port", type=int, default=8792)
    args = parser.parse_args(argv)
    args.wipe = args.keep_loaded = False
    if args.hosts * VFS_PER_HOST < 2 * args.rounds * args.boots:
        parser.error("too few VFs for the VF boots: raise --hosts or lower --boots/--rounds")
    return args


def _boot_phases(server, args):
    """Sequential, then concurrent boots; each round alternates the plain and the VF flavor."""
    phases = []
    for phase, concurrency in (
        ("sequential", 1),
        (f"{args.concurrency} clients", args.concurrency),
    ):
        for round_ in range(args.rounds):
            for label, flavor in FLAVORS.items():
                bc.log(f"{label}: {args.boots} boots, {phase}, round {round_ + 1}")
                phases.append(
                    bb.run_phase(
                        label,
                        server.client,
                        boot_with(flavor["name"]),
                        args.boots,
                        concurrency,
                        phase,
                    )
                )
    return phases


def _print_results(rows):
    columns = ["server", "phase", "boots", "placed", "servers_per_s", "p50_ms", "p95_ms"]
    columns += ["refused"]
    print("| flavor | " + " | ".join(columns[1:]) + " |")
    print("|" + " --- |" * len(columns))
    for row in rows:
        print("| " + " | ".join(str(row[c]) for c in columns) + " |")
    print()
    for phase in {r["phase"] for r in rows}:
        plain = next(r for r in rows if r["server"] == "plain" and r["phase"] == phase)
        vf = next(r for r in rows if r["server"] == "vf" and r["phase"] == phase)
        print(
            f"{phase}: VF boot p50 {vf['p50_ms'] / plain['p50_ms']:.2f}x the plain boot's, "
            f"throughput {vf['servers_per_s'] / plain['servers_per_s']:.2f}x"
        )


if __name__ == "__main__":
    sys.exit(main())
