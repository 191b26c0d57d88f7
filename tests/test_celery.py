"""Celery: the heartbeat task run by a real worker, and the beat schedule in the DB."""

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from celery import Celery
from django.db import connection
from django_celery_beat.models import PeriodicTask

from placementsite.models import Heartbeat
from placementsite.tasks import BEAT_SCHEDULE, HEARTBEAT_TASK, beat_schedule_sync

TEST_BROKER_URL = "redis://127.0.0.1:6379/15"
PROJECT_DIR = Path(__file__).resolve().parent.parent


def test_database_url():
    """The URL of the test database, for a process outside this one."""
    db = connection.settings_dict
    if connection.vendor != "postgresql":
        pytest.fail("the Celery worker test needs PostgreSQL (set DATABASE_URL)")
    user = db["USER"] or "postgres"
    password = f":{db['PASSWORD']}" if db["PASSWORD"] else ""
    host = db["HOST"] or "127.0.0.1"
    port = db["PORT"] or 5432
    return f"postgres://{user}{password}@{host}:{port}/{db['NAME']}"


test_database_url.__test__ = False  # a helper, not a test


@pytest.fixture
def celery_worker_queue(transactional_db, tmp_path):
    """A real ``celery worker`` on the test database, consuming a queue of its own."""
    queue = f"test-heartbeat-{uuid.uuid4().hex[:8]}"
    env = dict(
        os.environ,
        DATABASE_URL=test_database_url(),
        CELERY_BROKER_URL=TEST_BROKER_URL,
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
                "--pool",
                "solo",
                "--queues",
                queue,
                "--hostname",
                f"{queue}@%h",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                "--loglevel",
                "INFO",
            ],
            cwd=PROJECT_DIR,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        yield queue, log_path
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=15)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait(timeout=5)
        _purge(queue)
        connection.close()  # the flush after this test must not wait on our session


def _purge(queue):
    # An explicit URL: Celery prefers a CELERY_BROKER_URL environment variable to broker=.
    with Celery("test-purge").connection_for_write(TEST_BROKER_URL) as conn:
        conn.default_channel.queue_delete(queue)


@pytest.mark.postgresql
@pytest.mark.redis
def test_worker_runs_heartbeat_and_records_it(celery_worker_queue):
    queue, log_path = celery_worker_queue
    sender = Celery("test-sender")
    with sender.connection_for_write(TEST_BROKER_URL) as conn:
        sender.send_task(HEARTBEAT_TASK, queue=queue, connection=conn)

    deadline = time.monotonic() + 60
    heartbeat = None
    while time.monotonic() < deadline:
        heartbeat = Heartbeat.objects.filter(name="heartbeat").first()
        if heartbeat is not None:
            break
        time.sleep(0.5)
    assert heartbeat is not None, "no heartbeat recorded; worker log:\n" + log_path.read_text()
    assert heartbeat.runs == 1
    assert heartbeat.hostname


def test_beat_schedule_is_in_the_database(db):
    for name, entry in BEAT_SCHEDULE.items():
        task = PeriodicTask.objects.select_related("interval").get(name=name)
        assert task.task == entry["task"]
        assert task.enabled
        assert task.interval.every == entry["every_seconds"]


def test_beat_schedule_sync_keeps_operator_changes(db):
    name = next(iter(BEAT_SCHEDULE))
    PeriodicTask.objects.filter(name=name).update(enabled=False)
    assert beat_schedule_sync() == []
    assert PeriodicTask.objects.get(name=name).enabled is False


def test_beat_schedule_sync_recreates_a_deleted_entry(db):
    PeriodicTask.objects.all().delete()
    assert beat_schedule_sync() == list(BEAT_SCHEDULE)
    assert PeriodicTask.objects.filter(name__in=list(BEAT_SCHEDULE)).count() == len(BEAT_SCHEDULE)


def test_heartbeat_task_counts_runs(db):
    from placementsite.tasks import heartbeat

    heartbeat.apply()
    heartbeat.apply()
    assert Heartbeat.objects.get(name="heartbeat").runs == 2
