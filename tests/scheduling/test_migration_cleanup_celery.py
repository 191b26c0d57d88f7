"""A real Celery worker with its embedded beat runs the migration cleanup on the schedule
declared in code (placementsite.tasks.BEAT_SCHEDULE), against the test database."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from celery import Celery
from django.db import connection
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from allocations.models import Allocation
from placementsite.tasks import BEAT_SCHEDULE, beat_schedule_sync
from scheduling.management.commands.bench_migration_cleanup import seed_finished_migrations
from scheduling.models import LifecycleRecord, Migration
from scheduling.tasks import CLEANUP_TASK
from tests.test_celery import test_database_url

# Redis database 8: the moves suite's own.
BROKER_URL = "redis://127.0.0.1:6379/8"
ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.postgresql, pytest.mark.redis]


def test_the_cleanup_is_in_the_beat_schedule(db):
    (name,) = [n for n, entry in BEAT_SCHEDULE.items() if entry["task"] == CLEANUP_TASK]
    assert PeriodicTask.objects.get(name=name).enabled


@pytest.fixture
def worker_with_beat(transactional_db, tmp_path):
    beat_schedule_sync()
    # The cleanup every second; the other entries stay declared but paused.
    every_second, _ = IntervalSchedule.objects.get_or_create(
        every=1, period=IntervalSchedule.SECONDS
    )
    PeriodicTask.objects.exclude(task=CLEANUP_TASK).update(enabled=False)
    PeriodicTask.objects.filter(task=CLEANUP_TASK).update(interval=every_second, enabled=True)
    env = dict(
        os.environ,
        DATABASE_URL=test_database_url(),
        CELERY_BROKER_URL=BROKER_URL,
        CELERY_TASK_ALWAYS_EAGER="0",
        DJANGO_SETTINGS_MODULE="placementsite.settings",
    )
    log_path = tmp_path / "worker.log"
    with open(log_path, "w") as log:
        worker = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "placementsite",
                "worker",
                "--beat",
                "--schedule",
                str(tmp_path / "beat-schedule"),
                "--pool",
                "solo",
                "--hostname",
                f"moves-{os.getpid()}@%h",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "--loglevel",
                "INFO",
            ],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        yield log_path
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=15)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait(timeout=5)
        with Celery("purge").connection_for_write(BROKER_URL) as conn:
            conn.default_channel.queue_delete("celery")
        connection.close()


def test_beat_runs_the_cleanup_and_the_worker_frees_leftovers(worker_with_beat):
    seed_finished_migrations(20, hosts=2)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if not Migration.objects.filter(cleaned_at=None).exists():
            break
        time.sleep(0.5)
    else:
        pytest.fail("no cleanup ran; worker log:\n" + worker_with_beat.read_text()[-4000:])
    assert not Allocation.objects.exists()
    freed = LifecycleRecord.objects.filter(action="freed")
    assert freed.count() == 20
    assert set(freed.values_list("origin", flat=True)) == {"task"}
    assert LifecycleRecord.objects.filter(action="cleanup_run", origin="task").exists()
