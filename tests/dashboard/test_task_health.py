"""Task health after a deployment: "not yet due" until a task's first interval has passed
since beat started, "late" only after."""

from datetime import timedelta

import pytest
from django.utils import timezone
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from placementsite.models import ServiceProcess
from placementsite.selectors import DUE, LATE, NOT_YET_DUE, ON_TIME, TaskHealth

from .test_pages import row_of

pytestmark = pytest.mark.django_db

HOUR = timedelta(hours=1)
NOW = timezone.now()


def _task(last_run=None, every=HOUR, enabled=True):
    return TaskHealth(
        name="t", enabled=enabled, every=every, last_run=last_run, heartbeat_runs=None, hostname=""
    )


def test_a_task_that_never_ran_is_not_yet_due_within_its_first_interval():
    started = NOW - timedelta(minutes=10)
    assert _task().state(NOW, started) == NOT_YET_DUE


def test_a_task_that_never_ran_is_due_then_late_after_its_first_intervals():
    assert _task().state(NOW, NOW - HOUR - timedelta(minutes=1)) == DUE
    assert _task().state(NOW, NOW - 4 * HOUR) == LATE


def test_a_run_before_beat_restarted_does_not_make_the_task_late():
    # Deployed (beat restarted) 5 minutes ago; the last run was before, 5 hours ago.
    task = _task(last_run=NOW - 5 * HOUR)
    assert task.state(NOW, NOW - timedelta(minutes=5)) == NOT_YET_DUE
    assert task.state(NOW, NOW - 6 * HOUR) == LATE


def test_a_task_that_ran_since_beat_started_is_on_time_then_late():
    started = NOW - 10 * HOUR
    assert _task(last_run=NOW - HOUR).state(NOW, started) == ON_TIME
    assert _task(last_run=NOW - 4 * HOUR).state(NOW, started) == LATE


def test_without_any_beat_a_task_that_never_ran_is_late():
    assert _task().state(NOW, None) == LATE


def test_overview_says_not_yet_due_after_a_fresh_start(staff):
    every_hour = IntervalSchedule.objects.create(every=1, period=IntervalSchedule.HOURS)
    PeriodicTask.objects.create(name="hourly audit", task="x.audit", interval=every_hour)
    PeriodicTask.objects.create(
        name="old sync", task="x.sync", interval=every_hour, last_run_at=NOW - 5 * HOUR
    )
    ServiceProcess.objects.create(
        kind=ServiceProcess.Kind.BEAT,
        name="host:1",
        started_at=timezone.now() - timedelta(minutes=3),
        last_seen=timezone.now(),
    )
    r = staff.get("/dashboard/")
    for name in ("hourly audit", "old sync"):
        row = row_of(r, "tasks", name)
        assert "not yet due" in row and "late" not in row, row

    ServiceProcess.objects.update(started_at=timezone.now() - 5 * HOUR)
    r = staff.get("/dashboard/")
    assert "late: is the worker or beat running?" in row_of(r, "tasks", "hourly audit")
