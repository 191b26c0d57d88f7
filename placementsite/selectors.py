"""Reads about the service itself: are the Celery worker and beat alive, when did tasks run."""

from dataclasses import dataclass
from datetime import timedelta

from django_celery_beat.models import PeriodicTask

from .models import Heartbeat, ServiceProcess, TaskRun

# A periodic task is late after this many of its periods without a run.
LATE_AFTER_PERIODS = 3


DISABLED, NOT_YET_DUE, DUE, ON_TIME, LATE = "disabled", "not yet due", "due", "on time", "late"


@dataclass(frozen=True)
class TaskHealth:
    name: str
    enabled: bool
    every: timedelta | None  # its interval, when it runs on one
    last_run: object  # datetime or None
    heartbeat_runs: int | None  # for tasks that record a heartbeat
    hostname: str

    def late(self, now, beat_started=None):
        return self.state(now, beat_started) == LATE

    def state(self, now, beat_started=None):
        """DISABLED, NOT_YET_DUE, DUE, ON_TIME or LATE at ``now``, beat having started at
        ``beat_started`` (None: no beat was ever seen).

        A run before beat started counts as none: after a deployment a task is not yet due
        until its first interval has passed since beat started, due (its first run pending)
        for LATE_AFTER_PERIODS periods, and late only after.
        """
        if not self.enabled:
            return DISABLED
        ran = self.last_run
        if beat_started is not None and (ran is None or ran < beat_started):
            if self.every is None or now - beat_started < self.every:
                return NOT_YET_DUE
            if now - beat_started <= self.every * LATE_AFTER_PERIODS:
                return DUE
            return LATE
        if ran is None:
            return LATE  # no beat ever seen and never run: nothing sends it
        if self.every is not None and now - ran > self.every * LATE_AFTER_PERIODS:
            return LATE
        return ON_TIME


def task_health():
    """Every periodic task of the beat schedule with its last run (two queries).

    A task's heartbeat (written by the worker when it ran the task) wins over beat's own
    ``last_run_at`` (written when beat sent it): a heartbeat proves the worker ran it.
    """
    beats = {h.name: h for h in Heartbeat.objects.all()}
    found = []
    for task in PeriodicTask.objects.select_related("interval").order_by("name"):
        if task.name.startswith("celery."):  # celery's own housekeeping
            continue
        interval = task.interval
        every = None
        if interval is not None:
            every = timedelta(**{interval.period: interval.every})
        # placementsite.tasks.heartbeat records its runs as "heartbeat": by the task's name.
        beat = beats.get(task.task.rsplit(".", 1)[-1]) or beats.get(task.name)
        last_run = beat.last_run if beat is not None else task.last_run_at
        found.append(
            TaskHealth(
                name=task.name,
                enabled=task.enabled,
                every=every,
                last_run=last_run,
                heartbeat_runs=beat.runs if beat is not None else None,
                hostname=beat.hostname if beat is not None else "",
            )
        )
    return found


def beat_started_at():
    """When the beat seen last started; None when no beat was ever seen."""
    beat = last_process_seen(kind=ServiceProcess.Kind.BEAT)
    return beat.started_at if beat is not None else None


def processes_seen(*, kind, since):
    """The workers or beats (``kind``) seen alive since ``since``, by name."""
    return list(ServiceProcess.objects.filter(kind=kind, last_seen__gte=since).order_by("name"))


def last_process_seen(*, kind):
    """The worker or beat seen last, however long ago; None when none ever was."""
    return ServiceProcess.objects.filter(kind=kind).order_by("-last_seen").first()


def lost_task_runs(*, since):
    """Task runs lost since ``since`` (their worker was killed during the run), newest first."""
    return list(TaskRun.objects.filter(state=TaskRun.State.LOST, finished_at__gte=since))
