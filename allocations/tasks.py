"""Celery tasks of allocations: capacity and usage history for the dashboard's charts, and their
beat entry, which the site's schedule collects (placementsite/tasks.py)."""

from celery import shared_task

from providers.services.history import history_prune, usage_samples_record

from .selectors.usage import usage_by_provider_and_class

SAMPLE_TASK = "allocations.tasks.sample_usage"


@shared_task(name=SAMPLE_TASK)
def sample_usage():
    """Sample usage per provider and class, then drop history past its retention."""
    recorded = usage_samples_record(usage=usage_by_provider_and_class())
    history_prune()
    return recorded


# name -> task and how often (seconds) it runs.
BEAT_SCHEDULE = {
    # Usage per provider and class for the history charts, and pruning.
    "usage history": {"task": sample_usage.name, "every_seconds": 900},
}
