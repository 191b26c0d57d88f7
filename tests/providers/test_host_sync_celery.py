"""A real Celery worker with an embedded beat on Redis runs the host sync on its schedule."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from celery import Celery
from django.db import connection
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from placementsite.tasks import beat_schedule_sync
from providers.models import ComputeNode, Inventory
from providers.services.compute_nodes import compute_node_report
from providers.tasks import SYNC_TASK
from tests.providers.hosts import report
from tests.test_celery import test_database_url

# Redis database 5: this suite's own, apart from the heartbeat test's (15).
BROKER_URL = "redis://127.0.0.1:6379/5"
ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.postgresql, pytest.mark.redis]


@pytest.fixture
def worker_with_beat(transactional_db, tmp_path):
    beat_schedule_sync()
    # Only the host sync, every second (the others keep their entries but are paused).
    every_second, _ = IntervalSchedule.objects.get_or_create(
        every=1, period=IntervalSchedule.SECONDS
    )
    PeriodicTask.objects.exclude(task=SYNC_TASK).update(enabled=False)
    PeriodicTask.objects.filter(task=SYNC_TASK).update(interval=every_second, enabled=True)
    env = dict(
        os.environ,
        DATABASE_URL=test_database_url(),
        CELERY_BROKER_URL=BROKER_URL,
        CELERY_TASK_ALWAYS_EAGER="0",
        DJANGO_SETTINGS_MODULE="placementsite.settings",
        PLACEMENT_RESOURCE_PLUGINS="vcpu,memory,disk",
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
                f"hostsync-{os.getpid()}@%h",
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


def _wait_for(condition, log_path, seconds=90):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.5)
    pytest.fail("condition not met; worker log:\n" + log_path.read_text()[-4000:])


def test_beat_schedules_the_sync_and_the_worker_runs_it(worker_with_beat, settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = ["vcpu", "memory", "disk"]
    compute_node_report(hostname="beat-host", report=report(vcpus=12))

    def vcpu_total():
        row = Inventory.objects.filter(
            resource_provider__name="beat-host", resource_class__name="VCPU"
        ).first()
        return row.total if row else None

    _wait_for(lambda: vcpu_total() == 12, worker_with_beat)
    assert ComputeNode.objects.get().sync_status == "ok"

    # A later report is picked up by a later beat tick, with no one asking.
    compute_node_report(hostname="beat-host", report=report(vcpus=20))
    _wait_for(lambda: vcpu_total() == 20, worker_with_beat)
