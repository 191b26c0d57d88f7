"""Blocked, failed and partial hosts are retried with a growing delay; ``sync_inventory``'s
``--all`` and ``--force``; a report that changed asks for its host's sync at commit."""

import io
import uuid
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from placementsite.celery import app as celery_app
from providers.models import ComputeNode, Inventory
from providers.services.compute_nodes import compute_node_report
from providers.services.host_sync import compute_nodes_sync, retry_delay
from providers.tasks import SYNC_TASK, sync_compute_nodes
from tests.factories import delete_allocations, make_allocation, make_consumer
from tests.providers.hosts import report

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def host_settings(settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = ["vcpu", "memory", "disk"]
    settings.PLACEMENT_ALLOCATION_RATIOS = {"VCPU": 1.0, "MEMORY_MB": 1.0, "DISK_GB": 1.0}
    settings.PLACEMENT_SYNC_RETRY_SECONDS = 60
    settings.PLACEMENT_SYNC_RETRY_MAX_SECONDS = 600
    return settings


def _blocked_host(name="busy"):
    """A host of 4 VCPU with 4 allocated, then reporting 2: blocked."""
    compute_node_report(hostname=name, report=report(vcpus=4))
    compute_nodes_sync()
    node = ComputeNode.objects.get(hostname=name)
    make_allocation(node.provider, make_consumer(), {"VCPU": 4})
    compute_node_report(hostname=name, report=report(vcpus=2))
    return node


def test_the_retry_delay_is_the_next_run_then_doubles_to_the_cap():
    delays = [retry_delay(attempts=n).total_seconds() for n in range(1, 8)]
    assert delays == [0, 60, 120, 240, 480, 600, 600]


def test_a_blocked_host_is_retried_next_run_then_after_a_growing_delay():
    _blocked_host()
    start = timezone.now()

    assert [o.status for o in compute_nodes_sync(now=start)] == ["blocked"]
    node = ComputeNode.objects.get()
    assert (node.sync_attempts, node.next_sync_at) == (1, start)
    # The next run tries again...
    later = start + timedelta(seconds=30)
    assert [o.status for o in compute_nodes_sync(now=later)] == ["blocked"]
    node.refresh_from_db()
    assert node.next_sync_at == later + timedelta(seconds=60)
    # ...and then not before its delay is over.
    assert compute_nodes_sync(now=later + timedelta(seconds=59)) == []
    assert [o.status for o in compute_nodes_sync(now=later + timedelta(seconds=60))] == ["blocked"]
    node.refresh_from_db()
    assert node.sync_attempts == 3
    assert node.next_sync_at == later + timedelta(seconds=180)


def test_a_new_report_is_tried_at_once_and_success_resets_the_delay():
    _blocked_host()
    compute_nodes_sync()
    compute_nodes_sync()
    node = ComputeNode.objects.get()
    assert node.next_sync_at > timezone.now()

    compute_node_report(hostname="busy", report=report(vcpus=8))
    assert [o.status for o in compute_nodes_sync()] == ["ok"]
    node.refresh_from_db()
    assert (node.sync_status, node.sync_attempts, node.next_sync_at) == ("ok", 0, None)
    assert Inventory.objects.get(resource_class__name="VCPU").total == 8


def test_beat_retries_a_blocked_host_once_its_allocations_leave(settings):
    node = _blocked_host()
    assert sync_compute_nodes.apply().get() == 1
    delete_allocations(node.provider.allocations.all())  # the server went away
    assert sync_compute_nodes.apply().get() == 1  # the next run: retried
    node.refresh_from_db()
    assert node.sync_status == "ok"
    assert Inventory.objects.get(resource_class__name="VCPU").total == 2


# PostgreSQL refuses a name longer than its column; SQLite stores it, and nothing fails.
@pytest.mark.postgresql
def test_a_failed_host_is_retried_like_a_blocked_one(settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = ["vcpu", "tests.providers.plugin_fixtures:LongNamePlugin"]
    ComputeNode.objects.create(
        hostname="bad",
        stats={"child": "x" * 250},
        reported_at=timezone.now(),
        report_hash="stored-before-names-were-checked",
    )
    now = timezone.now()
    assert [o.status for o in compute_nodes_sync(now=now)] == ["failed"]
    assert [o.status for o in compute_nodes_sync(now=now)] == ["failed"]
    assert compute_nodes_sync(now=now) == []
    assert ComputeNode.objects.get().next_sync_at == now + timedelta(seconds=60)


def _command(*args):
    out = io.StringIO()
    call_command("sync_inventory", *args, stdout=out)
    return out.getvalue()


def test_sync_inventory_all_retries_blocked_hosts_without_waiting():
    _blocked_host()
    compute_nodes_sync()
    compute_nodes_sync()
    assert compute_nodes_sync() == []  # beat waits for the delay
    assert "busy: blocked" in _command("--all")


def test_sync_inventory_force_syncs_every_host_digest_or_not():
    compute_node_report(hostname="a", report=report())
    compute_node_report(hostname="b", report=report())
    assert "2 host(s) synced" in _command()
    assert "0 host(s) synced" in _command("--all")
    # An operator's hand-made change to a synced class is put right by a forced run.
    Inventory.objects.filter(resource_class__name="DISK_GB").delete()
    output = _command("--force")
    assert "a: ok, 1 change(s)" in output and "b: ok, 1 change(s)" in output
    assert Inventory.objects.filter(resource_class__name="DISK_GB").count() == 2


def test_sync_inventory_names_unknown_hosts_and_refuses_host_with_all():
    compute_node_report(hostname="a", report=report())
    with pytest.raises(Exception, match="'nope'"):
        _command("--host", "a", "--host", "nope")
    with pytest.raises(Exception, match="exclude"):
        _command("--host", "a", "--all")


# --- sync on report ---------------------------------------------------------------------------


@pytest.fixture
def eager_tasks(settings):
    """Reports ask for their sync, and the task runs in this process when asked."""
    settings.PLACEMENT_SYNC_ON_REPORT = True
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = False


def test_a_changed_report_syncs_its_host_at_commit(eager_tasks, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True) as asked:
        compute_node_report(hostname="quick", report=report(vcpus=6))
    assert len(asked) == 1
    node = ComputeNode.objects.get()
    assert node.sync_status == "ok"
    assert Inventory.objects.get(resource_class__name="VCPU").total == 6

    # The same report again asks for nothing.
    with django_capture_on_commit_callbacks(execute=True) as asked:
        compute_node_report(hostname="quick", report=report(vcpus=6))
    assert asked == []


def test_no_sync_is_asked_for_when_the_setting_is_off(settings, django_capture_on_commit_callbacks):
    settings.PLACEMENT_SYNC_ON_REPORT = False
    with django_capture_on_commit_callbacks() as asked:
        compute_node_report(hostname="quiet", report=report())
    assert asked == []


def test_the_sync_task_stays_in_the_beat_schedule():
    from django_celery_beat.models import PeriodicTask

    assert PeriodicTask.objects.filter(task=SYNC_TASK).exists()


def test_the_per_host_task_syncs_only_a_host_that_needs_it():
    from providers.tasks import sync_compute_node

    compute_node_report(hostname="one", report=report())
    assert sync_compute_node.apply(args=["one"]).get() == "ok"
    assert sync_compute_node.apply(args=["one"]).get() is None
    assert sync_compute_node.apply(args=[str(uuid.uuid4())]).get() is None


# PostgreSQL refuses a name longer than its column; SQLite stores it, and nothing fails.
@pytest.mark.postgresql
def test_a_failed_host_does_not_leave_the_run_believing_in_what_it_rolled_back(settings):
    # The first host creates a custom trait, then fails: its savepoint takes the trait away.
    # The next host of the same run names the trait too and must create it again, not assume.
    settings.PLACEMENT_RESOURCE_PLUGINS = [
        "vcpu",
        "tests.providers.plugin_fixtures:TraitedLongNamePlugin",
    ]
    ComputeNode.objects.create(
        hostname="a-first",
        vcpus=4,
        stats={"child": "x" * 250},
        reported_at=timezone.now(),
        report_hash="stored-before-names-were-checked",
    )
    compute_node_report(hostname="b-second", report=report())
    outcomes = {o.hostname: o.status for o in compute_nodes_sync()}
    assert outcomes == {"a-first": "failed", "b-second": "ok"}
    second = ComputeNode.objects.get(hostname="b-second").provider
    assert list(second.traits.values_list("name", flat=True)) == ["CUSTOM_SCRATCH_TRAIT"]
