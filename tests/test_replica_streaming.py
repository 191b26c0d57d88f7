"""Routing against a real PostgreSQL streaming replica (``tests/replica.py``): reads served by
it see every write answered before them, a lagging (replay paused) or stopped replica is
skipped for the primary, and two API servers sharing the primary and the replica never
over-allocate under concurrent boots."""

import re
import tempfile
import time
from collections import Counter, defaultdict

import pytest
from django.db import connection, connections
from django.db.models import Sum
from django.test.utils import CaptureQueriesContext

from allocations.models import Allocation
from placementsite.core import replicas
from scheduling.models import Flavor, Server
from tests.allocations.test_concurrency import Client, race
from tests.factories import make_provider
from tests.gunicorn_server import running_gunicorn
from tests.replica import configured_replica
from tests.scheduling.scheduler_helpers import make_host

pytestmark = [
    pytest.mark.postgresql,
    pytest.mark.django_db(transaction=True, databases="__all__"),
]


@pytest.fixture
def replica(streaming_replica):
    with configured_replica("replica1", HOST="127.0.0.1", PORT=streaming_replica.port):
        yield streaming_replica


def _served_by(database, reason):
    return replicas.READS_ROUTED.labels(database=database, reason=reason)._value.get()


def _read_through_replica(replica, read):
    """``read()`` once the replica is current: other clients' writes (the cluster's other
    databases included) move the fence on, so a read may have to wait for a quiet moment."""
    for _ in range(50):
        replica.wait_caught_up()
        served = _served_by("replica1", "replica current")
        result = read()
        if _served_by("replica1", "replica current") == served + 1:
            return result
    pytest.fail("the replica never served a read")


def _set_vcpu(api, uuid, total):
    generation = api.get(f"/resource_providers/{uuid}").json["generation"]
    response = api.put(
        f"/resource_providers/{uuid}/inventories/VCPU",
        {"resource_provider_generation": generation, "total": total},
    )
    assert response.status == 200, response


def test_reads_come_from_the_replica_and_see_the_writes_before_them(api, replica):
    host = make_host(api, "cn1", {"VCPU": 4, "MEMORY_MB": 4096, "DISK_GB": 10})
    served = _served_by("replica1", "replica current")
    for total in range(5, 35):
        _set_vcpu(api, host, total)  # written on the primary...
        # ...and read at once, from the replica when it has replayed it: never the value before.
        response = api.get(f"/allocation_candidates?resources=VCPU:{total}")
        assert len(response.json["allocation_requests"]) == 1, total
        response = api.get(f"/resource_providers/{host}/usages")
        assert response.json["resource_provider_generation"] == total - 3
    # Which reads the replica took depends on how fast it replays (this machine is shared):
    # some, and every one of them right.
    assert _served_by("replica1", "replica current") > served

    # Idle, the replica catches up and serves every read.
    def read():
        with CaptureQueriesContext(connections["replica1"]) as on_replica:
            response = api.get("/resource_providers?resources=VCPU:34")
        return response, on_replica.captured_queries

    response, on_replica = _read_through_replica(replica, read)
    assert [p["uuid"] for p in response.json["resource_providers"]] == [host]
    assert any("resource_provider" in q["sql"] for q in on_replica)


def test_a_replica_whose_replay_is_paused_is_skipped(api, replica, settings):
    host = make_host(api, "cn1", {"VCPU": 4, "MEMORY_MB": 4096, "DISK_GB": 10})
    replica.wait_caught_up()
    replica.pause_replay()
    try:
        _set_vcpu(api, host, 6)  # the replica receives it but does not apply it
        behind = _served_by("default", "replica behind the fence")
        response = api.get("/resource_providers?resources=VCPU:6")
        assert [p["uuid"] for p in response.json["resource_providers"]] == [host]
        assert _served_by("default", "replica behind the fence") == behind + 1

        # Past the lag limit it is skipped without looking at the fence, and reported so.
        settings.PLACEMENT_REPLICA_MAX_LAG_MS = 200
        time.sleep(0.4)
        lagging = _served_by("default", "replica lagging")
        response = api.get("/resource_providers?resources=VCPU:6")
        assert [p["uuid"] for p in response.json["resource_providers"]] == [host]
        assert _served_by("default", "replica lagging") == lagging + 1
        check = api.get("/healthcheck?detailed").json["checks"]["replicas"]
        assert check["ok"] is True
        state = check["replicas"]["replica1"]
        assert state["status"] == "lagging" and state["replay_paused"] is True
        assert state["lag_ms"] > 200
    finally:
        replica.resume_replay()
    response = _read_through_replica(
        replica, lambda: api.get("/resource_providers?resources=VCPU:6")
    )
    assert [p["uuid"] for p in response.json["resource_providers"]] == [host]


