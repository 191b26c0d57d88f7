#!/usr/bin/env python3
"""Benchmark ``GET /allocation_candidates``: this project against the reference Placement.

One command prints the table (see docs/performance.md)::

    .venv/bin/python scripts/bench_candidates.py --providers 1000,10000

For every topology the script starts each server under gunicorn on a fresh PostgreSQL database
(``bench_project``: migrated, noauth2; ``bench_reference``: openstack-placement from PyPI served
by scripts/reference-placement), with the same worker count, loads the same topology into both
over the HTTP API, analyzes both databases (``VACUUM ANALYZE``, as autovacuum would; ``--statistics fresh`` or
``both`` also measures them freshly loaded, without planner statistics, first), then
times the same requests against both: median and p95 latency over
sequential requests, throughput at concurrency 10, and the peak resident memory of the gunicorn
master and workers (read from /proc). ``--project-url``/``--reference-url`` reuse running servers
on 127.0.0.1 instead (their providers are deleted first only with ``--wipe``).

Topologies (workloads):
  compute  N compute nodes (--providers, 1,000 and 10,000 by default) with VCPU, MEMORY_MB and
           DISK_GB, one in four in a shared aggregate and with HW_CPU_X86_AVX2, plus a sharing
           storage provider (MISC_SHARES_VIA_AGGREGATE) holding DISK_GB in that aggregate.
  nested   compute nodes (--nested-hosts) holding DISK_GB, each with two NUMA children (VCPU,
           MEMORY_MB, HW_NUMA_ROOT), each NUMA node with one SR-IOV PF child (SRIOV_NET_VF,
           CUSTOM_PHYSNET_PUBLIC); queried with granular groups and same_subtree.
  wide     --wide-roots roots with 8 children each holding VGPU; six granular groups with
           group_policy=none, with and without limit=10.

Only the standard library is used; every target is on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import http.client
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH_DIR = ROOT / "var" / "bench"
REFERENCE_SCRIPT = ROOT / "scripts" / "reference-placement"
MICROVERSION = "placement 1.39"
# Deterministic identities, so both servers hold the very same providers and aggregate.
NAMESPACE = uuid.UUID("6f1d2b1e-6d55-4c39-9d0e-0b3c3f9e4a10")
SHARED_AGGREGATE = str(uuid.uuid5(NAMESPACE, "aggregate:shared-storage"))
LOCAL_HOSTS = ("127.0.0.1", "localhost")
PG_URL = os.environ.get("BENCH_PG_URL", "postgres://postgres@127.0.0.1:5432")


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def provider_uuid(name):
    return str(uuid.uuid5(NAMESPACE, f"provider:{name}"))


# --- HTTP --------------------------------------------------------------------------------------


class RequestTimeout(Exception):
    pass


class ServerError(Exception):
    """A server could not be prepared or started."""


class ApiError(Exception):
    def __init__(self, method, path, status, body):
        super().__init__(f"{method} {path} -> {status}: {body[:300]!r}")
        self.status = status


class Client:
    """A keep-alive HTTP client for one server, one connection per thread."""

    def __init__(self, base_url, timeout):
        parsed = urllib.parse.urlsplit(base_url)
        if parsed.scheme != "http" or parsed.hostname not in LOCAL_HOSTS:
            raise SystemExit(f"only http://127.0.0.1 targets are allowed, not {base_url!r}")
        self.host = "127.0.0.1"
        self.port = parsed.port or 80
        self.prefix = parsed.path.rstrip("/")
        self.timeout = timeout
        self.local = threading.local()

    @property
    def url(self):
        return f"http://{self.host}:{self.port}{self.prefix}"

    def _connection(self):
        connection = getattr(self.local, "connection", None)
        if connection is None:
            connection = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
            self.local.connection = connection
        return connection

    def _drop_connection(self):
        connection = getattr(self.local, "connection", None)
        if connection is not None:
            connection.close()
            self.local.connection = None

    def request(self, method, path, body=None, token="admin"):
        """Send one request; return (status, body bytes, seconds until the body was read)."""
        headers = {"OpenStack-API-Version": MICROVERSION, "Accept": "application/json"}
        if token:
            headers["X-Auth-Token"] = token
        payload = None
        if body is not None:
            payload = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        for attempt in (1, 2):
            connection = self._connection()
            started = time.perf_counter()
            try:
                connection.request(method, self.prefix + path, body=payload, headers=headers)
                response = connection.getresponse()
                data = response.read()
            except TimeoutError as error:
                self._drop_connection()
                raise RequestTimeout(f"{method} {path}: no answer in {self.timeout} s") from error
            except (http.client.HTTPException, ConnectionError):
                # A kept-alive connection the server has closed meanwhile: retry once afresh.
                self._drop_connection()
                if attempt == 2:
                    raise
                continue
            elapsed = time.perf_counter() - started
            if response.getheader("Connection", "").lower() == "close":
                self._drop_connection()
            return response.status, data, elapsed
        raise AssertionError("unreachable")

    def call(self, method, path, body=None, expect=(200,)):
        status, data, _ = self.request(method, path, body)
        if status not in expect:
            raise ApiError(method, path, status, data)
        return json.loads(data) if data else None


# --- Servers -----------------------------------------------------------------------------------


def listening_pids(port):
    """Pids of every process holding the listening socket of 127.0.0.1:port (gunicorn's master
    and its workers all do)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:
                inodes.add(f"socket:[{inode}]")
    pids = []
    if not inodes:
        return pids
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            for fd in (entry / "fd").iterdir():
                if os.readlink(fd) in inodes:
                    pids.append(int(entry.name))
                    break
        except OSError:
            continue
    return pids


