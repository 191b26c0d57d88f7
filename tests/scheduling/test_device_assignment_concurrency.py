"""Twenty clients taking VFs of one PF at once, through a gunicorn of several worker processes
on PostgreSQL: no VF is assigned twice, every placed server holds exactly one, and the
assigned units equal the PF's usage."""

from collections import Counter

import pytest

from allocations.models import Allocation, DeviceAssignment
from scheduling.models import Flavor, Server
from tests.allocations.test_concurrency import Client, race, server  # noqa: F401  (fixture)
from tests.conftest import PlacementClient
from tests.providers.devices import PLUGINS, host_report, pf, report_and_sync

pytestmark = [
    pytest.mark.live,
    pytest.mark.postgresql,
    pytest.mark.django_db(transaction=True),
]

CLIENTS = 20
BOOTS_PER_CLIENT = 2
VFS = [f"0000:81:00.{n}" for n in range(1, 8)] + [f"0000:81:01.{n}" for n in range(0, 5)]


def test_twenty_clients_never_get_one_vf_twice(server, settings):  # noqa: F811
    settings.PLACEMENT_RESOURCE_PLUGINS = PLUGINS
    report_and_sync(PlacementClient(version="latest"), "d1", host_report([pf(vfs=VFS)]))
    Flavor.objects.create(
        name="vf.f", vcpus=1, ram=64, disk=1, extra_specs={"resources:SRIOV_NET_VF": "1"}
    )
    clients = [Client(server) for _ in range(CLIENTS)]

    def work(client, index):
        answers = []
        for n in range(BOOTS_PER_CLIENT):
            body = {"name": f"c{index}-{n}", "flavor": "vf.f", "project_id": "p", "user_id": "u"}
            status, payload = client.call("POST", "/api/servers/", body)
            code = payload["errors"][0]["code"] if status >= 400 else None
            answers.append((status, code, payload))
        return answers

    answers = [a for per_client in race(clients, work) for a in per_client]
    outcomes = Counter((status, code) for status, code, _payload in answers)
    assert set(outcomes) <= {(201, None), (409, "scheduler.no_valid_host")}, outcomes
    assert outcomes[(201, None)] == len(VFS)

    answered = [
        device["address"]
        for status, _code, payload in answers
        if status == 201
        for device in payload["servers"][0]["devices"]
    ]
    assert sorted(answered) == sorted(VFS)  # each VF once, none twice
    assigned = Counter(DeviceAssignment.objects.values_list("consumer__uuid", flat=True).order_by())
    assert set(assigned.values()) == {1}
    assert {str(u) for u in assigned} == {
        str(u) for u in Server.objects.values_list("uuid", flat=True)
    }
    used = sum(
        Allocation.objects.filter(resource_class__name="SRIOV_NET_VF").values_list(
            "used", flat=True
        )
    )
    assert used == DeviceAssignment.objects.count() == len(VFS)
