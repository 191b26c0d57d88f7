"""Clients booting onto the two NUMA cells of one host at once, through a gunicorn of several
worker processes on PostgreSQL: the cells together never pass the host's total minus its
reservation (the limit is checked under the host root's lock), though each cell alone would
take more."""

import uuid
from collections import Counter

import pytest

from allocations.models import Allocation
from scheduling.models import Flavor
from tests.allocations.test_concurrency import Client, race
from tests.conftest import PlacementClient
from tests.gunicorn_server import running_gunicorn
from tests.providers.devices import PLUGINS, report_and_sync

pytestmark = [
    pytest.mark.live,
    pytest.mark.postgresql,
    pytest.mark.django_db(transaction=True),
]

CLIENTS = 12
ENV = {
    "PLACEMENT_RESOURCE_PLUGINS": ",".join(PLUGINS),
    "PLACEMENT_RESERVED_HOST_MEMORY_MB": "1024",
    "PLACEMENT_RAM_ALLOCATION_RATIO": "1.0",
    "PLACEMENT_CPU_ALLOCATION_RATIO": "1.0",
}
# Two cells of 4096 MB: 8 instances of 1024 MB by the cells, 7 by the host (8192 - 1024).
HOST = {
    "vcpus": 16,
    "memory_mb": 8192,
    "local_gb": 100,
    "numa_topology": {
        "cells": [
            {"id": 0, "cpus": list(range(8)), "memory_mb": 4096},
            {"id": 1, "cpus": list(range(8, 16)), "memory_mb": 4096},
        ]
    },
}


def test_concurrent_boots_never_pass_the_host_limit(settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = PLUGINS
    settings.PLACEMENT_RESERVED = {"MEMORY_MB": 1024}
    settings.PLACEMENT_ALLOCATION_RATIOS = {"VCPU": 1.0, "MEMORY_MB": 1.0, "DISK_GB": 1.0}
    report_and_sync(PlacementClient(version="latest"), "h", HOST)
    Flavor.objects.create(name="n.f", vcpus=1, ram=1024, disk=1, extra_specs={"hw:numa_nodes": "1"})

    with running_gunicorn(workers=4, env=ENV) as base:
        clients = [Client(base) for _ in range(CLIENTS)]

        def work(client, index):
            body = {
                "name": f"c{index}",
                "flavor": "n.f",
                "project_id": "p",
                "user_id": "u",
                "scheduler_hints": {"target_host": "h"},
            }
            status, payload = client.call("POST", "/api/servers/", body)
            return status, payload["errors"][0]["code"] if status >= 400 else None

        answers = race(clients, work)
        raced = Counter(answers)
        # Then one at a time until the host refuses: the race left no room unused either.
        for index in range(CLIENTS, CLIENTS + 8):
            answers.append(work(clients[0], index))
            if answers[-1][0] == 409:
                break

    outcomes = Counter(answers)
    assert set(outcomes) <= {(201, None), (409, "scheduler.no_valid_host")}, outcomes
    assert raced[(201, None)] <= 7
    memory = list(
        Allocation.objects.filter(resource_class__name="MEMORY_MB").values_list(
            "resource_provider__name", "used"
        )
    )
    assert sum(used for _name, used in memory) == 7 * 1024, memory
    assert outcomes[(201, None)] == 7
    assert {name for name, _used in memory} <= {"h_NUMA0", "h_NUMA1"}


def test_two_claims_on_two_cells_at_once_cannot_both_take_the_last_room(settings, monkeypatch):
    """Both claims write their allocations (each cell has room), then check the host's limit at
    the same moment: the root's lock makes the second see the first, so one is refused."""
    import threading

    from django.db import connection

    from placementsite.core.exceptions import Conflict
    from providers.models import ResourceProvider
    from scheduling.services import claims

    settings.PLACEMENT_RESOURCE_PLUGINS = PLUGINS
    settings.PLACEMENT_RESERVED = {"MEMORY_MB": 1024}
    settings.PLACEMENT_ALLOCATION_RATIOS = {"VCPU": 1.0, "MEMORY_MB": 1.0, "DISK_GB": 1.0}
    report_and_sync(PlacementClient(version="latest"), "h", HOST)
    cells = [str(ResourceProvider.objects.get(name=f"h_NUMA{n}").uuid) for n in (0, 1)]
    from allocations.models import ConsumerType, Project, User

    for index in (0, 1):  # the owners exist: two first inserts of one row would wait on each other
        Project.objects.create(external_id=f"p{index}")
        User.objects.create(external_id=f"u{index}")
    ConsumerType.objects.get_or_create(name="INSTANCE")
    both_written = threading.Barrier(2)
    real_check = claims.claim_checked

    def check_together(allocations):
        both_written.wait(timeout=30)  # each claim's rows written, neither committed
        real_check(allocations)

    monkeypatch.setattr(claims, "claim_checked", check_together)
    outcomes = []

    def claim(index, cell):
        try:
            # 4096 MB on one cell: each fits its cell; together 8192 > 8192 - 1024.
            claims.allocations_claim(
                claims=[(uuid.uuid4(), {cell: {"MEMORY_MB": 4096}})],
                project_id=f"p{index}",
                user_id=f"u{index}",
            )
            outcomes.append("claimed")
        except (claims.ClaimFailed, Conflict) as exc:
            outcomes.append(getattr(exc, "detail", str(exc)))
        finally:
            connection.close()

    threads = [threading.Thread(target=claim, args=pair) for pair in enumerate(cells)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert len(outcomes) == 2 and outcomes.count("claimed") == 1, outcomes
    assert any("7168" in outcome for outcome in outcomes), outcomes
    used = sum(
        Allocation.objects.filter(resource_class__name="MEMORY_MB").values_list("used", flat=True)
    )
    assert used == 4096