def test_a_stopped_replica_is_skipped_then_used_again(api, replica):
    host = make_host(api, "cn1", {"VCPU": 4, "MEMORY_MB": 4096, "DISK_GB": 10})
    replica.wait_caught_up()
    assert api.get("/resource_providers?resources=VCPU:4").status == 200
    replica.stop()
    try:
        down = _served_by("default", "replicas down")
        response = api.get("/resource_providers?resources=VCPU:4")
        assert response.status == 200, response
        assert [p["uuid"] for p in response.json["resource_providers"]] == [host]
        response = api.get("/allocation_candidates?resources=VCPU:4")
        assert response.status == 200, response
        assert _served_by("default", "replicas down") == down + 2
        check = api.get("/healthcheck?detailed").json["checks"]["replicas"]
        assert check["ok"] is True  # skipped, not a failure (no Celery worker here: 503 else)
        assert check["replicas"]["replica1"]["status"] == "down"
    finally:
        replica.start()
    replicas.forget_down_replicas()  # rather than wait DOWN_RETRY_SECONDS
    response = _read_through_replica(
        replica, lambda: api.get("/resource_providers?resources=VCPU:4")
    )
    assert [p["uuid"] for p in response.json["resource_providers"]] == [host]


# --- two API servers, one primary, one replica ---------------------------------------------

SERVERS = 2
CLIENTS_PER_SERVER = 8
BOOTS_PER_CLIENT = 3
HOSTS = 6
SLOTS_PER_HOST = 3  # 18 slots for 48 boots


def _replica_reads(client):
    """Requests whose reads the server's replica served, from its /metrics."""
    response = client.session.get(client.base + "/metrics", timeout=30)
    assert response.status_code == 200, response.text[:300]
    return sum(
        float(value)
        for value in re.findall(
            r'^placement_db_read_requests_total\{database="replica1"[^}]*\} (\S+)$',
            response.text,
            re.M,
        )
    )


def test_two_api_servers_on_one_primary_and_replica_never_over_allocate(replica):
    Flavor.objects.create(name="f", vcpus=2, ram=2048, disk=10)
    hosts = [
        make_provider(
            f"cn{i}",
            inventories={"VCPU": 2 * SLOTS_PER_HOST, "MEMORY_MB": 16384, "DISK_GB": 1000},
        )
        for i in range(HOSTS)
    ]
    url = replica.url(connection.settings_dict["NAME"])
    with (
        tempfile.TemporaryDirectory() as metrics_a,
        tempfile.TemporaryDirectory() as metrics_b,
        running_gunicorn(
            workers=2,
            env={
                "DATABASE_REPLICA_URLS": url,
                "PLACEMENT_METRICS": "open",
                "PROMETHEUS_MULTIPROC_DIR": metrics_a,
            },
        ) as first,
        running_gunicorn(
            workers=2,
            env={
                "DATABASE_REPLICA_URLS": url,
                "PLACEMENT_METRICS": "open",
                "PROMETHEUS_MULTIPROC_DIR": metrics_b,
            },
        ) as second,
    ):
        bases = [first, second]
        clients = [Client(bases[i % SERVERS]) for i in range(SERVERS * CLIENTS_PER_SERVER)]

        def work(client, index):
            answers = []
            for n in range(BOOTS_PER_CLIENT):
                # A read the replica may serve, then a boot (the primary's).
                status, _ = client.call("GET", "/allocation_candidates?resources=VCPU:2")
                assert status == 200
                body = {"name": f"c{index}-{n}", "flavor": "f", "project_id": "p", "user_id": "u"}
                status, payload = client.call("POST", "/api/servers/", body)
                code = payload["errors"][0]["code"] if status >= 400 else None
                answers.append((status, code, payload))
            return answers

        answers = [a for per_client in race(clients, work) for a in per_client]
        outcomes = Counter((status, code) for status, code, _payload in answers)
        assert set(outcomes) <= {(201, None), (409, "scheduler.no_valid_host")}, outcomes
        placed = outcomes[(201, None)]
        assert placed == HOSTS * SLOTS_PER_HOST  # every slot taken, no more

        # Both servers now answer capacity (a replica read) with what the boots left: none.
        for base in bases:
            status, capacity = Client(base).call("GET", "/api/capacity/?flavor=f")
            assert status == 200 and capacity["total"] == 0, capacity
        assert all(_replica_reads(Client(base)) > 0 for base in bases)

    used = defaultdict(int)
    for provider_id, name, total in (
        Allocation.objects.values_list("resource_provider_id", "resource_class__name")
        .annotate(total=Sum("used"))
        .order_by()
    ):
        used[(provider_id, name)] = total
    for host in hosts:
        assert used[(host.id, "VCPU")] == 2 * SLOTS_PER_HOST  # full, never over
    assert Server.objects.count() == placed
