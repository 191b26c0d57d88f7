"""Celery tasks of providers: the periodic host sync (one call into the service), and its beat
entry, which the site's schedule collects (placementsite/tasks.py)."""

from celery import shared_task

from .services.compute_nodes import compute_nodes_sync

SYNC_TASK = "providers.tasks.sync_compute_nodes"


@shared_task(name=SYNC_TASK)
def sync_compute_nodes():
    """Sync every host whose report changed; returns how many were synced."""
    return len(compute_nodes_sync())


# name -> task and how often (seconds) it runs.
BEAT_SCHEDULE = {
    # Hosts whose report changed -> providers, inventories, traits.
    "compute host sync": {"task": sync_compute_nodes.name, "every_seconds": 60},
}
