"""Celery tasks of the service itself, and the beat schedule collected once.

Each app declares its beat entries next to its tasks (``<app>/tasks.py``, ``BEAT_SCHEDULE``,
naming the task objects); ``BEAT_SCHEDULE`` here is the site's heartbeat plus every app's. It
is written into django-celery-beat's tables after every ``migrate`` (see
``PlacementSiteConfig.ready``) only where an entry is missing, so operators may change or
disable an entry in the admin and keep their change.
"""

import logging
import socket

from celery import shared_task
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from allocations import tasks as allocations_tasks
from providers import tasks as providers_tasks
from scheduling import tasks as scheduling_tasks

from .models import Heartbeat
from .observability.processes import task_runs_prune

HEARTBEAT_TASK = "placementsite.tasks.heartbeat"

logger = logging.getLogger("placement.tasks")


def heartbeat_record(*, name, hostname=""):
    """Record one run of ``name`` now; returns the Heartbeat row."""
    now = timezone.now()
    with transaction.atomic():
        heartbeat, created = Heartbeat.objects.select_for_update().get_or_create(
            name=name, defaults={"last_run": now, "runs": 1, "hostname": hostname}
        )
        if not created:
            Heartbeat.objects.filter(pk=heartbeat.pk).update(
                last_run=now, runs=F("runs") + 1, hostname=hostname
            )
            heartbeat.refresh_from_db()
    return heartbeat


@shared_task(name=HEARTBEAT_TASK)
def heartbeat():
    """Periodic proof of life: when did the worker and beat last run. Also forgets the task
    runs older than the history is kept."""
    runs = heartbeat_record(name="heartbeat", hostname=socket.gethostname()).runs
    logger.info("heartbeat recorded (run %s)", runs)
    task_runs_prune(keep_days=settings.PLACEMENT_HISTORY_RETENTION_DAYS)
    return runs


def beat_schedule_collect(*schedules):
    """One schedule of the given ones (name -> entry), refusing a name declared twice."""
    collected = {}
    for schedule in schedules:
        for name, entry in schedule.items():
            if name in collected:
                raise ImproperlyConfigured(f"beat entry {name!r} is declared twice")
            collected[name] = entry
    return collected


# name -> task and how often (seconds) it runs: the site's heartbeat, then what the apps declare.
BEAT_SCHEDULE = beat_schedule_collect(
    {"placement heartbeat": {"task": heartbeat.name, "every_seconds": 60}},
    scheduling_tasks.BEAT_SCHEDULE,
    providers_tasks.BEAT_SCHEDULE,
    allocations_tasks.BEAT_SCHEDULE,
)


def beat_schedule_sync(*, schedule=None, using="default"):
    """Create the PeriodicTask rows of ``schedule`` that do not exist yet.

    Returns the names created. Existing rows are left as operators set them.
    """
    from django_celery_beat.models import IntervalSchedule, PeriodicTask

    created = []
    with transaction.atomic(using=using):
        for name, entry in (schedule or BEAT_SCHEDULE).items():
            if PeriodicTask.objects.using(using).filter(name=name).exists():
                continue
            interval, _ = IntervalSchedule.objects.using(using).get_or_create(
                every=entry["every_seconds"], period=IntervalSchedule.SECONDS
            )
            PeriodicTask.objects.using(using).create(
                name=name, task=entry["task"], interval=interval
            )
            created.append(name)
    return created


def sync_beat_schedule_after_migrate(sender, using="default", **kwargs):
    """post_migrate receiver: declare the schedule once beat's tables exist."""
    from django.db import connections
    from django_celery_beat.models import PeriodicTask

    if PeriodicTask._meta.db_table in connections[using].introspection.table_names():
        beat_schedule_sync(using=using)
