"""Celery tasks of providers: the periodic host sync (one call into the service)."""

from celery import shared_task

from .services.compute_nodes import compute_nodes_sync

SYNC_TASK = "providers.tasks.sync_compute_nodes"


@shared_task(name=SYNC_TASK)
def sync_compute_nodes():
    """Sync every host whose report changed; returns how many were synced."""
    return len(compute_nodes_sync())
