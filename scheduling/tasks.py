"""Celery tasks of the scheduler: the migration cleanup and the allocation audit (report only).
Their beat entries are declared here (``BEAT_SCHEDULE``); the site's schedule collects them
(placementsite/tasks.py)."""

from celery import shared_task

from .services.audit import placement_audit
from .services.cleanup import migrations_cleanup

CLEANUP_TASK = "scheduling.tasks.cleanup_migrations"
AUDIT_TASK = "scheduling.tasks.audit_allocations"


@shared_task(name=CLEANUP_TASK)
def cleanup_migrations():
    result = migrations_cleanup(origin="task")
    return {
        "checked": result.checked,
        "freed_migrations": result.freed_migrations,
        "freed_allocations": result.freed_allocations,
        "expired": len(result.expired),
    }


@shared_task(name=AUDIT_TASK)
def audit_allocations():
    result = placement_audit(origin="task")
    return {"findings": len(result.findings)}


# name -> task and how often (seconds) it runs.
BEAT_SCHEDULE = {
    # Allocations left by finished moves, expired leases.
    "migration cleanup": {"task": cleanup_migrations.name, "every_seconds": 300},
    # Orphaned and missing allocations, reported (never deleted).
    "allocation audit": {"task": audit_allocations.name, "every_seconds": 3600},
}
