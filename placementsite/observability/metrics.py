"""``/metrics``: the service's own Prometheus series, beside django-prometheus's request and
database ones. The site collects what each part contributes:

- capacity, usage and free units per resource class: ``allocations/metrics.py``'s collector,
  read from the database at scrape time;
- allocation candidates, a latency histogram and the number of candidates returned:
  ``scheduling/metrics.py``;
- allocation write conflicts by error code (409s of the writes that check generations):
  ``placementsite/core/api/metrics.py``, counted where every Placement error is answered;
- Celery task runs, durations and failures, from Celery's signals: here.

With several worker processes (gunicorn, Celery prefork) set ``PROMETHEUS_MULTIPROC_DIR`` to a
directory shared by the processes of one host: counters and histograms are then summed over
them (prometheus_client's multiprocess mode).
"""

import os
import time

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest, multiprocess
from prometheus_client.core import REGISTRY

from allocations import metrics as allocations_metrics
from placementsite.core.api import metrics as api_metrics  # noqa: F401  (registers its series)
from providers import metrics as providers_metrics
from scheduling import metrics as scheduling_metrics

TASK_RUNS = Counter("placement_celery_task_runs", "Celery task runs finished", ["task", "state"])
TASK_FAILURES = Counter("placement_celery_task_failures", "Celery task runs failed", ["task"])
TASK_DURATION = Histogram(
    "placement_celery_task_seconds",
    "Celery task run time",
    ["task"],
    buckets=(0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900),
)

# What each app contributes: its series register themselves when its module is imported, its
# scrape-time collectors are registered here (and on the multiprocess registry per scrape).
APP_METRICS = (providers_metrics, allocations_metrics, scheduling_metrics)
COLLECTORS = tuple(collector for module in APP_METRICS for collector in module.COLLECTORS)
for _collector in COLLECTORS:
    REGISTRY.register(_collector)


def exposition():
    """The text exposition of every series of this process (or of all of them, multiprocess)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        for collector in COLLECTORS:
            registry.register(collector)
    else:
        registry = REGISTRY
    return generate_latest(registry)


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
