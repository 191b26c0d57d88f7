"""Many clients racing for the last units, through HTTP against gunicorn on PostgreSQL.

A gunicorn with several worker processes serves the test database; every
client is a thread with its own HTTP connection (so its own worker and
database connection on the server side). All clients start together on a
barrier. The provider's capacity covers only some of the claims: the
winners must fit, every loser must get a 409, and the final usage must
equal what the winners claimed and never exceed the capacity.
"""

import json
import threading
import uuid
from collections import Counter
from pathlib import Path

import pytest
import requests

from allocations.models import Allocation
from tests.factories import make_provider
from tests.gunicorn_server import running_gunicorn

pytestmark = [
    pytest.mark.live,
    pytest.mark.postgresql,
    pytest.mark.django_db(transaction=True),
]

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = 24
CLAIMS_PER_CLIENT = 6
ROUNDS = 4
# A reshape claim costs three requests and conflicts on every generation change.
RESHAPE_ROUNDS = 3
WORKERS = 4
# Printed at the end of each test (pytest -s) and summed up in the report.
FIGURES = []


@pytest.fixture
def server(transactional_db):
    """A gunicorn serving the test database; yields its base URL."""
    with running_gunicorn(workers=WORKERS) as base:
        yield base


class Client:
    """One racing client: its own session (connection) to the server."""

    def __init__(self, base, version="1.39"):
        self.base = base
        self.session = requests.Session()
        self.session.headers.update(
            {
                "X-Auth-Token": "admin",
                "OpenStack-API-Version": f"placement {version}",
                "Content-Type": "application/json",
            }
        )

    def call(self, method, path, body=None):
        data = json.dumps(body) if body is not None else None
        response = self.session.request(method, self.base + path, data=data, timeout=120)
        payload = response.json() if response.content else None
        return response.status_code, payload


def race(clients, work):
    """Run ``work(client, index)`` in one thread per client, all starting together."""
    barrier = threading.Barrier(len(clients))
    results = [None] * len(clients)
    errors = []

    def run(index):
        try:
            barrier.wait()
            results[index] = work(clients[index], index)
        except Exception as exc:  # surfaced below, never swallowed
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(clients))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    return results


def claim_body(allocations, consumer_type="INSTANCE"):
    return {
        "allocations": {str(rp): {"resources": res} for rp, res in allocations.items()},
        "project_id": "race",
        "user_id": "race",
        "consumer_generation": None,
        "consumer_type": consumer_type,
    }


def usage(client, provider_uuid):
    status, body = client.call("GET", f"/resource_providers/{provider_uuid}/usages")
    assert status == 200
    return body["usages"], body["resource_provider_generation"]


def report(name, **figures):
    FIGURES.append((name, figures))
    print(f"\n[concurrency] {name}: {figures}")


def is_conflict(status, body):
    return status == 409 and body and body["errors"][0]["status"] == 409


def test_put_allocations_race_never_over_allocates(server):
    capacity, amount = 50, 1
    clients = [Client(server) for _ in range(CLIENTS)]
    totals = Counter()
    for round_number in range(ROUNDS):
        rp = make_provider(f"race-put-{round_number}", inventories={"VCPU": capacity})

        def work(client, index, rp=rp):
            statuses = []
            for _ in range(CLAIMS_PER_CLIENT):
                status, body = client.call(
                    "PUT", f"/allocations/{uuid.uuid4()}", claim_body({rp.uuid: {"VCPU": amount}})
                )
                assert status == 204 or is_conflict(status, body), (status, body)
                statuses.append(status)
            return statuses

        statuses = Counter(s for result in race(clients, work) for s in result)
        used, _generation = usage(clients[0], rp.uuid)
        claims = CLIENTS * CLAIMS_PER_CLIENT
        assert statuses[204] + statuses[409] == claims
        assert used["VCPU"] == statuses[204] * amount
        assert used["VCPU"] <= capacity
        # The locks serialize the writers, so no claim loses while units remain.
        assert statuses[204] == capacity // amount
        totals.update(statuses)
        totals["over_allocations"] += max(0, used["VCPU"] - capacity)
    report(
        "PUT /allocations/{consumer}",
        clients=CLIENTS,
        rounds=ROUNDS,
        claims=CLIENTS * CLAIMS_PER_CLIENT * ROUNDS,
        winners=totals[204],
        conflicts_409=totals[409],
        over_allocations=totals["over_allocations"],
    )


