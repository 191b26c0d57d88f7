"""Twenty clients booting servers on a nearly full cloud, through HTTP against a gunicorn of
several worker processes on PostgreSQL: no provider is ever over-allocated, and every request
is either placed (201) or refused with scheduler.no_valid_host (409), never anything else."""

from collections import Counter, defaultdict

import pytest
from django.db.models import Sum

from allocations.models import Allocation, Consumer
from scheduling.models import Flavor, Server
from tests.allocations.test_concurrency import Client, race, server  # noqa: F401  (fixture)
from tests.factories import make_provider

pytestmark = [
    pytest.mark.live,
    pytest.mark.postgresql,
    pytest.mark.django_db(transaction=True),
]

CLIENTS = 20
BOOTS_PER_CLIENT = 3
HOSTS = 6
SLOTS_PER_HOST = 3  # 18 slots for 60 boots (one host already holds one instance)


def test_twenty_clients_never_over_allocate(server):  # noqa: F811
    Flavor.objects.create(name="f", vcpus=2, ram=2048, disk=10)
    hosts = [
        make_provider(
            f"cn{i}",
            inventories={"VCPU": 2 * SLOTS_PER_HOST, "MEMORY_MB": 16384, "DISK_GB": 1000},
        )
        for i in range(HOSTS)
    ]
    clients = [Client(server) for _ in range(CLIENTS)]
    # One instance already there (a nearly full cloud is not an empty one).
    status, body = clients[0].call(
        "POST",
        "/api/servers/",
        {"name": "first", "flavor": "f", "project_id": "p", "user_id": "u"},
    )
    assert status == 201, body

    def work(client, index):
        answers = []
        for n in range(BOOTS_PER_CLIENT):
            body = {"name": f"c{index}-{n}", "flavor": "f", "project_id": "p", "user_id": "u"}
            status, payload = client.call("POST", "/api/servers/", body)
            code = payload["errors"][0]["code"] if status >= 400 else None
            answers.append((status, code, payload))
        return answers

    answers = [a for per_client in race(clients, work) for a in per_client]
    outcomes = Counter((status, code) for status, code, _payload in answers)
    assert set(outcomes) <= {(201, None), (409, "scheduler.no_valid_host")}, outcomes
    placed = outcomes[(201, None)]
    slots = HOSTS * SLOTS_PER_HOST - 1
    assert 0 < placed <= slots

    # Nothing over-allocated, and what is allocated is exactly what the servers hold.
    used = defaultdict(int)
    for provider_id, name, total in (
        Allocation.objects.values_list("resource_provider_id", "resource_class__name")
        .annotate(total=Sum("used"))
        .order_by()
    ):
        used[(provider_id, name)] = total
    for host in hosts:
        assert used[(host.id, "VCPU")] <= 2 * SLOTS_PER_HOST
    assert sum(used[(h.id, "VCPU")] for h in hosts) == 2 * (placed + 1)
    assert Server.objects.count() == placed + 1 == Consumer.objects.count()
    answered = {
        s["id"] for status, _c, payload in answers if status == 201 for s in payload["servers"]
    }
    assert answered | {body["servers"][0]["id"]} == {
        str(u) for u in Server.objects.values_list("uuid", flat=True)
    }
    status, capacity = clients[0].call("GET", "/api/capacity/?flavor=f")
    assert capacity["total"] == slots - placed
    print(f"\nscheduler race: {outcomes}, placed {placed} of {slots} slots")