def rss_bytes(pids):
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            continue
    return total


def cpu_ticks(pids):
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError):
            continue
    return total


class Server:
    """One server under test: started here on a fresh database, or reused at a given URL."""

    def __init__(self, name, url, owned, args, database=None):
        self.name = name
        self.owned = owned
        self.args = args
        # The server's PostgreSQL database, when known: analyzed after each load.
        self.database = database
        self.client = Client(url, args.timeout)
        self.process = None
        self.log_path = BENCH_DIR / f"{name}-{self.client.port}.log"

    @property
    def pids(self):
        return listening_pids(self.client.port)

    def rss(self):
        return rss_bytes(self.pids)

    def start(self, topology):
        """Start (or empty) the server; True if a reused server already holds the topology."""
        expected = topology.names()
        if not self.owned:
            return self._empty(expected)
        if listening_pids(self.client.port):
            raise ServerError(f"port {self.client.port} is in use; pick another or pass a URL")
        BENCH_DIR.mkdir(parents=True, exist_ok=True)
        try:
            command, env = self._prepare(topology)
        except subprocess.CalledProcessError as error:
            raise ServerError(f"{self.name}: {' '.join(error.cmd)} failed") from error
        log_file = self.log_path.open("ab")
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=log_file, stderr=subprocess.STDOUT
        )
        log_file.close()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise ServerError(f"{self.name} server exited; see {self.log_path}")
            try:
                status, _, _ = self.client.request("GET", "/", token=None)
                if status == 200:
                    log(f"{self.name}: serving on {self.client.url} (pid {self.process.pid})")
                    return False
            except (OSError, RequestTimeout, http.client.HTTPException):
                pass
            time.sleep(0.3)
        self.stop()
        raise ServerError(f"{self.name} server did not answer on {self.client.url}")

    def stop(self):
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(2)  # SIGINT: gunicorn's quick shutdown
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)
        self.process = None

    def wait_idle(self, limit):
        """After a timed-out request the worker goes on computing: wait (bounded) until the
        server's processes stop using CPU, so that they do not slow the next measurement."""
        deadline = time.monotonic() + limit
        ticks_per_second = os.sysconf("SC_CLK_TCK")
        while time.monotonic() < deadline:
            before = cpu_ticks(self.pids)
            time.sleep(1.0)
            if cpu_ticks(self.pids) - before < 0.1 * ticks_per_second:
                return
        log(f"{self.name}: still busy after {limit:.0f} s, going on")

    def _empty(self, expected=None):
        body = self.client.call("GET", "/resource_providers")
        providers = body["resource_providers"]
        if not providers:
            return False
        if self.args.keep_loaded and expected is not None:
            names = {p["name"] for p in providers}
            if len(providers) == len(expected) and names == expected:
                log(f"{self.name}: already holds the {len(providers)} providers, not reloading")
                return True
        if not self.args.wipe:
            raise SystemExit(
                f"{self.name} at {self.client.url} holds {len(providers)} providers; "
                "pass --wipe to delete them before each topology"
            )
        parents = {p["uuid"]: p.get("parent_provider_uuid") for p in providers}

        def depth(uuid_):
            level = 0
            while parents.get(uuid_):
                uuid_ = parents[uuid_]
                level += 1
            return level

        levels = {}
        for uuid_ in parents:
            levels.setdefault(depth(uuid_), []).append(uuid_)
        log(f"{self.name}: deleting {len(providers)} providers")
        with concurrent.futures.ThreadPoolExecutor(self.args.load_threads) as pool:
            for level in sorted(levels, reverse=True):
                list(
                    pool.map(
                        lambda u: self.client.call(
                            "DELETE", f"/resource_providers/{u}", expect=(204,)
                        ),
                        levels[level],
                    )
                )

    def analyze(self):
        """Planner statistics, as autovacuum would gather them in production (it may be off on
        a test machine): both servers' databases get the same."""
        if self.database is not None:
            analyze_database(self.database)

    def _prepare(self, topology):
        workers = str(self.args.workers)
        # The server's worker timeout a little above the client's, so that a worker stuck on a
        # request the client gave up on is recycled soon after.
        timeout = str(int(self.args.timeout) + 10)
        if self.name == "reference":
            base = [str(REFERENCE_SCRIPT), "--port", str(self.client.port), "--workers", workers]
            base += ["--timeout", timeout, "--database", self.database]
            for step in (["install"], ["config"], ["--reset-db", "db-sync"]):
                subprocess.run(base + step, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
            return base + ["serve"], dict(os.environ)
        env = dict(os.environ)
        env.update(
            DATABASE_URL=f"{PG_URL}/{self.database}",
            PLACEMENT_AUTH_STRATEGY="noauth2",
            PLACEMENT_RANDOMIZE_ALLOCATION_CANDIDATES="false",
            PLACEMENT_MAX_ALLOCATION_CANDIDATES=str(topology.max_candidates),
            DJANGO_DEBUG="false",
            DJANGO_SETTINGS_MODULE="placementsite.settings",
        )
        recreate_database(self.database)
        python = str(ROOT / ".venv" / "bin" / "python")
        subprocess.run(
            [python, "manage.py", "migrate", "--noinput", "--skip-checks", "-v", "0"],
            cwd=ROOT,
            env=env,
            check=True,
        )
        gunicorn = str(ROOT / ".venv" / "bin" / "gunicorn")
        command = [gunicorn, "placementsite.wsgi:application", "--bind"]
        command += [f"127.0.0.1:{self.client.port}", "--workers", workers, "--timeout", timeout]
        # gunicorn's control socket has one default path per user: two servers would collide.
        command += ["--no-control-socket"]
        return command, env


def run_sql(database, *statements):
    """Run statements outside a transaction (VACUUM and CREATE DATABASE need that)."""
    import psycopg2  # in the project's requirements

    connection = psycopg2.connect(f"{PG_URL}/{database}")
    connection.autocommit = True
    with connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)
    connection.close()


