#!/usr/bin/env python3
"""Reads per second with the primary alone, then with a streaming replica beside it.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_1k \\
        .venv/bin/python scripts/bench_replica.py --seconds 20 --concurrency 8

(load the database first with ``scripts/bulk_load.py --compute N``). The script makes a
streaming replica of the local cluster (``tests/replica.py``: ``pg_basebackup -R`` into a
temporary directory, a second PostgreSQL on another port of this machine), then runs the same
gunicorn (``--workers``) twice on the database: without ``DATABASE_REPLICA_URLS`` and with it.
Each time ``--concurrency`` clients send read requests for ``--seconds`` (allocation
candidates with ``limit=10``, and the provider listing by resources), and, with ``--writers``,
as many clients write meanwhile (a consumer's allocations replaced, again and again) so that
the fence sends some reads to the primary. It prints requests per second and, from
``/metrics``, which database served the reads and why.

The replica runs on the same machine and the same cores as the primary and the servers: it
shows what routing costs and whether reads move, not what a replica on its own host adds.
"""

import argparse
import http.client
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.replica import StreamingReplica, unavailable_reason  # noqa: E402

HEADERS = {
    "X-Auth-Token": "admin",
    "OpenStack-API-Version": "placement 1.39",
    "Content-Type": "application/json",
}
READS = (
    "/allocation_candidates?resources=VCPU:1,MEMORY_MB:256,DISK_GB:10&limit=10",
    "/resource_providers?resources=VCPU:1,MEMORY_MB:256",
)


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


class Server:
    def __init__(self, port, env, workers):
        self.port = port
        self.metrics = tempfile.TemporaryDirectory()
        environment = {
            **os.environ,
            **env,
            "PLACEMENT_AUTH_STRATEGY": "noauth2",
            "PLACEMENT_LOG_LEVEL": "WARNING",
            "PLACEMENT_METRICS": "open",
            "PROMETHEUS_MULTIPROC_DIR": self.metrics.name,
        }
        self.process = subprocess.Popen(
            [
                str(Path(sys.executable).parent / "gunicorn"),
                "placementsite.wsgi:application",
                "--workers",
                str(workers),
                "--bind",
                f"127.0.0.1:{port}",
                "--log-level",
                "warning",
            ],
            cwd=ROOT,
            env=environment,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                self.call("GET", "/")
                return
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise RuntimeError("gunicorn did not start") from None
                time.sleep(0.3)

    def call(self, method, path, body=None, connection=None):
        own = connection is None
        connection = connection or http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            connection.request(
                method, path, body=json.dumps(body) if body is not None else None, headers=HEADERS
            )
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            if own:
                connection.close()

    def routed(self):
        _, text = self.call("GET", "/metrics")
        found = Counter()
        pattern = r'^placement_db_read_requests_total\{database="([^"]+)",reason="([^"]+)"\} (\S+)$'
        for database, reason, value in re.findall(pattern, text.decode(), re.M):
            found[f"{database} ({reason})"] += int(float(value))
        return dict(found)

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)
        self.metrics.cleanup()


def providers(server, count):
    _, body = server.call("GET", "/resource_providers?resources=VCPU:1")
    return [p["uuid"] for p in json.loads(body)["resource_providers"][:count]]


def run_load(server, args):
    stop = threading.Event()
    reads, writes, errors = Counter(), Counter(), Counter()
    targets = providers(server, max(args.writers, 1))

    def reader(index):
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        n = index
        while not stop.is_set():
            status, _ = server.call("GET", READS[n % len(READS)], connection=connection)
            n += 1
            (reads if status == 200 else errors)[status] += 1

    def writer(index):
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        consumer, generation, provider = str(uuid.uuid4()), None, targets[index]
        while not stop.is_set():
            body = {
                "allocations": {provider: {"resources": {"VCPU": 1 + writes[index] % 2}}},
                "project_id": "bench",
                "user_id": "bench",
                "consumer_generation": generation,
                "consumer_type": "INSTANCE",
            }
            status, _ = server.call(
                "PUT", f"/allocations/{consumer}", body=body, connection=connection
            )
            if status == 204:
                generation = 1 if generation is None else generation + 1
                writes[index] += 1
            else:
                errors[status] += 1

    threads = [threading.Thread(target=reader, args=(i,)) for i in range(args.concurrency)]
    threads += [threading.Thread(target=writer, args=(i,)) for i in range(args.writers)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    time.sleep(args.seconds)
    stop.set()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    return sum(reads.values()) / elapsed, sum(writes.values()) / elapsed, dict(errors)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--writers", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--port", type=int, default=8129)
    args = parser.parse_args(argv)
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        parser.error("set DATABASE_URL to a database scripts/bulk_load.py loaded")
    primary = {"host": "127.0.0.1", "port": 5432, "user": "postgres"}
    reason = unavailable_reason(primary)
    if reason:
        sys.exit(f"no streaming replica: {reason}")
    log("making the replica (pg_basebackup)")
    replica = StreamingReplica(primary).create()
    try:
        replica.wait_caught_up()
        database = url.rsplit("/", 1)[1]
        for label, env in (
            ("primary alone", {"DATABASE_URL": url}),
            (
                "primary + replica",
                {"DATABASE_URL": url, "DATABASE_REPLICA_URLS": replica.url(database)},
            ),
        ):
            server = Server(args.port, env, args.workers)
            try:
                for path in READS:  # warm-up
                    server.call("GET", path)
                reads, writes, errors = run_load(server, args)
                print(
                    f"{label}: {reads:.1f} reads/s, {writes:.1f} writes/s "
                    f"(concurrency {args.concurrency}, writers {args.writers}, "
                    f"{args.workers} workers), errors {errors}; reads served: {server.routed()}"
                )
            finally:
                server.stop()
    finally:
        replica.destroy()


if __name__ == "__main__":
    main()
