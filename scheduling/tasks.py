"""Celery tasks of the scheduler: the migration cleanup and the allocation audit (report only).
Their beat entries are declared in placementsite.tasks.BEAT_SCHEDULE."""

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
