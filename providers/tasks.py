"""Celery tasks of providers: the host sync, periodic and on report (each one call into the
service), and its beat entry, which the site's schedule collects (placementsite/tasks.py)."""

from celery import shared_task

from .services.host_sync import compute_nodes_sync
from .services.pool_sync import resource_pools_sync

SYNC_TASK = "providers.tasks.sync_compute_nodes"
SYNC_HOST_TASK = "providers.tasks.sync_compute_node"
SYNC_POOLS_TASK = "providers.tasks.sync_resource_pools"
SYNC_POOL_TASK = "providers.tasks.sync_resource_pool"


@shared_task(name=SYNC_TASK)
def sync_compute_nodes():
    """Sync every host that needs it (beat's backstop); returns how many were synced."""
    return len(compute_nodes_sync())


@shared_task(name=SYNC_HOST_TASK)
def sync_compute_node(hostname):
    """Sync one host whose report just changed, if it still needs it; returns its status."""
    outcomes = compute_nodes_sync(hostnames=[hostname])
    # A host that got its provider, or changed its disk_pool, joins or leaves pools.
    resource_pools_sync()
    return outcomes[0].status if outcomes else None


@shared_task(name=SYNC_POOLS_TASK)
def sync_resource_pools():
    """Sync every pool that needs it (beat's backstop); returns how many were synced."""
    return len(resource_pools_sync())


@shared_task(name=SYNC_POOL_TASK)
def sync_resource_pool(name):
    """Sync one pool whose report just changed, if it still needs it; returns its status."""
    outcomes = resource_pools_sync(names=[name])
    return outcomes[0].status if outcomes else None


# name -> task and how often (seconds) it runs.
BEAT_SCHEDULE = {
    # Hosts that need a sync (a report changed, a retry is due) -> their provider trees; a
    # changed report also asks for its host's sync at once (sync_compute_node).
    "compute host sync": {"task": sync_compute_nodes.name, "every_seconds": 60},
    # Pools whose report changed, whose retry is due or whose members changed.
    "resource pool sync": {"task": sync_resource_pools.name, "every_seconds": 60},
}