def analyze_database(name):
    run_sql(name, "VACUUM ANALYZE")


def recreate_database(name):
    if not name.startswith("bench_"):
        raise SystemExit(f"refusing to recreate {name!r}: only bench_* databases")
    run_sql(
        "postgres", f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)', f'CREATE DATABASE "{name}"'
    )


# --- Topologies --------------------------------------------------------------------------------


def create_provider(client, name, inventories, traits=(), aggregates=(), parent=None):
    """Create one provider with its inventories, traits and aggregates; return its uuid."""
    body = {"name": name, "uuid": provider_uuid(name)}
    if parent:
        body["parent_provider_uuid"] = parent
    provider = client.call("POST", "/resource_providers", body)
    uuid_, generation = provider["uuid"], provider["generation"]
    path = f"/resource_providers/{uuid_}"
    if inventories:
        answer = client.call(
            "PUT",
            f"{path}/inventories",
            {"resource_provider_generation": generation, "inventories": inventories},
        )
        generation = answer["resource_provider_generation"]
    if traits:
        answer = client.call(
            "PUT", f"{path}/traits", {"resource_provider_generation": generation, "traits": traits}
        )
        generation = answer["resource_provider_generation"]
    if aggregates:
        client.call(
            "PUT",
            f"{path}/aggregates",
            {"resource_provider_generation": generation, "aggregates": list(aggregates)},
        )
    return uuid_


