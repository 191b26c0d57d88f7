#!/usr/bin/env python3
"""Benchmark booting servers: this project's scheduler against the Nova-style flow on the
reference Placement.

One command prints the table (see docs/performance.md)::

    .venv/bin/python scripts/bench_boot.py --hosts 1000 --boots 1000

Both servers run under gunicorn with the same worker count on fresh PostgreSQL databases
(scripts/bench_candidates.py starts them: ``bench_project`` migrated with noauth2,
``bench_reference`` the pinned openstack-placement from scripts/reference-placement) and hold
the same ``--hosts`` compute nodes, loaded over the Placement API (VCPU, MEMORY_MB, DISK_GB; no
host reports). Then, for each server, ``--boots`` boots sequentially and ``--boots`` more with
``--concurrency`` clients:

* project: one ``POST /api/servers/`` per boot (flavor ``bench.small``): candidates from the
  engine in process, filters, weighers, a claim with retry, all server side;
* reference, the way Nova's scheduler drives Placement: ``GET /allocation_candidates`` (with
  ``limit`` 1000, Nova's max_placement_results), the host chosen by the client from the
  provider summaries (most free RAM, as Nova's RAM weigher), ``PUT /allocations/{consumer}``
  with ``consumer_generation: null``; a 409 tries the next host of the same answer, as Nova
  tries its alternates, and is counted as a retry.

Reported per server and phase: servers per second, p50 and p95 latency per boot, retries and
refused boots, and over-allocations (providers whose usage exceeds their capacity, read over
the API at the end). Only the standard library and the benchmark module are used; every target
is 127.0.0.1.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import json
import sys
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_candidates as bc  # noqa: E402  (the servers, the client, the loaders)

FLAVOR = {"name": "bench.small", "vcpus": 1, "ram": 2048, "disk": 10, "extra_specs": {}}
RESOURCES = "VCPU:1,MEMORY_MB:2048,DISK_GB:10"
HOST_INVENTORY = {
    "VCPU": {"total": 16, "max_unit": 16},
    "MEMORY_MB": {"total": 65536, "reserved": 512, "max_unit": 65536},
    "DISK_GB": {"total": 1000, "max_unit": 1000},
}
# Nova's [scheduler] max_placement_results.
NOVA_LIMIT = 1000


def load_hosts(client, count):
    def host(index):
        bc.create_provider(client, f"boot-{index:05d}", HOST_INVENTORY)

    return [(host, index) for index in range(count)]


@dataclasses.dataclass
class Topology:
    """What bench_candidates.Server expects of a topology."""

    size: int
    max_candidates: int = -1
    loader: object = staticmethod(load_hosts)

    def names(self):
        return {f"boot-{i:05d}" for i in range(self.size)}


@dataclasses.dataclass
class Boot:
    seconds: float
    retries: int
    placed: bool


def boot_project(client, index, phase):
    body = {
        "name": f"{phase}-{index}",
        "flavor": FLAVOR["name"],
        "project_id": "bench",
        "user_id": "bench",
    }
    started = time.perf_counter()
    status, data, _ = client.request("POST", "/api/servers/", body)
    elapsed = time.perf_counter() - started
    if status == 201:
        return Boot(elapsed, 0, True)
    if status == 409 and b"no_valid_host" in data:
        return Boot(elapsed, 0, False)
    raise bc.ApiError("POST", "/api/servers/", status, data)


def _free_ram(request, summaries):
    (provider,) = request["allocations"]
    ram = summaries[provider]["resources"]["MEMORY_MB"]
    return ram["capacity"] - ram["used"]


def boot_nova_style(client, index, phase):
    """GET /allocation_candidates, pick by free RAM, PUT /allocations; a 409 tries the next."""
    consumer = str(uuid.uuid4())
    path = f"/allocation_candidates?resources={RESOURCES}&limit={NOVA_LIMIT}"
    retries = 0
    started = time.perf_counter()
    for _round in range(3):
        status, data, _ = client.request("GET", path)
        if status != 200:
            raise bc.ApiError("GET", path, status, data)
        answer = json.loads(data)
        summaries = answer["provider_summaries"]

        ranked = sorted(
            answer["allocation_requests"],
            key=lambda request: _free_ram(request, summaries),
            reverse=True,
        )
        if not ranked:
            return Boot(time.perf_counter() - started, retries, False)
        for request in ranked[:3]:  # the chosen host and two alternates
            body = {
                "allocations": request["allocations"],
                "project_id": "bench",
                "user_id": "bench",
                "consumer_generation": None,
                "consumer_type": "INSTANCE",
            }
            status, data, _ = client.request("PUT", f"/allocations/{consumer}", body)
            if status == 204:
                return Boot(time.perf_counter() - started, retries, True)
            if status != 409:
                raise bc.ApiError("PUT", f"/allocations/{consumer}", status, data)
            retries += 1
    return Boot(time.perf_counter() - started, retries, False)


@dataclasses.dataclass
class Phase:
    server: str
    phase: str
    boots: list
    seconds: float

    def row(self):
        placed = [b for b in self.boots if b.placed]
        latencies = [b.seconds for b in self.boots]
        return {
            "server": self.server,
            "phase": self.phase,
            "boots": len(self.boots),
            "placed": len(placed),
            "servers_per_s": round(len(placed) / self.seconds, 1) if self.seconds else 0.0,
            "p50_ms": round(1000 * bc.percentile(latencies, 50), 1),
            "p95_ms": round(1000 * bc.percentile(latencies, 95), 1),
            "retries": sum(b.retries for b in self.boots),
            "refused": len(self.boots) - len(placed),
        }


def run_phase(name, client, boot, count, concurrency, phase):
    lock = threading.Lock()
    counter = iter(range(count))
    boots = []

    def worker():
        while True:
            with lock:
                index = next(counter, None)
            if index is None:
                return
            result = boot(client, index, phase)
            with lock:
                boots.append(result)

    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        for future in [pool.submit(worker) for _ in range(concurrency)]:
            future.result()
    return Phase(name, phase, boots, time.monotonic() - started)


def over_allocations(client, hosts):
    """Providers whose usage of a class exceeds its capacity, read over the Placement API."""
    over = 0
    for index in range(hosts):
        provider = bc.provider_uuid(f"boot-{index:05d}")
        inventories = client.call("GET", f"/resource_providers/{provider}/inventories")
        usages = client.call("GET", f"/resource_providers/{provider}/usages")["usages"]
        for name, inventory in inventories["inventories"].items():
            capacity = int(
                (inventory["total"] - inventory["reserved"]) * inventory["allocation_ratio"]
            )
            if usages.get(name, 0) > capacity:
                over += 1
    return over


def bench(server, args, boot):
    topology = Topology(args.hosts)
    server.start(topology)
    try:
        bc.log(f"{server.name}: loading {args.hosts} hosts")
        bc.load(server, topology, args.load_threads)
        server.analyze()
        if server.name == "project":
            server.client.call("POST", "/api/flavors/", FLAVOR, expect=(201,))
        rows = []
        for phase, concurrency in (
            ("sequential", 1),
            (f"{args.concurrency} clients", args.concurrency),
        ):
            bc.log(f"{server.name}: {args.boots} boots, {phase}")
            result = run_phase(server.name, server.client, boot, args.boots, concurrency, phase)
            rows.append(result.row())
        over = over_allocations(server.client, args.hosts)
        for row in rows:
            row["over_allocations"] = over
        return rows
    finally:
        server.stop()


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--boots", type=int, default=1000, help="boots per phase")
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers per server")
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--load-threads", type=int, default=8)
    parser.add_argument("--project-port", type=int, default=8790)
    parser.add_argument("--reference-port", type=int, default=8791)
    parser.add_argument("--only", choices=("project", "reference"), help="run one side only")
    args = parser.parse_args(argv)
    args.wipe = False
    args.keep_loaded = False
    return args


def main(argv=None):
    args = parse_args(argv)
    rows = []
    sides = [
        ("project", args.project_port, "bench_project", boot_project),
        ("reference", args.reference_port, "bench_reference", boot_nova_style),
    ]
    for name, port, database, boot in sides:
        if args.only and name != args.only:
            continue
        server = bc.Server(name, f"http://127.0.0.1:{port}", True, args, database=database)
        rows += bench(server, args, boot)
    columns = ["server", "phase", "boots", "placed", "servers_per_s", "p50_ms", "p95_ms"]
    columns += ["retries", "refused", "over_allocations"]
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(str(row[c]) for c in columns) + " |")
    by_phase = {}
    for row in rows:
        by_phase.setdefault(row["phase"], {})[row["server"]] = row
    for phase, sides_ in by_phase.items():
        if {"project", "reference"} <= set(sides_) and sides_["reference"]["servers_per_s"]:
            speedup = sides_["project"]["servers_per_s"] / sides_["reference"]["servers_per_s"]
            print(f"{phase}: project {speedup:.2f}x the Nova-style flow's servers per second")


if __name__ == "__main__":
    main()
