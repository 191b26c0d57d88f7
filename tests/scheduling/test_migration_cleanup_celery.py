"""A real Celery worker with its embedded beat runs the migration cleanup on the schedule
declared in code (placementsite.tasks.BEAT_SCHEDULE), against the test database."""

import pytest
from django_celery_beat.models import PeriodicTask

from allocations.models import Allocation
from placementsite.tasks import BEAT_SCHEDULE
from scheduling.management.commands.bench_migration_cleanup import seed_finished_migrations
from scheduling.models import LifecycleRecord, Migration
from scheduling.tasks import CLEANUP_TASK

pytestmark = [pytest.mark.postgresql, pytest.mark.redis]


def test_the_cleanup_is_in_the_beat_schedule(db):
    (name,) = [n for n, entry in BEAT_SCHEDULE.items() if entry["task"] == CLEANUP_TASK]
    assert PeriodicTask.objects.get(name=name).enabled


def test_beat_runs_the_cleanup_and_the_worker_frees_leftovers(celery_worker):
    worker = celery_worker(beat_task=CLEANUP_TASK)
    seed_finished_migrations(20, hosts=2)
    worker.wait_for(lambda: not Migration.objects.filter(cleaned_at=None).exists())
    assert not Allocation.objects.exists()
    freed = LifecycleRecord.objects.filter(action="freed")
    assert freed.count() == 20
    assert set(freed.values_list("origin", flat=True)) == {"task"}
    assert LifecycleRecord.objects.filter(action="cleanup_run", origin="task").exists()