def test_post_allocations_race_is_atomic_and_never_over_allocates(server):
    capacity, amount = 30, 2
    clients = [Client(server) for _ in range(CLIENTS)]
    totals = Counter()
    for round_number in range(ROUNDS):
        first = make_provider(f"race-post-a-{round_number}", inventories={"VCPU": capacity})
        second = make_provider(f"race-post-b-{round_number}", inventories={"VCPU": capacity + 6})

        def work(client, index, first=first, second=second):
            outcomes = []
            for _ in range(CLAIMS_PER_CLIENT):
                instance, migration = str(uuid.uuid4()), str(uuid.uuid4())
                status, body = client.call(
                    "POST",
                    "/allocations",
                    {
                        instance: claim_body({second.uuid: {"VCPU": amount}}),
                        migration: claim_body({first.uuid: {"VCPU": amount}}, "MIGRATION"),
                    },
                )
                assert status == 204 or is_conflict(status, body), (status, body)
                outcomes.append((status, instance, migration))
            return outcomes

        outcomes = [o for result in race(clients, work) for o in result]
        checker = clients[0]
        holding = {
            str(u) for u in Allocation.objects.values_list("consumer__uuid", flat=True).distinct()
        }
        for status, instance, migration in outcomes:
            held = [c in holding for c in (instance, migration)]
            # All or nothing: both consumers were written, or neither.
            assert held == ([True, True] if status == 204 else [False, False])
        statuses = Counter(status for status, _i, _m in outcomes)
        used_first, _ = usage(checker, first.uuid)
        used_second, _ = usage(checker, second.uuid)
        assert used_first["VCPU"] == used_second["VCPU"] == statuses[204] * amount
        assert used_first["VCPU"] <= capacity
        assert statuses[204] == capacity // amount
        totals.update(statuses)
        totals["over_allocations"] += max(0, used_first["VCPU"] - capacity)
    report(
        "POST /allocations",
        clients=CLIENTS,
        rounds=ROUNDS,
        requests=CLIENTS * CLAIMS_PER_CLIENT * ROUNDS,
        winners=totals[204],
        conflicts_409=totals[409],
        over_allocations=totals["over_allocations"],
    )


