"""Celery tasks of the scheduler: the migration cleanup and the allocation audit (report only).
Their beat entries are declared here (``BEAT_SCHEDULE``); the site's schedule collects them
(placementsite/tasks.py)."""

from celery import shared_task

from providers.selectors.compute_nodes import host_by_name

from .services.audit import placement_audit
from .services.cleanup import migrations_cleanup
from .services.drain import host_drain

CLEANUP_TASK = "scheduling.tasks.cleanup_migrations"
AUDIT_TASK = "scheduling.tasks.audit_allocations"
DRAIN_TASK = "scheduling.tasks.drain_host"


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


@shared_task(name=DRAIN_TASK)
def drain_host(hostname, reason=""):
    """Move every server off ``hostname`` (disabled with ``reason``), as the dashboard asks;
    the outcome goes to the lifecycle history. Run again, it moves what is still there."""
    node = host_by_name(hostname=hostname)
    if node is None:
        return {"host": hostname, "found": False}
    result = host_drain(node=node, reason=reason, origin="task")
    return {"host": hostname, "moved": result.moved, "failed": result.failed}


# name -> task and how often (seconds) it runs.
BEAT_SCHEDULE = {
    # Allocations left by finished moves, expired leases.
    "migration cleanup": {"task": cleanup_migrations.name, "every_seconds": 300},
    # Orphaned and missing allocations, reported (never deleted).
    "allocation audit": {"task": audit_allocations.name, "every_seconds": 3600},
}
