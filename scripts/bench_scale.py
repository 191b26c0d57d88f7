#!/usr/bin/env python3
"""The read endpoints at scale: median times over HTTP and a worker's memory, on a loaded cloud.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_100k \\
        .venv/bin/python scripts/bulk_load.py --fresh --compute 100000
    DATABASE_URL=... .venv/bin/python scripts/bench_scale.py [--repeat 5] [--port 8791]

One gunicorn (one sync worker, the service's defaults: candidate caps and time budget on) on
that database answers, each timed as the median of ``--repeat`` runs after a warm-up:
``GET /allocation_candidates`` with ``limit=10`` and without a limit (bounded by
``PLACEMENT_MAX_ALLOCATION_CANDIDATES`` and the time budget), ``GET /resource_providers`` with
``resources``, and ``GET /api/capacity/`` for a small flavor (created if missing). Last, the
worker's peak resident memory (``VmHWM``). Nothing here is a test: figures go in
docs/performance.md (issue 28's 100,000-provider table).
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
os.environ.setdefault("PLACEMENT_AUTH_STRATEGY", "noauth2")
os.environ.setdefault("PLACEMENT_LOG_LEVEL", "WARNING")
# The service's own cap (bench_bare, imported below, lifts it for its comparisons).
os.environ.setdefault("PLACEMENT_MAX_ALLOCATION_CANDIDATES", "10000")

from bench_bare import Gunicorn, log, median_ms  # noqa: E402

RESOURCES = "VCPU:1,MEMORY_MB:256,DISK_GB:10"
# A flavor a host fits about six of (a tiny one, hundreds per host, makes the fill long).
FLAVOR = {"name": "bench.scale.8c32g", "vcpus": 8, "ram": 32768, "disk": 100}

READS = {
    "candidates limit=10": f"/allocation_candidates?resources={RESOURCES}&limit=10",
    "candidates, no limit (service caps)": f"/allocation_candidates?resources={RESOURCES}",
    "resource_providers?resources=": f"/resource_providers?resources={RESOURCES}",
    "/api/capacity/": f"/api/capacity/?flavor={FLAVOR['name']}",
}


def ensure_flavor(server):
    connection = server.connection
    body = json.dumps(FLAVOR)
    headers = {"X-Auth-Token": "admin", "Content-Type": "application/json"}
    connection.request("POST", "/api/flavors/", body=body, headers=headers)
    response = connection.getresponse()
    response.read()
    if response.status not in (201, 400, 409):  # 400/409: it exists already
        raise RuntimeError(f"creating the flavor: {response.status}")


def peak_memory_mib(master_pid):
    """The peak resident memory of the master's first child (the one sync worker)."""
    children = Path(f"/proc/{master_pid}/task/{master_pid}/children").read_text().split()
    for line in Path(f"/proc/{children[0]}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--port", type=int, default=8791)
    args = parser.parse_args(argv)
    url = os.environ["DATABASE_URL"]
    server = Gunicorn(args.port, url)
    try:
        ensure_flavor(server)
        print("| request | median | answer |")
        print("|---|---|---|")
        for name, path in READS.items():
            log(name)
            size = len(server.get(path))
            ms = median_ms(lambda path=path: server.get(path), args.repeat)
            print(f"| {name} | {ms:.1f} ms | {size / 1024:.0f} KiB |", flush=True)
        print(f"\nworker peak memory: {peak_memory_mib(server.process.pid):.0f} MiB")
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    started = time.monotonic()
    code = main()
    log(f"done in {time.monotonic() - started:.0f} s")
    sys.exit(code)
