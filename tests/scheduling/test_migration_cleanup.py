"""The migration cleanup: leftovers of finished moves, expired leases, the command."""

import io
from datetime import timedelta

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.utils import timezone

from scheduling.models import LifecycleRecord, Migration
from scheduling.services.cleanup import migrations_cleanup
from tests.scheduling.move_helpers import boot_one, resources_of, setup_hosts, used

SMALL = {"VCPU": 2, "MEMORY_MB": 1024, "DISK_GB": 10}


@pytest.fixture
def moving(api):
    """A server in the middle of a migrate: (server, migration json, source, dest)."""
    hosts = setup_hosts(api)
    server = boot_one(api)
    response = api.post(f"/api/servers/{server['id']}/migrate/", {})
    assert response.status == 201, response
    migration = response.json["migration"]
    (dest,) = set(hosts.values()) - {server["host_uuid"]}
    return server, migration, server["host_uuid"], dest


def _command(*args):
    out = io.StringIO()
    call_command("cleanup_migrations", *args, stdout=out)
    return out.getvalue()


def _records(action):
    return list(LifecycleRecord.objects.filter(action=action))


def test_allocations_left_by_a_finished_migration_are_freed_and_recorded(api, moving):
    _server, migration, source, dest = moving
    # A move marked failed by a worker that died before freeing the source.
    Migration.objects.filter(uuid=migration["id"]).update(status="error")
    assert used(api, source) == 2

    dry = _command("--dry-run")
    assert "would free 3 allocations of 1" in dry
    assert used(api, source) == 2
    assert not LifecycleRecord.objects.exists()

    out = _command()
    assert "freed 3 allocations of 1" in out
    assert used(api, source) == 0 and used(api, dest) == 2
    assert resources_of(api, migration["id"]) == {}
    (freed,) = _records("freed")
    assert str(freed.consumer_uuid) == migration["id"]
    assert freed.allocations == {source: SMALL}
    assert freed.migration.uuid.hex == migration["id"].replace("-", "")
    assert Migration.objects.get(uuid=migration["id"]).cleaned_at is not None
    assert len(_records("cleanup_run")) == 1

    # Checked once: the next run has nothing to look at and records nothing.
    assert "Checked 0 finished migrations" in _command()
    assert len(_records("cleanup_run")) == 1


def test_settled_migrations_are_checked_and_marked_clean(api, moving):
    _server, migration, source, dest = moving
    api.post(f"/api/migrations/{migration['id']}/confirm/", {})
    result = migrations_cleanup()
    assert (result.checked, result.freed_migrations) == (1, 0)
    assert Migration.objects.get(uuid=migration["id"]).cleaned_at is not None
    assert (used(api, source), used(api, dest)) == (0, 2)


def test_an_expired_move_is_reported_once_by_default(api, moving):
    _server, migration, source, dest = moving
    Migration.objects.update(lease_started_at="2000-01-01T00:00:00Z")
    out = _command()
    assert f"Expired migration {migration['id']}: report" in out
    (record,) = _records("expired")
    assert str(record.consumer_uuid) == migration["id"]
    assert Migration.objects.get().status == "migrating"
    assert (used(api, source), used(api, dest)) == (2, 2)
    assert "Expired" not in _command()
    assert len(_records("expired")) == 1


@pytest.mark.parametrize(
    ("action", "status", "usage"),
    [("revert", "reverted", (2, 0)), ("confirm", "confirmed", (0, 2))],
)
def test_an_expired_move_is_settled_on_request(api, moving, settings, action, status, usage):
    server, migration, source, dest = moving
    settings.PLACEMENT_MIGRATION_EXPIRED_ACTION = action
    Migration.objects.update(lease_started_at="2000-01-01T00:00:00Z")
    result = migrations_cleanup()
    assert result.expired == [(Migration.objects.get().uuid, action)]
    assert Migration.objects.get().status == status
    assert (used(api, source), used(api, dest)) == usage
    assert resources_of(api, migration["id"]) == {}
    (record,) = _records(f"expired_{status}")
    assert record.allocations == {source: SMALL}


def test_a_move_whose_server_was_deleted_is_freed(api, moving):
    server, migration, source, dest = moving
    assert api.delete(f"/api/servers/{server['id']}/").status == 204
    assert (used(api, source), used(api, dest)) == (2, 0)
    migrations_cleanup()
    assert Migration.objects.get().status == "error"
    assert (used(api, source), used(api, dest)) == (0, 0)
    assert resources_of(api, migration["id"]) == {}


def test_a_bad_expired_action_is_refused(db, settings):
    settings.PLACEMENT_MIGRATION_EXPIRED_ACTION = "delete"
    with pytest.raises(ImproperlyConfigured, match="report, revert, confirm"):
        migrations_cleanup()


def test_old_history_is_pruned(db, settings):
    old = LifecycleRecord.objects.create(
        run="00000000-0000-4000-8000-000000000001", action="audit_run"
    )
    LifecycleRecord.objects.filter(pk=old.pk).update(
        created_at=timezone.now() - timedelta(days=settings.PLACEMENT_HISTORY_RETENTION_DAYS + 1)
    )
    assert migrations_cleanup().pruned_records == 1
    assert not LifecycleRecord.objects.filter(pk=old.pk).exists()