COMPUTE_INVENTORY = {
    "VCPU": {"total": 32, "allocation_ratio": 16.0, "max_unit": 32},
    "MEMORY_MB": {"total": 131072, "reserved": 512, "allocation_ratio": 1.5, "max_unit": 131072},
    "DISK_GB": {"total": 1024, "reserved": 10, "max_unit": 1024},
}


def load_compute(client, count):
    def node(index):
        in_subset = index % 4 == 0
        create_provider(
            client,
            f"compute-{index:05d}",
            COMPUTE_INVENTORY,
            traits=["HW_CPU_X86_AVX2"] if in_subset else (),
            aggregates=[SHARED_AGGREGATE] if in_subset else (),
        )

    create_provider(
        client,
        "shared-storage",
        {"DISK_GB": {"total": 100000, "max_unit": 100000}},
        traits=["MISC_SHARES_VIA_AGGREGATE"],
        aggregates=[SHARED_AGGREGATE],
    )
    return [(node, index) for index in range(count)]


def load_nested(client, count):
    client.call("PUT", "/traits/CUSTOM_PHYSNET_PUBLIC", expect=(201, 204))

    def host(index):
        name = f"nested-{index:05d}"
        root = create_provider(client, name, {"DISK_GB": {"total": 1024, "max_unit": 1024}})
        for numa in (0, 1):
            numa_uuid = create_provider(
                client,
                f"{name}-numa{numa}",
                {
                    "VCPU": {"total": 16, "allocation_ratio": 4.0, "max_unit": 16},
                    "MEMORY_MB": {"total": 65536, "max_unit": 65536},
                },
                traits=["HW_NUMA_ROOT"],
                parent=root,
            )
            create_provider(
                client,
                f"{name}-numa{numa}-pf{numa}",
                {"SRIOV_NET_VF": {"total": 16, "max_unit": 16}},
                traits=["CUSTOM_PHYSNET_PUBLIC"],
                parent=numa_uuid,
            )

    return [(host, index) for index in range(count)]


def load_wide(client, count):
    def tree(index):
        name = f"wide-{index:03d}"
        root = create_provider(client, name, {})
        for child in range(8):
            create_provider(
                client,
                f"{name}-gpu{child}",
                {"VGPU": {"total": 8, "max_unit": 8}},
                parent=root,
            )

    return [(tree, index) for index in range(count)]


@dataclasses.dataclass
class Query:
    label: str
    params: list

    @property
    def path(self):
        return "/allocation_candidates?" + urllib.parse.urlencode(self.params)


