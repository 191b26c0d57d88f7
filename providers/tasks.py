"""Celery tasks of providers: the host sync, periodic and on report (each one call into the
service)."""

from celery import shared_task

from .services.host_sync import compute_nodes_sync

SYNC_TASK = "providers.tasks.sync_compute_nodes"
SYNC_HOST_TASK = "providers.tasks.sync_compute_node"


@shared_task(name=SYNC_TASK)
def sync_compute_nodes():
    """Sync every host that needs it (beat's backstop); returns how many were synced."""
    return len(compute_nodes_sync())


@shared_task(name=SYNC_HOST_TASK)
def sync_compute_node(hostname):
    """Sync one host whose report just changed, if it still needs it; returns its status."""
    outcomes = compute_nodes_sync(hostnames=[hostname])
    return outcomes[0].status if outcomes else None
