"""Celery tasks of the service itself, and the beat schedule declared once.

``BEAT_SCHEDULE`` is the code's declaration of the periodic tasks. It is
written into django-celery-beat's tables after every ``migrate`` (see
``PlacementSiteConfig.ready``) only where an entry is missing, so operators
may change or disable an entry in the admin and keep their change.
"""

import logging
import socket

from celery import shared_task
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from .models import Heartbeat
from .observability.processes import task_runs_prune

HEARTBEAT_TASK = "placementsite.tasks.heartbeat"

logger = logging.getLogger("placement.tasks")

# name -> task and how often (seconds) it runs.
BEAT_SCHEDULE = {
    "placement heartbeat": {"task": HEARTBEAT_TASK, "every_seconds": 60},
    # scheduling/tasks.py: allocations left by finished moves, expired leases.
    "migration cleanup": {"task": "scheduling.tasks.cleanup_migrations", "every_seconds": 300},
    # scheduling/tasks.py: orphaned and missing allocations, reported (never deleted).
    "allocation audit": {"task": "scheduling.tasks.audit_allocations", "every_seconds": 3600},
    # providers/tasks.py: hosts whose report changed -> providers, inventories, traits.
    "compute host sync": {"task": "providers.tasks.sync_compute_nodes", "every_seconds": 60},
    # allocations/tasks.py: usage per provider and class for the history charts, and pruning.
    "usage history": {"task": "allocations.tasks.sample_usage", "every_seconds": 900},
}


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


@shared_task(name=HEARTBEAT_TASK)
def heartbeat():
    """Periodic proof of life: when did the worker and beat last run. Also forgets the task
    runs older than the history is kept."""
    runs = heartbeat_record(name="heartbeat", hostname=socket.gethostname()).runs
    logger.info("heartbeat recorded (run %s)", runs)
    task_runs_prune(keep_days=settings.PLACEMENT_HISTORY_RETENTION_DAYS)
    return runs