@dataclasses.dataclass
class Topology:
    key: str
    providers: int
    loader: object
    size: int
    queries: list
    # The project's PLACEMENT_MAX_ALLOCATION_CANDIDATES for this topology: -1 (no cap, the
    # reference's default) where both must return every candidate to be compared; the wide
    # topology keeps the project's default cap, as the reference cannot answer it anyway.
    max_candidates: int = -1

    def names(self):
        """The names of the providers this topology loads (to recognise a loaded server)."""
        if self.loader is load_compute:
            return {"shared-storage"} | {f"compute-{i:05d}" for i in range(self.size)}
        if self.loader is load_nested:
            names = set()
            for i in range(self.size):
                names |= {f"nested-{i:05d}"}
                names |= {f"nested-{i:05d}-numa{n}" for n in (0, 1)}
                names |= {f"nested-{i:05d}-numa{n}-pf{n}" for n in (0, 1)}
            return names
        names = set()
        for i in range(self.size):
            names |= {f"wide-{i:03d}"} | {f"wide-{i:03d}-gpu{c}" for c in range(8)}
        return names


def topologies(args):
    result = []
    if "compute" in args.workloads:
        for count in args.providers:
            resources = ("resources", "VCPU:1,MEMORY_MB:256,DISK_GB:10")
            result.append(
                Topology(
                    f"compute-{count}",
                    count + 1,
                    load_compute,
                    count,
                    [
                        Query(f"compute {count}", [resources]),
                        Query(
                            f"compute {count} AVX2+aggregate",
                            [
                                resources,
                                ("required", "HW_CPU_X86_AVX2"),
                                ("member_of", SHARED_AGGREGATE),
                            ],
                        ),
                    ],
                )
            )
    if "nested" in args.workloads:
        count = args.nested_hosts
        result.append(
            Topology(
                f"nested-{count}",
                count * 5,
                load_nested,
                count,
                [
                    Query(
                        f"nested {count} hosts",
                        [
                            ("resources", "DISK_GB:10"),
                            ("resources_COMPUTE", "VCPU:2,MEMORY_MB:2048"),
                            ("resources_NET", "SRIOV_NET_VF:1"),
                            ("required_NET", "CUSTOM_PHYSNET_PUBLIC"),
                            ("same_subtree", "_COMPUTE,_NET"),
                            ("group_policy", "none"),
                        ],
                    )
                ],
            )
        )
    if "wide" in args.workloads:
        count = args.wide_roots
        groups = [(f"resources{n}", "VGPU:1") for n in range(1, 7)] + [("group_policy", "none")]
        result.append(
            Topology(
                f"wide-{count}",
                count * 9,
                load_wide,
                count,
                [
                    Query(f"wide {count}x8 limit=10", groups + [("limit", "10")]),
                    Query(f"wide {count}x8", groups),
                ],
                max_candidates=10000,
            )
        )
    return result


def load(server, topology, threads):
    started = time.monotonic()
    tasks = topology.loader(server.client, topology.size)
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        futures = [pool.submit(function, index) for function, index in tasks]
        for future in concurrent.futures.as_completed(futures):
            error = future.exception()
            if error is not None:
                for other in futures:
                    other.cancel()
                raise error
    return time.monotonic() - started


# --- Measurements ------------------------------------------------------------------------------


@dataclasses.dataclass
class Result:
    candidates: object = None  # number of allocation requests, or an error text
    median: object = None  # seconds, or "timeout"
    p95: object = None
    throughput: object = None  # requests per second at the given concurrency
    rss: object = None  # peak bytes of gunicorn master + workers
    samples: int = 0


class RssSampler:
    """Samples the server's total RSS in the background and keeps the peak."""

    def __init__(self, server):
        self.server = server
        self.peak = 0
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        pids = self.server.pids
        for tick in range(10**7):
            self.peak = max(self.peak, rss_bytes(pids))
            if self.stopped.wait(0.25):
                break
            if tick % 8 == 7:  # workers can be replaced; finding them scans /proc
                pids = self.server.pids or pids

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stopped.set()
        self.thread.join()
        self.peak = max(self.peak, self.server.rss())


