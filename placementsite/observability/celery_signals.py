"""Celery hooks: request ids travel with the tasks a request enqueues, tasks are measured,
task runs are recorded when they start and end, workers and beats say they are alive.

A task sent while serving an API request carries that request's ids in its message headers;
the worker puts them back into the logging context while the task runs, so the task's log
lines name the request that caused them. The worker's own log handlers get the same filter and
format as the service's (``PLACEMENT_LOG_FORMAT``).
"""

import logging
import os
import socket
import threading
import time

from celery import signals
from django.conf import settings
from django.db import DatabaseError, close_old_connections

from placementsite.core.api import request_id

from . import logs, metrics

# ServiceProcess.Kind's values (this module is imported with the Celery app, before the models).
WORKER, BEAT = "worker", "beat"

logger = logging.getLogger("placement.tasks")

REQUEST_ID_HEADER = "placement_request_id"
GLOBAL_REQUEST_ID_HEADER = "placement_global_request_id"

_context_tokens = {}


def add_request_ids(headers=None, **_kwargs):
    if headers is None:
        return
    current = request_id.current_request_id.get()
    if current != "-":
        headers.setdefault(REQUEST_ID_HEADER, current)
        headers.setdefault(GLOBAL_REQUEST_ID_HEADER, request_id.current_global_request_id.get())


def enter_request_context(task_id=None, task=None, **_kwargs):
    task_request = getattr(task, "request", None)
    rid = getattr(task_request, REQUEST_ID_HEADER, None) or "-"
    grid = getattr(task_request, GLOBAL_REQUEST_ID_HEADER, None) or "-"
    _context_tokens[task_id] = (
        request_id.current_request_id.set(rid),
        request_id.current_global_request_id.set(grid),
    )


def leave_request_context(task_id=None, **_kwargs):
    tokens = _context_tokens.pop(task_id, None)
    if tokens is not None:
        request_id.current_request_id.reset(tokens[0])
        request_id.current_global_request_id.reset(tokens[1])


def format_worker_logs(logger=None, **_kwargs):
    """Celery's worker and task handlers: the service's filter and format."""
    logs.format_handlers_of(logger)


def write_service_logs_once(logger=None, **_kwargs):
    """In the worker the root logger has Celery's handler (its log file, or stderr), which the
    ``placement`` loggers propagate to: their own console handler from Django's LOGGING
    would print every line a second time."""
    logs.leave_to_root("placement")


# --- task runs, workers and beats ------------------------------------------------------------


def _bookkeeping(write, **kwargs):
    """Run the bookkeeping write ``write`` of :mod:`.processes`; a database error is logged,
    never raised into Celery."""
    from . import processes

    try:
        getattr(processes, write)(**kwargs)
    except DatabaseError as exc:
        logger.warning("Celery bookkeeping (%s) failed: %s", write, exc)


def record_task_start(task_id=None, task=None, **_kwargs):
    worker = getattr(getattr(task, "request", None), "hostname", None) or socket.gethostname()
    _bookkeeping("task_run_started", task_id=task_id, task=task.name, worker=worker)


def record_task_end(task_id=None, state=None, retval=None, **_kwargs):
    detail = str(retval) if state == "FAILURE" else ""
    _bookkeeping("task_run_finished", task_id=task_id, state=state, detail=detail)


def _seen_every():
    return max(5, settings.PLACEMENT_HEARTBEAT_MAX_AGE // 4)


class _WorkerLiveness:
    """A worker's own thread saying it is alive, apart from the broker: a worker cut off from
    its broker still shows, and the health check sees that it does not answer."""

    def __init__(self, name):
        self.name = name
        self.stopped = threading.Event()

    def run(self):
        while not self.stopped.wait(_seen_every()):
            close_old_connections()  # this thread's own; a restarted database is reconnected
            _bookkeeping("process_seen", kind=WORKER, name=self.name)


_liveness = {}


def worker_started(sender=None, **_kwargs):
    from . import processes

    name = getattr(sender, "hostname", None) or socket.gethostname()
    try:
        for run in processes.task_runs_lost(worker=name):
            logger.error(
                "Task %s (%s) started at %s on %s never finished: the worker was killed during "
                "the run; recorded as lost",
                run.task,
                run.task_id,
                run.started_at.isoformat(),
                name,
            )
            metrics.count_lost_task(run.task)
    except DatabaseError as exc:
        logger.warning("Could not look for lost task runs: %s", exc)
    _bookkeeping("process_seen", kind=WORKER, name=name, started=True)
    liveness = _liveness[name] = _WorkerLiveness(name)
    threading.Thread(target=liveness.run, name="placement-liveness", daemon=True).start()


def worker_stopping(sender=None, **_kwargs):
    name = getattr(sender, "hostname", None) or socket.gethostname()
    liveness = _liveness.pop(name, None)
    if liveness is not None:
        liveness.stopped.set()
    _bookkeeping("process_gone", kind=WORKER, name=name)


_beat = {"name": None, "seen": 0.0}


def beat_started(**_kwargs):
    """In beat's process (standalone, or embedded in a worker with -B)."""
    _beat["name"] = f"{socket.gethostname()}:{os.getpid()}"
    _beat["seen"] = time.monotonic()
    _bookkeeping("process_seen", kind=BEAT, name=_beat["name"], started=True)


def beat_sending(**_kwargs):
    """Beat is alive whenever it sends a task (every minute at least: the heartbeat)."""
    if _beat["name"] is None or time.monotonic() - _beat["seen"] < 5:
        return
    _beat["seen"] = time.monotonic()
    _bookkeeping("process_seen", kind=BEAT, name=_beat["name"])


def connect():
    signals.before_task_publish.connect(add_request_ids, weak=False, dispatch_uid="placement_rid")
    signals.task_prerun.connect(enter_request_context, weak=False, dispatch_uid="placement_rid_in")
    signals.task_postrun.connect(
        leave_request_context, weak=False, dispatch_uid="placement_rid_out"
    )
    signals.after_setup_logger.connect(format_worker_logs, weak=False, dispatch_uid="placement_l")
    signals.after_setup_logger.connect(
        write_service_logs_once, weak=False, dispatch_uid="placement_once"
    )
    signals.after_setup_task_logger.connect(
        format_worker_logs, weak=False, dispatch_uid="placement_tl"
    )
    signals.task_prerun.connect(record_task_start, weak=False, dispatch_uid="placement_run_in")
    signals.task_postrun.connect(record_task_end, weak=False, dispatch_uid="placement_run_out")
    signals.worker_ready.connect(worker_started, weak=False, dispatch_uid="placement_w_up")
    signals.worker_shutdown.connect(worker_stopping, weak=False, dispatch_uid="placement_w_down")
    signals.beat_init.connect(beat_started, weak=False, dispatch_uid="placement_beat_up")
    signals.beat_embedded_init.connect(beat_started, weak=False, dispatch_uid="placement_beat_e")
    signals.before_task_publish.connect(beat_sending, weak=False, dispatch_uid="placement_beat")
    metrics.connect_celery_signals()
