#!/usr/bin/env python3
"""Benchmark the one scheduling model on the boot side: a ``count=100`` boot against 100 single
boots, and the SQL statements of a warm single boot.

    .venv/bin/python scripts/bench_boot_model.py --hosts 1000

Loads ``--hosts`` flat compute hosts (as scripts/bench_capacity.py does, without NUMA hosts)
into a fresh PostgreSQL database ``bench_boot_model`` (``BENCH_BOOT_MODEL_DB`` to change it),
then through the whole Django stack in process (middleware, auth, DRF, the scheduler, the
claim): one warm-up boot, the statements of a single boot (every statement the request sends
through Django, savepoints included), ``--singles`` single boots one after
another, and ``--rounds`` boots of ``count=--count``. Prints the table of docs/performance.md.
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import bench_candidates as bc  # noqa: E402  (database helpers)
import bench_capacity  # noqa: E402  (the loader)

DATABASE = os.environ.get("BENCH_BOOT_MODEL_DB", "bench_boot_model")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=1000)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--singles", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    return parser.parse_args()


def boot(client, name, count=1):
    body = {"name": name, "flavor": "bench.small", "project_id": "p", "user_id": "u"}
    started = time.perf_counter()
    response = client.post(
        "/api/servers/",
        data={**body, "count": count},
        content_type="application/json",
        HTTP_X_AUTH_TOKEN="admin",
    )
    elapsed = time.perf_counter() - started
    assert response.status_code == 201, response.content[:300]
    assert len(response.json()["servers"]) == count
    return elapsed


def _counting(statements):
    """An execute wrapper recording every statement sent (savepoints included)."""

    def wrapper(execute, sql, params, many, context):
        statements.append(sql)
        return execute(sql, params, many, context)

    return wrapper


def main():
    args = parse_args()
    bench_capacity.DATABASE = DATABASE
    bc.recreate_database(DATABASE)
    bench_capacity.setup_django()
    bc.log(f"loading {args.hosts} hosts into {DATABASE}")
    bench_capacity.load(args.hosts, numa_every=0)
    bc.analyze_database(DATABASE)
    from django.db import connection
    from django.test import Client

    client = Client()
    boot(client, "warm-up")
    single, multi = [], []
    with connection.execute_wrapper(_counting(single)):
        boot(client, "counted")
    singles = [boot(client, f"single-{i}") for i in range(args.singles)]
    with connection.execute_wrapper(_counting(multi)):
        boot(client, "multi-counted", args.count)
    multis = [boot(client, f"multi-{i}", args.count) for i in range(args.rounds)]
    total_singles = sum(singles)
    median_multi = statistics.median(multis)
    print(f"| measure ({args.hosts} hosts) | value |")
    print("|---|---|")
    print(f"| SQL statements, warm single boot | {len(single)} |")
    print(f"| SQL statements, one count={args.count} boot | {len(multi)} |")
    print(f"| single boot, median ms | {statistics.median(singles) * 1000:.0f} |")
    print(f"| {args.singles} single boots, s | {total_singles:.2f} |")
    print(f"| one count={args.count} boot, median of {args.rounds}, s | {median_multi:.2f} |")
    per_instance = total_singles / args.singles / (median_multi / args.count)
    print(f"| count={args.count} against single boots, per instance | {per_instance:.1f}x |")


if __name__ == "__main__":
    main()
