"""Which Celery workers and beats are alive, and which task runs were lost.

Workers and beats record themselves (``ServiceProcess``) when they start and while they run;
every task run is recorded when it starts and when it ends (``TaskRun``). A worker killed
whole (SIGKILL, the machine lost) cannot say that its running task ended: when a worker of
the same node name starts again, the runs it left ``started`` are marked ``lost``, logged as
errors and counted as failures, so that a lost run is visible instead of silently gone.

Each function is one short write; a database error is logged and swallowed by the Celery
hooks that call them (bookkeeping must never fail a task).
"""

import logging
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from placementsite.models import ServiceProcess, TaskRun

logger = logging.getLogger("placement.tasks")

# Celery's states at task_postrun -> ours.
STATES = {
    "SUCCESS": TaskRun.State.SUCCEEDED,
    "FAILURE": TaskRun.State.FAILED,
    "RETRY": TaskRun.State.RETRIED,
}


def process_seen(*, kind: str, name: str, started: bool = False, now=None) -> None:
    """``name`` (a worker's node name, a beat's host:pid) is alive now; ``started``: it has
    just started."""
    now = now or timezone.now()
    defaults = {"last_seen": now, **({"started_at": now} if started else {})}
    ServiceProcess.objects.update_or_create(
        kind=kind, name=name, defaults=defaults, create_defaults={**defaults, "started_at": now}
    )


def process_gone(*, kind: str, name: str) -> None:
    """``name`` stopped on purpose (a warm shutdown): it is not expected to answer."""
    ServiceProcess.objects.filter(kind=kind, name=name).delete()


def task_run_started(*, task_id: str, task: str, worker: str, now=None) -> None:
    TaskRun.objects.update_or_create(
        task_id=task_id,
        defaults={
            "task": task,
            "worker": worker,
            "state": TaskRun.State.STARTED,
            "started_at": now or timezone.now(),
            "finished_at": None,
        },
    )


def task_run_finished(*, task_id: str, state: str, detail: str = "", now=None) -> None:
    TaskRun.objects.filter(task_id=task_id).update(
        state=STATES.get(state, TaskRun.State.FAILED),
        finished_at=now or timezone.now(),
        detail=detail[:2000],
    )


def task_runs_lost(*, worker: str, now=None) -> list:
    """Mark the runs ``worker`` left started as lost (it has just started again, so none of
    them is running); returns them."""
    now = now or timezone.now()
    with transaction.atomic():
        runs = list(
            TaskRun.objects.select_for_update().filter(worker=worker, state=TaskRun.State.STARTED)
        )
        TaskRun.objects.filter(pk__in=[r.pk for r in runs]).update(
            state=TaskRun.State.LOST,
            finished_at=now,
            detail="the worker stopped during the run (killed?): it never finished",
        )
    return runs


def task_runs_prune(*, keep_days: int, now=None) -> int:
    """Forget runs older than ``keep_days``."""
    cutoff = (now or timezone.now()) - timedelta(days=keep_days)
    deleted, _ = TaskRun.objects.filter(started_at__lt=cutoff).delete()
    return deleted
