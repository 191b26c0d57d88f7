#!/usr/bin/env python3
"""Report-to-inventory latency: how long after ``PUT /api/compute-nodes/<host>/`` answers the
host's inventory shows in the Placement API, with a real Celery worker and no beat.

    CELERY_BROKER_URL=redis://127.0.0.1:6379/0 .venv/bin/python scripts/bench_sync_latency.py \\
        --hosts 30

A fresh database ``bench_sync_latency`` (on ``BENCH_PG_URL``, default
postgres://postgres@127.0.0.1:5432) is migrated; a gunicorn (``--workers``, noauth2) and a
Celery worker (one process, a queue of its own on the Redis broker) serve it, both with
``PLACEMENT_SYNC_ON_REPORT`` on and the default plugins. For each of ``--hosts`` hosts, one
after the other: a new host's report (two NUMA cells, one GPU), then a changed report (more
vCPUs). The clock starts when the ``PUT`` has answered and stops when ``GET
/resource_providers/<root>/inventories`` (or the cell's) shows the reported figure, polled
every 10 ms. Printed: median, p95 and max per kind. Every target is 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_candidates as bc  # noqa: E402  (the HTTP client, the scratch database)

DATABASE = "bench_sync_latency"
POLL_SECONDS = 0.01


def report(vcpus):
    half = vcpus // 2
    return {
        "vcpus": vcpus,
        "memory_mb": 65536,
        "local_gb": 500,
        "cpu_info": {"model": "Cascadelake-Server"},
        "hypervisor_type": "QEMU",
        "stats": {},
        "numa_topology": {
            "cells": [
                {"id": 0, "cpus": list(range(half)), "memory_mb": 32768},
                {"id": 1, "cpus": list(range(half, vcpus)), "memory_mb": 32768},
            ]
        },
        "pci_devices": [
            {
                "address": "0000:81:00.0",
                "vendor_id": "10de",
                "product_id": "1eb8",
                "resource_class": "VGPU",
                "count": 4,
                "numa_node": 1,
            }
        ],
    }


def wait_for_vcpus(client, hostname, vcpus, timeout):
    """Poll until the host's NUMA0 provider offers ``vcpus // 2`` VCPU; seconds waited."""
    started = time.perf_counter()
    deadline = time.monotonic() + timeout
    provider = None
    while time.monotonic() < deadline:
        if provider is None:
            found = client.call("GET", f"/resource_providers?name={hostname}_NUMA0")
            provider = (found["resource_providers"] or [{}])[0].get("uuid")
        if provider is not None:
            status, body, _ = client.request("GET", f"/resource_providers/{provider}/inventories")
            shown = json.loads(body).get("inventories", {}) if status == 200 else {}
            if shown.get("VCPU", {}).get("total") == vcpus // 2:
                return time.perf_counter() - started
        time.sleep(POLL_SECONDS)
    raise SystemExit(f"{hostname}: inventory of {vcpus} vCPUs not seen within {timeout} s")


def start(command, env, log_path):
    log = log_path.open("ab")
    process = subprocess.Popen(
        command, cwd=bc.ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    log.close()
    return process


def stop(process):
    if process.poll() is None:
        os.killpg(process.pid, 15)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            process.wait(timeout=10)


def summary(label, samples):
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    print(
        f"{label}: median {statistics.median(ordered) * 1000:.0f} ms, "
        f"p95 {p95 * 1000:.0f} ms, max {ordered[-1] * 1000:.0f} ms ({len(ordered)} reports)"
    )


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--hosts", type=int, default=30)
    parser.add_argument("--port", type=int, default=8771)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--keep", action="store_true", help="keep the database")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if urlsplit(broker).scheme not in ("redis", "rediss") or urlsplit(broker).hostname not in (
        bc.LOCAL_HOSTS
    ):
        raise SystemExit("set CELERY_BROKER_URL to a Redis on 127.0.0.1")
    bc.recreate_database(DATABASE)
    env = {
        **os.environ,
        "DATABASE_URL": f"{bc.PG_URL}/{DATABASE}",
        "DJANGO_SETTINGS_MODULE": "placementsite.settings",
        "PLACEMENT_AUTH_STRATEGY": "noauth2",
        "PLACEMENT_SYNC_ON_REPORT": "1",
        "PLACEMENT_LOG_LEVEL": "WARNING",
        "CELERY_TASK_DEFAULT_QUEUE": f"bench-sync-{uuid.uuid4().hex[:8]}",
        "DJANGO_DEBUG": "false",
    }
    python = str(bc.ROOT / ".venv" / "bin" / "python")
    subprocess.run(
        [python, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=bc.ROOT, env=env, check=True
    )
    bc.BENCH_DIR.mkdir(parents=True, exist_ok=True)
    (bc.BENCH_DIR / "sync-latency-worker.log").write_text("")
    queue = env["CELERY_TASK_DEFAULT_QUEUE"]
    worker = start(
        [python, "-m", "celery", "-A", "placementsite", "worker", "-Q", queue, "-c", "1"]
        + ["--without-gossip", "--without-mingle", "--loglevel", "INFO"],
        env,
        bc.BENCH_DIR / "sync-latency-worker.log",
    )
    gunicorn = str(bc.ROOT / ".venv" / "bin" / "gunicorn")
    server = start(
        [gunicorn, "placementsite.wsgi:application", "--bind", f"127.0.0.1:{args.port}"]
        + ["--workers", str(args.workers), "--no-control-socket"],
        env,
        bc.BENCH_DIR / "sync-latency-gunicorn.log",
    )
    client = bc.Client(f"http://127.0.0.1:{args.port}", args.timeout)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if client.request("GET", "/", token=None)[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit("gunicorn did not start; see var/bench/sync-latency-gunicorn.log")
            time.sleep(0.3)
        worker_log = bc.BENCH_DIR / "sync-latency-worker.log"
        while "ready." not in worker_log.read_text(errors="replace"):
            if worker.poll() is not None or time.monotonic() > deadline + 60:
                raise SystemExit(f"the Celery worker did not start; see {worker_log}")
            time.sleep(0.3)
        new, changed = [], []
        for index in range(args.hosts):
            hostname = f"latency-{index:04d}"
            for vcpus, samples in ((32, new), (48, changed)):
                client.call("PUT", f"/api/compute-nodes/{hostname}/", report(vcpus), (200, 201))
                samples.append(wait_for_vcpus(client, hostname, vcpus, args.timeout))
        summary("new host (report -> inventory)", new)
        summary("changed report (report -> inventory)", changed)
    finally:
        stop(server)
        stop(worker)
        if not args.keep:
            bc.run_sql("postgres", f'DROP DATABASE IF EXISTS "{DATABASE}" WITH (FORCE)')


if __name__ == "__main__":
    main()
