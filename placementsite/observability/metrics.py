"""The service's own Prometheus series, beside django-prometheus's request and database ones.

- capacity, usage and free units per resource class: read from the database at scrape time
  (every API server answers the same), by the dashboard's selector, which asks the capacity
  model;
- allocation candidates: a latency histogram and the number of candidates returned;
- allocation write conflicts by error code (409s of the writes that check generations);
- Celery task runs, durations and failures, from Celery's signals.

With several worker processes (gunicorn, Celery prefork) set ``PROMETHEUS_MULTIPROC_DIR`` to a
directory shared by the processes of one host: counters and histograms are then summed over
them (prometheus_client's multiprocess mode).
"""

import os
import time

from django.db import DatabaseError
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest, multiprocess
from prometheus_client.core import REGISTRY, GaugeMetricFamily

CANDIDATES_LATENCY = Histogram(
    "placement_allocation_candidates_seconds",
    "Time to answer GET /allocation_candidates",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
CANDIDATES_RETURNED = Histogram(
    "placement_allocation_candidates_returned",
    "Allocation requests returned by one GET /allocation_candidates",
    buckets=(0, 1, 5, 10, 50, 100, 500, 1000, 5000, 10000),
)
ALLOCATION_CONFLICTS = Counter(
    "placement_allocation_write_conflicts",
    "Allocation writes refused with 409 Conflict, by Placement error code; the client retries "
    "placement.concurrent_update with fresh generations",
    ["code"],
)
TASK_RUNS = Counter("placement_celery_task_runs", "Celery task runs finished", ["task", "state"])
TASK_FAILURES = Counter("placement_celery_task_failures", "Celery task runs failed", ["task"])
TASK_DURATION = Histogram(
    "placement_celery_task_seconds",
    "Celery task run time",
    ["task"],
    buckets=(0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900),
)

# Paths whose 409s are allocation write conflicts.
ALLOCATION_WRITE_PATHS = ("/allocations", "/reshaper")


class ResourceClassCollector:
    """placement_resource_{capacity,used,free,total,reserved} per resource class at scrape."""

    def describe(self):
        # Names only: registering must not query the database (or import models too early).
        return list(self._families().values())

    def collect(self):
        from allocations.selectors.usage import class_usage_summary

        families = self._families()
        try:
            rows = class_usage_summary()
        except DatabaseError:
            rows = []  # the scrape still answers; /healthcheck says the database is down
        for row in rows:
            labels = [row.resource_class]
            families["capacity"].add_metric(labels, row.capacity)
            families["used"].add_metric(labels, row.used)
            families["free"].add_metric(labels, row.free)
            families["total"].add_metric(labels, row.total)
            families["inventories"].add_metric(labels, row.inventories)
        yield from families.values()

    @staticmethod
    def _families():
        return {
            "capacity": GaugeMetricFamily(
                "placement_resource_capacity",
                "Usable units per resource class: (total - reserved) * allocation_ratio, summed",
                labels=["resource_class"],
            ),
            "used": GaugeMetricFamily(
                "placement_resource_used",
                "Allocated units per resource class",
                labels=["resource_class"],
            ),
            "free": GaugeMetricFamily(
                "placement_resource_free",
                "Capacity less usage per resource class (negative when over-allocated)",
                labels=["resource_class"],
            ),
            "total": GaugeMetricFamily(
                "placement_resource_total",
                "Inventory totals per resource class, before reserved and allocation ratio",
                labels=["resource_class"],
            ),
            "inventories": GaugeMetricFamily(
                "placement_resource_inventories",
                "Inventories (providers) of each resource class",
                labels=["resource_class"],
            ),
        }


_collector = ResourceClassCollector()
REGISTRY.register(_collector)


def exposition():
    """The text exposition of every series of this process (or of all of them, multiprocess)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        registry.register(_collector)
    else:
        registry = REGISTRY
    return generate_latest(registry)


def observe_candidates(seconds, returned):
    CANDIDATES_LATENCY.observe(seconds)
    CANDIDATES_RETURNED.observe(returned)


def count_allocation_conflict(path, status, code):
    if status == 409 and path.startswith(ALLOCATION_WRITE_PATHS):
        ALLOCATION_CONFLICTS.labels(code=code or "placement.undefined_code").inc()


# --- Celery ---------------------------------------------------------------------------------

_task_started = {}


def task_started(task_id=None, **_kwargs):
    _task_started[task_id] = time.monotonic()


def task_finished(task_id=None, task=None, state=None, **_kwargs):
    started = _task_started.pop(task_id, None)
    name = getattr(task, "name", "unknown")
    if started is not None:
        TASK_DURATION.labels(task=name).observe(time.monotonic() - started)
    TASK_RUNS.labels(task=name, state=state or "UNKNOWN").inc()


def task_failed(sender=None, **_kwargs):
    TASK_FAILURES.labels(task=getattr(sender, "name", "unknown")).inc()


def count_lost_task(task_name):
    """A run whose worker was killed: a failure, and a run in state LOST."""
    TASK_FAILURES.labels(task=task_name).inc()
    TASK_RUNS.labels(task=task_name, state="LOST").inc()


def connect_celery_signals():
    from celery import signals

    signals.task_prerun.connect(task_started, weak=False, dispatch_uid="placement_metrics_pre")
    signals.task_postrun.connect(task_finished, weak=False, dispatch_uid="placement_metrics_post")
    signals.task_failure.connect(task_failed, weak=False, dispatch_uid="placement_metrics_fail")
