#!/usr/bin/env python3
"""Full vs bare: how far ``GET /allocation_candidates`` is from what the database can do.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_10k \\
        .venv/bin/python scripts/bench_bare.py --compute 10000 [--nested 1000] [--wide 20]

(load the database first with ``scripts/bulk_load.py``: the same counts). For each query:

1. **captured**: the request is answered once in process (Django's test client, the whole
   middleware stack) while every SQL statement it runs is recorded exactly as psycopg2 sent it
   (parameters inlined), with the JSON answer;
2. **bare**: those statements replayed through a plain psycopg2 connection (each executed and
   fetched whole), plus ``orjson.dumps`` of the same answer: the database's work and the
   cheapest encoding, nothing of the service;
3. **in-process**: the same request through the test client (no HTTP, no gunicorn);
4. **full**: the same request over HTTP to a gunicorn (one sync worker) on that database.

The first row, **floor**, is ``GET /resource_classes/VCPU``: one indexed lookup of a row, so
its full time is about what any request of the service costs before its own work (the HTTP
server, the middleware, authentication, the microversion, policy, the view's plumbing); a
query whose bare time is B cannot come under (B + that) / B.

Each is the median of ``--repeat`` runs after a warm-up; full/bare is the ratio the issue's
targets speak of. Nothing here is a test: figures go in docs/performance.md.
"""

import argparse
import http.client
import os
import statistics
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "placementsite.settings")
os.environ.setdefault("PLACEMENT_AUTH_STRATEGY", "noauth2")
os.environ.setdefault("PLACEMENT_LOG_LEVEL", "WARNING")
# As scripts/bench_candidates.py: every candidate (the reference's default), on compute.
os.environ.setdefault("PLACEMENT_MAX_ALLOCATION_CANDIDATES", "-1")

from bench_candidates import SHARED_AGGREGATE  # noqa: E402

HEADERS = {"X-Auth-Token": "admin", "OpenStack-API-Version": "placement 1.39"}


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


FLOOR = ("floor: GET /resource_classes/VCPU", "/resource_classes/VCPU")


def queries(args):
    result = []
    resources = ("resources", "VCPU:1,MEMORY_MB:256,DISK_GB:10")
    if args.compute:
        n = args.compute
        result += [
            (f"compute {n}", [resources]),
            (
                f"compute {n} AVX2+aggregate",
                [resources, ("required", "HW_CPU_X86_AVX2"), ("member_of", SHARED_AGGREGATE)],
            ),
            (f"compute {n} limit=10", [resources, ("limit", "10")]),
        ]
    if args.nested:
        result.append(
            (
                f"nested {args.nested} hosts",
                [
                    ("resources", "DISK_GB:10"),
                    ("resources_COMPUTE", "VCPU:2,MEMORY_MB:2048"),
                    ("resources_NET", "SRIOV_NET_VF:1"),
                    ("required_NET", "CUSTOM_PHYSNET_PUBLIC"),
                    ("same_subtree", "_COMPUTE,_NET"),
                    ("group_policy", "none"),
                ],
            )
        )
    if args.wide:
        groups = [(f"resources{n}", "VGPU:1") for n in range(1, 7)] + [("group_policy", "none")]
        result.append((f"wide {args.wide}x8 limit=10", groups + [("limit", "10")]))
    return [FLOOR] + [
        (label, "/allocation_candidates?" + urllib.parse.urlencode(p)) for label, p in result
    ]


def median_ms(function, repeat):
    function()  # warm-up
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1000


class InProcess:
    def __init__(self):
        import django

        django.setup()
        from django.test import Client

        self.client = Client(
            HTTP_HOST="127.0.0.1",
            **{"HTTP_" + k.upper().replace("-", "_"): v for k, v in HEADERS.items()},
        )

    def capture(self, path):
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        connection.queries_log.clear()  # bounded: a full log would make the capture empty
        with CaptureQueriesContext(connection) as captured:
            response = self.client.get(path)
        assert response.status_code == 200, response.content[:300]
        return [q["sql"] for q in captured.captured_queries], response.content

    def request(self, path):
        response = self.client.get(path)
        assert response.status_code == 200