def measure(server, query, args):
    result = Result()
    with RssSampler(server) as sampler:
        timed(server, query, args, result)
    result.rss = sampler.peak
    if isinstance(result.median, float):
        log(
            f"{server.name}: {query.label}: {result.candidates} candidates, median "
            f"{result.median * 1000:.1f} ms, p95 {result.p95 * 1000:.1f} ms, "
            f"{result.throughput} req/s, peak RSS {result.rss / 2**20:.0f} MiB"
        )
    return result


def timed(server, query, args, result):
    client = server.client
    try:
        status, data, elapsed = client.request("GET", query.path)  # warm-up, also checked
    except RequestTimeout:
        result.candidates = result.median = result.p95 = "timeout"
        log(f"{server.name}: {query.label}: timed out after {args.timeout:g} s")
        server.wait_idle(args.timeout + 30)
        return
    if status != 200:
        result.candidates = f"HTTP {status}"
        log(f"{server.name}: {query.label}: HTTP {status} {data[:200]!r}")
        return
    result.candidates = len(json.loads(data)["allocation_requests"])
    samples = []
    spent = elapsed
    for _ in range(args.repeat):
        try:
            status, _, elapsed = client.request("GET", query.path)
        except RequestTimeout:
            result.median = result.p95 = "timeout"
            server.wait_idle(args.timeout + 30)
            return
        samples.append(elapsed)
        spent += elapsed
        if spent > args.budget and len(samples) >= 3:
            break
    result.samples = len(samples)
    result.median = statistics.median(samples)
    result.p95 = percentile(samples, 95)
    result.throughput = throughput(client, query.path, args)


