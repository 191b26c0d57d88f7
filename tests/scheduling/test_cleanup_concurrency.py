"""Two cleanups running at once (two workers, or the task and the command) act on each
expired move once and record it once, whatever the expired action."""

import threading

import pytest
from django.db import connection

from scheduling.models import LifecycleRecord, Migration
from scheduling.services.cleanup import migrations_cleanup
from tests.conftest import PlacementClient
from tests.scheduling.move_helpers import boot_one
from tests.scheduling.scheduler_helpers import make_flavor, make_host

pytestmark = [pytest.mark.postgresql, pytest.mark.django_db(transaction=True)]

MOVES = 16
RECORDED = {
    "report": LifecycleRecord.Action.EXPIRED,
    "revert": LifecycleRecord.Action.EXPIRED_REVERTED,
    "confirm": LifecycleRecord.Action.EXPIRED_CONFIRMED,
}


@pytest.fixture
def expired_moves():
    api = PlacementClient(version="latest")
    for name in ("cn1", "cn2", "cn3"):
        make_host(api, name, {"VCPU": 64, "MEMORY_MB": 65536, "DISK_GB": 1000})
    make_flavor(api, "m1.small", vcpus=1, ram=512, disk=1)
    for index in range(MOVES):
        server = boot_one(api, name=f"vm{index}")
        assert api.post(f"/api/servers/{server['id']}/migrate/", {}).status == 201
    Migration.objects.update(lease_started_at="2000-01-01T00:00:00Z")


def cleanups_at_once(count=2):
    barrier = threading.Barrier(count)
    results, errors = [], []

    def run():
        try:
            barrier.wait()
            results.append(migrations_cleanup())
        except Exception as exc:  # surfaced below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    return results


@pytest.mark.parametrize("action", ["report", "revert", "confirm"])
def test_concurrent_cleanups_count_each_expired_move_once(expired_moves, settings, action):
    settings.PLACEMENT_MIGRATION_EXPIRED_ACTION = action
    results = cleanups_at_once()
    handled = [entry for result in results for entry in result.expired]
    assert len(handled) == MOVES, handled
    assert len({migration for migration, _what in handled}) == MOVES
    assert LifecycleRecord.objects.filter(action=RECORDED[action]).count() == MOVES
    runs = LifecycleRecord.objects.filter(action=LifecycleRecord.Action.CLEANUP_RUN)
    total = sum(int(r.detail.split("; ")[1].split()[0]) for r in runs)
    assert total == MOVES
    # And a later run finds nothing more to report.
    assert migrations_cleanup().expired == []