class Bare:
    def __init__(self, url):
        import psycopg2

        self.connection = psycopg2.connect(url)
        self.connection.autocommit = True
        with self.connection.cursor() as cursor:
            cursor.execute("SET jit = off")  # as the service's connections

    def run(self, statements, answer):
        import orjson

        with self.connection.cursor() as cursor:
            for sql in statements:
                cursor.execute(sql)
                if cursor.description:
                    cursor.fetchall()
        orjson.dumps(answer)

    def slowest(self, statements, repeat):
        """``(median ms, sql)`` of the statement that takes longest."""
        timings = []
        for sql in statements:
            timings.append((median_ms(lambda sql=sql: self.sql_only([sql]), repeat), sql))
        return max(timings)

    def sql_only(self, statements):
        with self.connection.cursor() as cursor:
            for sql in statements:
                cursor.execute(sql)
                if cursor.description:
                    cursor.fetchall()


class Gunicorn:
    def __init__(self, port, url):
        env = {**os.environ, "DATABASE_URL": url, "PLACEMENT_LOG_LEVEL": "WARNING"}
        self.port = port
        self.process = subprocess.Popen(
            [
                str(Path(sys.executable).parent / "gunicorn"),
                "placementsite.wsgi:application",
                "--workers",
                "1",
                "--bind",
                f"127.0.0.1:{port}",
                "--timeout",
                "300",
                "--log-level",
                "warning",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while True:
            try:
                self.connection = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
                self.get("/")
                break
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise RuntimeError("gunicorn did not start") from None
                time.sleep(0.3)

    def get(self, path):
        self.connection.request("GET", path, headers=HEADERS)
        response = self.connection.getresponse()
        body = response.read()
        assert response.status == 200, body[:300]
        return body

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compute", type=int, default=0)
    parser.add_argument("--nested", type=int, default=0)
    parser.add_argument("--wide", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--port", type=int, default=8128)
    parser.add_argument("--slowest", action="store_true", help="log each query's slowest SQL")
    parser.add_argument("--only", default="", help="the queries whose label holds this text")
    args = parser.parse_args(argv)
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        parser.error("set DATABASE_URL to a database scripts/bulk_load.py loaded")

    import orjson

    in_process, bare = InProcess(), Bare(url)
    server = Gunicorn(args.port, url)
    rows = []
    try:
        for label, path in queries(args):
            if args.only not in label and (label, path) != FLOOR:
                continue
            statements, content = in_process.capture(path)
            answer = orjson.loads(content)
            count = len(answer.get("allocation_requests", [answer]))
            sql_ms = median_ms(lambda s=statements: bare.sql_only(s), args.repeat)
            encode_ms = median_ms(lambda a=answer: orjson.dumps(a), args.repeat)
            bare_ms = median_ms(lambda s=statements, a=answer: bare.run(s, a), args.repeat)
            process_ms = median_ms(lambda p=path: in_process.request(p), args.repeat)
            full_ms = median_ms(lambda p=path: server.get(p), args.repeat)
            rows.append(
                (label, count, len(statements), sql_ms, encode_ms, bare_ms, process_ms, full_ms)
            )
            if args.slowest:
                ms, sql = bare.slowest(statements, args.repeat)
                log(f"{label}: slowest statement {ms:.1f} ms: {' '.join(sql.split())[:300]}")
            log(f"{label}: full {full_ms:.1f} ms, bare {bare_ms:.1f} ms")
    finally:
        server.stop()
    header = (
        "| query | candidates | statements | SQL | orjson | bare | in-process | full HTTP "
        "| full/bare |"
    )
    print(header)
    print("|" + "---|" * 9)
    for label, count, n, sql_ms, enc_ms, bare_ms, proc_ms, full_ms in rows:
        print(
            f"| {label} | {count} | {n} | {sql_ms:.1f} ms | {enc_ms:.1f} ms | {bare_ms:.1f} ms "
            f"| {proc_ms:.1f} ms | {full_ms:.1f} ms | {full_ms / bare_ms:.2f}x |"
        )


if __name__ == "__main__":
    main()