def percentile(samples, pct):
    ordered = sorted(samples)
    rank = max(0, min(len(ordered) - 1, round(pct / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]


def throughput(client, path, args):
    """Requests per second with args.concurrency clients, bounded in count and time."""
    lock = threading.Lock()
    state = {"sent": 0, "done": 0, "failed": 0}
    started = time.monotonic()

    def worker():
        while True:
            with lock:
                if (
                    state["sent"] >= args.throughput_requests
                    or time.monotonic() - started > args.throughput_seconds
                ):
                    return
                state["sent"] += 1
            try:
                status, _, _ = client.request("GET", path)
            except (RequestTimeout, OSError, http.client.HTTPException):
                status = None
            with lock:
                state["done" if status == 200 else "failed"] += 1

    threads = [threading.Thread(target=worker) for _ in range(args.concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    if state["failed"]:
        log(f"throughput: {state['failed']} of {state['sent']} requests failed")
    return round(state["done"] / elapsed, 2) if state["done"] else 0.0


# --- Report ------------------------------------------------------------------------------------


def fmt_seconds(value, timeout):
    if value is None:
        return "-"
    if value == "timeout":
        return f">{timeout:g} s"
    if value >= 1:
        return f"{value:.2f} s"
    return f"{value * 1000:.1f} ms"


def ratio(project, reference, timeout, higher_is_better=False):
    if project is None or reference is None or isinstance(project, str):
        return "-"
    if reference == "timeout":
        return "-" if higher_is_better else f"<{project / timeout:.3f}x"
    if isinstance(reference, str) or not reference:
        return "-"
    return f"{project / reference:.2f}x"


def table(rows, args):
    """rows: (topology, query, project Result or None, reference Result or None)."""
    header = ["workload", "metric", "project", "reference", "project/reference"]
    lines = []
    for _topology, query, project, reference in rows:
        p = project or Result()
        r = reference or Result()
        metrics = [
            (
                "candidates",
                p.candidates,
                r.candidates,
                lambda v: "-" if v is None else str(v),
                None,
            ),
            ("median", p.median, r.median, lambda v: fmt_seconds(v, args.timeout), False),
            ("p95", p.p95, r.p95, lambda v: fmt_seconds(v, args.timeout), False),
            (
                f"req/s @{args.concurrency}",
                p.throughput,
                r.throughput,
                lambda v: "-" if v is None else f"{v:g}",
                True,
            ),
            (
                "peak RSS",
                p.rss,
                r.rss,
                lambda v: "-" if v is None else f"{v / 2**20:.0f} MiB",
                False,
            ),
        ]
        for name, pv, rv, show, higher in metrics:
            cell = "-" if higher is None else ratio(pv, rv, args.timeout, higher)
            lines.append([query.label, name, show(pv), show(rv), cell])
    widths = [max(len(row[i]) for row in [header] + lines) for i in range(len(header))]

    def render(row):
        return "| " + " | ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)) + " |"

    out = [render(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += [render(row) for row in lines]
    return "\n".join(out)


# --- Main --------------------------------------------------------------------------------------


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1],
    )

    def int_list(text):
        return [int(item) for item in text.split(",") if item.strip()]

    def name_list(text):
        names = [item.strip() for item in text.split(",") if item.strip()]
        unknown = set(names) - {"compute", "nested", "wide"}
        if unknown:
            raise argparse.ArgumentTypeError(f"unknown workloads: {', '.join(sorted(unknown))}")
        return names

    parser.add_argument(
        "--providers",
        type=int_list,
        default=[1000, 10000],
        help="compute node counts for the compute workload (default 1000,10000)",
    )
    parser.add_argument(
        "--workloads",
        type=name_list,
        default=["compute", "nested", "wide"],
        help="comma-separated: compute, nested, wide (default all)",
    )
    parser.add_argument(
        "--nested-hosts",
        type=int,
        default=1000,
        help="compute nodes of the nested workload (5 providers each)",
    )
    parser.add_argument(
        "--wide-roots", type=int, default=20, help="roots of the wide workload (8 children each)"
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=20,
        help="sequential timed requests per query, after one warm-up",
    )
    parser.add_argument(
        "--budget",
        type=float,
        default=90.0,
        help="stop repeating after this many seconds (at least 3 samples)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        help="per-request timeout in seconds; slower answers show as >T s",
    )
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument(
        "--throughput-requests",
        type=int,
        default=100,
        help="requests sent in the throughput phase at most",
    )
    parser.add_argument(
        "--throughput-seconds",
        type=float,
        default=30.0,
        help="no new requests in the throughput phase after this long",
    )
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers per server")
    parser.add_argument(
        "--load-threads",
        type=int,
        default=8,
        help="concurrent HTTP clients while loading a topology",
    )
    parser.add_argument("--project-port", type=int, default=8790)
    parser.add_argument("--reference-port", type=int, default=8778)
    parser.add_argument("--project-url", help="reuse a running project server (127.0.0.1)")
    parser.add_argument("--reference-url", help="reuse a running reference server (127.0.0.1)")
    parser.add_argument(
        "--project-database",
        help="its PostgreSQL database (default bench_project; with --project-url, the one it "
        "serves), analyzed after loading",
    )
    parser.add_argument(
        "--reference-database",
        help="its PostgreSQL database (default bench_reference, which must start with bench_; "
        "with --reference-url, the one it serves), analyzed after loading",
    )
    parser.add_argument(
        "--wipe",
        action="store_true",
        help="with --*-url: delete the server's providers before each topology",
    )
    parser.add_argument(
        "--keep-loaded",
        action="store_true",
        help="with --*-url: a server that already holds exactly this topology's providers "
        "is measured as it is, without wiping and reloading it",
    )
    parser.add_argument(
        "--statistics",
        choices=("analyzed", "fresh", "both"),
        default="analyzed",
        help="measure the databases analyzed (as autovacuum leaves them), fresh (freshly "
        "loaded, no planner statistics: autovacuum is off on this machine), or both from "
        "one load (fresh first, then analyzed; the fresh rows are labelled so)",
    )
    parser.add_argument("--skip-project", action="store_true")
    parser.add_argument("--skip-reference", action="store_true")
    parser.add_argument("--json", type=Path, help="also write the raw figures to this file")
    args = parser.parse_args(argv)
    if args.skip_project and args.skip_reference:
        parser.error("nothing to measure with both --skip-project and --skip-reference")
    for name in ("repeat", "concurrency", "workers", "load_threads", "nested_hosts", "wide_roots"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    return args


def servers_of(args):
    """The servers to measure: each started here unless its URL is given."""
    servers = []
    if not args.skip_project:
        url = args.project_url or f"http://127.0.0.1:{args.project_port}"
        database = args.project_database or (None if args.project_url else "bench_project")
        servers.append(
            Server("project", url, owned=not args.project_url, args=args, database=database)
        )
    if not args.skip_reference:
        url = args.reference_url or f"http://127.0.0.1:{args.reference_port}"
        database = args.reference_database or (None if args.reference_url else "bench_reference")
        servers.append(
            Server("reference", url, owned=not args.reference_url, args=args, database=database)
        )
    return servers


# The planner statistics each --statistics choice measures, in order (fresh before analyzed:
# analyzing cannot be undone).
STATISTICS = {"analyzed": ("analyzed",), "fresh": ("fresh",), "both": ("fresh", "analyzed")}


def queries_of(topology, statistics):
    """The topology's queries for each of ``statistics``, those on a fresh database labelled
    so."""
    return [
        query if kind == "analyzed" else dataclasses.replace(query, label=f"{query.label} (fresh)")
        for kind in statistics
        for query in topology.queries
    ]


def measure_topology(servers, topology, args):
    """``{(server name, query label): Result}`` for one topology on every server."""
    results = {}
    for server in servers:
        log(f"{server.name}: {topology.key}: starting, loading {topology.providers} providers")
        try:
            if not server.start(topology):
                seconds = load(server, topology, args.load_threads)
                log(f"{server.name}: {topology.key}: loaded in {seconds:.1f} s")
            for statistics in STATISTICS[args.statistics]:
                if statistics == "analyzed":
                    server.analyze()
                for query in queries_of(topology, (statistics,)):
                    results[(server.name, query.label)] = measure(server, query, args)
        except (
            ServerError,
            ApiError,
            OSError,
            http.client.HTTPException,
            RequestTimeout,
        ) as error:
            log(f"{server.name}: {topology.key}: failed: {error}")
            for query in queries_of(topology, STATISTICS[args.statistics]):
                results[(server.name, query.label)] = Result(candidates="failed")
        finally:
            server.stop()
    return results


def main(argv=None):
    args = parse_args(argv)
    servers = servers_of(args)
    rows = []
    raw = []
    try:
        for topology in topologies(args):
            results = measure_topology(servers, topology, args)
            for query in queries_of(topology, STATISTICS[args.statistics]):
                project = results.get(("project", query.label))
                reference = results.get(("reference", query.label))
                rows.append((topology, query, project, reference))
                raw.append(
                    {
                        "topology": topology.key,
                        "query": query.label,
                        "path": query.path,
                        "project": dataclasses.asdict(project) if project else None,
                        "reference": dataclasses.asdict(reference) if reference else None,
                    }
                )
    finally:
        for server in servers:
            server.stop()

    print(
        f"\nGET /allocation_candidates ({MICROVERSION}), {args.workers} gunicorn workers each, "
        f"{os.cpu_count()} CPUs; median/p95 of up to {args.repeat} sequential requests, "
        f"throughput at concurrency {args.concurrency}, timeout {args.timeout:g} s\n"
    )
    print(table(rows, args))
    print("\nQueries:")
    for _, query, _, _ in rows:
        print(f"  {query.label}: GET {query.path}")
    if args.json:
        args.json.write_text(json.dumps(raw, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