def test_reshaper_race_never_over_allocates(server):
    """Every client claims through reshapes of one tree, retrying generation conflicts afresh."""
    capacity, amount = 20, 2
    clients = [Client(server) for _ in range(CLIENTS)]
    totals = Counter()
    for round_number in range(RESHAPE_ROUNDS):
        root = make_provider(f"race-reshape-{round_number}", inventories={"VCPU": capacity})
        child = make_provider(f"race-reshape-{round_number}-child", parent=root)

        def attempt(client, consumer, root=root, child=child):
            _used, root_generation = usage(client, root.uuid)
            _used, child_generation = usage(client, child.uuid)
            return client.call(
                "POST",
                "/reshaper",
                {
                    "inventories": {
                        str(root.uuid): {
                            "resource_provider_generation": root_generation,
                            "inventories": {"VCPU": {"total": capacity}},
                        },
                        str(child.uuid): {
                            "resource_provider_generation": child_generation,
                            "inventories": {},
                        },
                    },
                    "allocations": {consumer: claim_body({root.uuid: {"VCPU": amount}})},
                },
            )

        def work(client, index):
            outcomes = []
            for _claim in range(1):
                consumer = str(uuid.uuid4())
                conflicts = 0
                while True:
                    status, body = attempt(client, consumer)
                    assert status == 204 or is_conflict(status, body), (status, body)
                    if status == 409 and body["errors"][0]["code"] == "placement.concurrent_update":
                        # A fresh request with fresh generations, never a retry in the
                        # same transaction.
                        conflicts += 1
                        continue
                    break
                outcomes.append((status, conflicts))
            return outcomes

        outcomes = [o for result in race(clients, work) for o in result]
        statuses = Counter(status for status, _c in outcomes)
        used, _ = usage(clients[0], root.uuid)
        assert used["VCPU"] == statuses[204] * amount
        assert used["VCPU"] <= capacity
        assert statuses[204] == capacity // amount
        totals.update(statuses)
        totals["generation_conflicts"] += sum(c for _s, c in outcomes)
        totals["over_allocations"] += max(0, used["VCPU"] - capacity)
    report(
        "POST /reshaper",
        clients=CLIENTS,
        rounds=RESHAPE_ROUNDS,
        claims=CLIENTS * RESHAPE_ROUNDS,
        winners=totals[204],
        capacity_409=totals[409],
        generation_conflicts_409_retried=totals["generation_conflicts"],
        over_allocations=totals["over_allocations"],
    )


def test_over_capacity_provider_drains_but_never_grows_under_contention(server):
    """An inventory lowered below its usage: holders hand their allocations to new consumers
    or shrink them (never refused for capacity) while newcomers race for units that are not
    there (always refused). The usage only ever falls."""
    holders = CLIENTS // 2
    rp = make_provider("race-drain", inventories={"VCPU": 100})
    clients = [Client(server) for _ in range(CLIENTS)]
    owned = {}
    for index in range(holders):
        consumer = str(uuid.uuid4())
        status, body = clients[0].call(
            "PUT", f"/allocations/{consumer}", claim_body({rp.uuid: {"VCPU": 4}})
        )
        assert status == 204, body
        owned[index] = consumer
    used_before, generation = usage(clients[0], rp.uuid)
    status, body = clients[0].call(
        "PUT",
        f"/resource_providers/{rp.uuid}/inventories/VCPU",
        {"total": 10, "resource_provider_generation": generation},
    )
    assert status == 200, body

    def work(client, index):
        outcomes = []
        if index not in owned:
            for _ in range(CLAIMS_PER_CLIENT):
                status, body = client.call(
                    "PUT", f"/allocations/{uuid.uuid4()}", claim_body({rp.uuid: {"VCPU": 1}})
                )
                assert is_conflict(status, body), (status, body)
                outcomes.append("refused")
            return outcomes
        consumer = owned[index]
        for step in range(CLAIMS_PER_CLIENT):
            status, held = client.call("GET", f"/allocations/{consumer}")
            amount = held["allocations"][str(rp.uuid)]["resources"]["VCPU"]
            taker = str(uuid.uuid4())
            keep = max(amount - step % 2, 1)  # every other step also shrinks by one
            body = {
                consumer: {**claim_body({}), "consumer_generation": held["consumer_generation"]},
                taker: claim_body({rp.uuid: {"VCPU": keep}}),
            }
            status, answer = client.call("POST", "/allocations", body)
            assert status == 204 or is_conflict(status, answer), (status, answer)
            if status == 204:
                consumer = taker
                outcomes.append("moved")
        return outcomes

    outcomes = Counter(o for result in race(clients, work) for o in result)
    used_after, _generation = usage(clients[0], rp.uuid)
    assert outcomes["refused"] == (CLIENTS - holders) * CLAIMS_PER_CLIENT
    assert outcomes["moved"] > 0
    assert used_after["VCPU"] <= used_before["VCPU"]
    assert Allocation.objects.filter(resource_provider__uuid=rp.uuid).count() == holders
    report("drain over capacity", moved=outcomes["moved"], used=used_after["VCPU"])
