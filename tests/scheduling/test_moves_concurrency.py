"""Races of the move lifecycle, each side a separate process on the same PostgreSQL database:
cleanup against confirm and revert, confirm against confirm and revert, several cleanup
workers at once, and a cleanup worker killed in the middle of its transaction. After each,
nothing is freed twice and nothing leaks: every provider's usage is exactly what the servers
hold, and no migration consumer holds anything once settled."""

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from django.db import connection
from django.db.models import Sum

from allocations.models import Allocation
from scheduling.management.commands.bench_migration_cleanup import seed_finished_migrations
from scheduling.models import LifecycleRecord, Migration, Server
from tests.conftest import test_database_url
from tests.scheduling.scheduler_helpers import boot, make_flavor, make_host

pytestmark = [pytest.mark.postgresql, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
SERVERS = 12
# Django's start-up in each process takes a moment on a busy machine.
START_DELAY = 6.0


def _spawn(*args, env=None):
    return subprocess.Popen(
        [sys.executable, "-m", "tests.scheduling.race_worker", *args],
        cwd=ROOT,
        env={
            **os.environ,
            "DATABASE_URL": test_database_url(),
            "DJANGO_SETTINGS_MODULE": "placementsite.settings",
            "PLACEMENT_LOG_LEVEL": "WARNING",
            **(env or {}),
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _run_together(*commands):
    """Start every ``(op, args, env)`` at the same instant; their JSON answers, in order."""
    start = str(time.time() + START_DELAY)
    processes = [_spawn(op, start, *args, env=env) for op, args, env in commands]
    answers = []
    for process in processes:
        out, err = process.communicate(timeout=240)
        assert process.returncode == 0, err
        answers.append(json.loads(out.strip().splitlines()[-1]))
    connection.close()  # see the other processes' commits with a fresh session
    return answers


@pytest.fixture
def moving(api):
    """SERVERS servers on three hosts, each in the middle of a migrate; their migrations."""
    for name in ("cn1", "cn2", "cn3"):
        make_host(api, name, {"VCPU": 64, "MEMORY_MB": 65536, "DISK_GB": 1000})
    make_flavor(api, "m1.small", vcpus=2, ram=1024, disk=10)
    uuids = []
    for index in range(SERVERS):
        server = boot(api, "m1.small", name=f"vm{index}").json["servers"][0]
        response = api.post(f"/api/servers/{server['id']}/migrate/", {})
        assert response.status == 201, response
        uuids.append(response.json["migration"]["id"])
    connection.close()
    return uuids


def _assert_consistent():
    """Usage per provider equals what the servers hold; servers hold what they record;
    settled migrations hold nothing."""
    per_provider = Counter()
    for server in Server.objects.all():
        held = {}
        for row in Allocation.objects.filter(consumer__uuid=server.uuid).values(
            "resource_provider__uuid", "resource_class__name", "used"
        ):
            held.setdefault(str(row["resource_provider__uuid"]), {})[
                row["resource_class__name"]
            ] = row["used"]
        assert held == server.allocations, server
        assert set(held) == {str(server.host.uuid)}
        for provider, resources in held.items():
            per_provider[provider] += resources["VCPU"]
    in_flight = Migration.objects.filter(status__in=Migration.IN_FLIGHT)
    for migration in in_flight:
        per_provider[str(migration.source.uuid)] += migration.source_allocations[
            str(migration.source.uuid)
        ]["VCPU"]
    settled = Migration.objects.filter(status__in=Migration.FINAL).values("uuid")
    assert not Allocation.objects.filter(consumer__uuid__in=settled).exists()
    actual = Counter(
        {
            str(row["resource_provider__uuid"]): row["total"]
            for row in Allocation.objects.filter(resource_class__name="VCPU")
            .values("resource_provider__uuid")
            .annotate(total=Sum("used"))
        }
    )
    assert +actual == +per_provider


def _check_placement(migration):
    server = Server.objects.get(uuid=migration.server_uuid)
    expected = migration.dest_id if migration.status == "confirmed" else migration.source_id
    assert server.host_id == expected, migration


def test_cleanup_against_concurrent_confirm_and_revert(moving):
    Migration.objects.update(lease_started_at="2000-01-01T00:00:00Z")
    half = SERVERS // 2
    revert_on_expiry = {"PLACEMENT_MIGRATION_EXPIRED_ACTION": "revert"}
    confirmer, reverter, cleaner1, cleaner2 = _run_together(
        ("settle", ["confirm", *moving[:half]], None),
        ("settle", ["revert", *moving[half:]], None),
        ("cleanup", ["3"], revert_on_expiry),
        ("cleanup", ["3"], revert_on_expiry),
    )
    settled_by = Counter(confirmer["done"] + reverter["done"])
    for answer in (cleaner1, cleaner2):
        settled_by.update(uuid for uuid, what in answer["expired"] if what == "revert")
    # Each migration settled exactly once, by whichever side got its row first.
    assert settled_by == Counter(moving)
    for uuid, code in confirmer["refused"] + reverter["refused"]:
        assert code == "migration.invalid_state", uuid
    for migration in Migration.objects.all():
        assert migration.status in ("confirmed", "reverted")
        _check_placement(migration)
    _assert_consistent()


def test_confirm_against_confirm_and_revert(moving):
    first, second, third = _run_together(
        ("settle", ["confirm", *moving], None),
        ("settle", ["confirm", *reversed(moving)], None),
        ("settle", ["revert", *moving[::2], *moving[1::2]], None),
    )
    done = Counter(first["done"] + second["done"] + third["done"])
    assert done == Counter(moving)
    refused = first["refused"] + second["refused"] + third["refused"]
    assert len(refused) == 2 * SERVERS
    assert {code for _uuid, code in refused} == {"migration.invalid_state"}
    for migration in Migration.objects.all():
        _check_placement(migration)
    _assert_consistent()


def test_cleanup_workers_at_once_free_each_migration_once(db):
    seed_finished_migrations(300, hosts=5)
    connection.close()
    answers = _run_together(*[("cleanup", ["1"], None)] * 3)
    assert sum(a["freed"] for a in answers) == 900
    assert sum(a["checked"] for a in answers) == 300
    freed = LifecycleRecord.objects.filter(action="freed")
    assert freed.count() == 300
    assert freed.values("migration").distinct().count() == 300
    assert not Allocation.objects.exists()
    assert not Migration.objects.filter(cleaned_at=None).exists()


def test_a_cleanup_worker_killed_mid_batch_frees_nothing_and_the_next_run_frees_once(db):
    seed_finished_migrations(50, hosts=5)
    connection.close()
    holder = _spawn("hold-cleanup", str(time.time()))
    try:
        line = holder.stdout.readline()
        assert json.loads(line) == {"holding": 150}, holder.stderr.read()
        # Meanwhile another worker skips the locked rows instead of freeing them too.
        (other,) = _run_together(("cleanup", ["1"], None))
        assert (other["checked"], other["freed"]) == (0, 0)
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
    connection.close()
    assert Allocation.objects.count() == 150
    assert not LifecycleRecord.objects.exists()
    (after,) = _run_together(("cleanup", ["2"], None))
    assert (after["checked"], after["freed"]) == (50, 150)
    assert LifecycleRecord.objects.filter(action="freed").count() == 50
    assert not Allocation.objects.exists()
