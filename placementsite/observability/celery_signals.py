"""Celery hooks: request ids travel with the tasks a request enqueues, tasks are measured.

A task sent while serving an API request carries that request's ids in its message headers;
the worker puts them back into the logging context while the task runs, so the task's log
lines name the request that caused them. The worker's own log handlers get the same filter and
format as the service's (``PLACEMENT_LOG_FORMAT``).
"""

from celery import signals

from placementsite.core.api import request_id

from . import logs, metrics

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


def connect():
    signals.before_task_publish.connect(add_request_ids, weak=False, dispatch_uid="placement_rid")
    signals.task_prerun.connect(enter_request_context, weak=False, dispatch_uid="placement_rid_in")
    signals.task_postrun.connect(
        leave_request_context, weak=False, dispatch_uid="placement_rid_out"
    )
    signals.after_setup_logger.connect(format_worker_logs, weak=False, dispatch_uid="placement_l")
    signals.after_setup_task_logger.connect(
        format_worker_logs, weak=False, dispatch_uid="placement_tl"
    )
    metrics.connect_celery_signals()
