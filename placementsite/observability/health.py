"""Health checks, as Placement's oslo healthcheck answers a load balancer, and in detail.

Each check returns ``(ok, detail)``. The plain check (``database``) is what a load balancer
needs: can this server answer API calls. The detailed report adds what an operator wants to
know: are the migrations applied, is the Celery broker reachable, do the workers answer (and
run what beat sends), is exactly one beat running, was a task run lost, and how far behind each
read replica is (a replica down or lagging is skipped by the reads, not a failure).

Workers and beats record themselves alive in the database (``ServiceProcess``, see
``observability.processes``), apart from the broker; the workers are also pinged over the
broker. So a worker alive but cut off from its broker, all workers down (beat is not blamed),
two beats, and a service that has just started (not yet due is not down) are told apart.
"""

import datetime as dt

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from placementsite import selectors
from placementsite.core import replicas
from placementsite.models import Heartbeat, ServiceProcess

# How long a ping waits for the workers' answers (it returns early when all expected answer).
PING_SECONDS = 1.0
# Task runs lost within this window fail the check (the runs stay listed in the admin).
LOST_RUNS_WINDOW = dt.timedelta(hours=1)


def check_database():
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError as exc:
        return False, f"unreachable: {exc.__class__.__name__}: {exc}".strip()
    return True, f"reachable ({connection.vendor})"


def check_migrations():
    try:
        executor = MigrationExecutor(connection)
        plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    except DatabaseError as exc:
        return False, f"cannot read migrations: {exc.__class__.__name__}"
    if plan:
        pending = ", ".join(f"{m.app_label}.{m.name}" for m, _backwards in plan[:5])
        return False, f"{len(plan)} unapplied migration(s): {pending}"
    return True, "all migrations applied"


def check_broker():
    from placementsite.celery import app

    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception as exc:  # kombu raises transport-specific errors
        return False, f"unreachable: {exc.__class__.__name__}: {exc}"
    return True, f"reachable ({app.conf.broker_url.split('://', 1)[0]})"


def _window():
    return dt.timedelta(seconds=settings.PLACEMENT_HEARTBEAT_MAX_AGE)


def _ago(now, when):
    return f"{int((now - when).total_seconds())} s ago"


def ping_workers(expected):
    """The node names of the workers that answer a ping over the broker."""
    from placementsite.celery import app

    replies = app.control.ping(timeout=PING_SECONDS, limit=expected or None)
    return {name for reply in replies for name in reply}


def check_workers(now=None):
    """The workers answer over the broker, every worker alive answers, and one ran the
    heartbeat beat sent (unless it is not due yet, just after a start)."""
    now = now or timezone.now()
    try:
        alive = selectors.processes_seen(kind=ServiceProcess.Kind.WORKER, since=now - _window())
    except DatabaseError as exc:
        return False, f"cannot read the workers: {exc.__class__.__name__}"
    try:
        answered = ping_workers(len(alive))
    except Exception as exc:  # kombu raises transport-specific errors
        return (
            False,
            f"cannot ping the workers, the broker is unreachable: {exc.__class__.__name__}",
        )
    silent = sorted(p.name for p in alive if p.name not in answered)
    if silent:
        return False, (
            f"{', '.join(silent)} alive but not answering over the broker (cut off from it, "
            "or busy past the ping)"
        )
    if not answered:
        return False, "no worker answered a ping: every worker is down"
    return _heartbeat_ran(now, alive, workers=", ".join(sorted(answered)))


def _heartbeat_ran(now, alive, *, workers):
    """The workers that answer also ran the heartbeat beat sent lately, or it is not due yet:
    a worker or beat started within the window has had no time to run one."""
    heartbeat = Heartbeat.objects.filter(name="heartbeat").first()
    started = max((p.started_at for p in alive), default=None)
    beat = selectors.last_process_seen(kind=ServiceProcess.Kind.BEAT)
    evidence = [
        t for t in (heartbeat and heartbeat.last_run, started, beat and beat.started_at) if t
    ]
    if evidence and now - max(evidence) <= _window():
        if heartbeat is None or now - heartbeat.last_run > _window():
            return True, f"{workers}; the first heartbeat since the start is not due yet"
        return True, f"{workers}; last heartbeat {_ago(now, heartbeat.last_run)}"
    last = f"last ran {_ago(now, heartbeat.last_run)}" if heartbeat else "never ran"
    return False, f"{workers} answer, but the heartbeat beat sends {last}: is their queue right?"


def check_beat(now=None):
    """Exactly one beat, seen lately (beat says so whenever it sends a task)."""
    now = now or timezone.now()
    try:
        beats = selectors.processes_seen(kind=ServiceProcess.Kind.BEAT, since=now - _window())
        last = selectors.last_process_seen(kind=ServiceProcess.Kind.BEAT)
    except DatabaseError as exc:
        return False, f"cannot read beat's state: {exc.__class__.__name__}"
    if len(beats) > 1:
        names = ", ".join(b.name for b in beats)
        return False, f"{len(beats)} beats are running ({names}): each periodic task runs twice"
    if beats:
        return True, f"beat on {beats[0].name}, last seen {_ago(now, beats[0].last_seen)}"
    if last is None:
        return False, "beat has never run (start celery beat, or the worker with -B)"
    return False, f"beat last seen {_ago(now, last.last_seen)} ({last.name})"


def check_task_runs(now=None):
    """No task run lost lately (a worker killed during the run)."""
    now = now or timezone.now()
    try:
        lost = selectors.lost_task_runs(since=now - LOST_RUNS_WINDOW)
    except DatabaseError as exc:
        return False, f"cannot read the task runs: {exc.__class__.__name__}"
    if lost:
        runs = "; ".join(
            f"{r.task} started {_ago(now, r.started_at)} on {r.worker}" for r in lost[:5]
        )
        return False, f"{len(lost)} task run(s) lost in the last hour: {runs}"
    return True, "no task run lost in the last hour"


def check_replicas():
    """Each read replica's state and replay lag. Never a failure: a replica down or lagging is
    skipped (its reads go to the primary), which the detail says."""
    report = replicas.replicas_report()
    if not report:
        return True, "no replica configured", {}
    parts = []
    for alias, state in report.items():
        if state["status"] == "down":
            parts.append(f"{alias} down, skipped")
        else:
            paused = ", replay paused" if state["replay_paused"] else ""
            skipped = ", skipped" if state["status"] == "lagging" else ""
            parts.append(
                f"{alias} {state['status']} (lag {state['lag_ms']:.0f} ms{paused}){skipped}"
            )
    return True, "; ".join(parts), {"replicas": report}


BASIC_CHECKS = {"database": check_database}
DETAILED_CHECKS = {
    "database": check_database,
    "migrations": check_migrations,
    "broker": check_broker,
    "workers": check_workers,
    "beat": check_beat,
    "task_runs": check_task_runs,
    "replicas": check_replicas,
}


def health_report(*, detailed=False):
    """``(healthy, {name: {"ok": bool, "detail": str}})``; a failed database skips the rest."""
    results = {}
    for name, check in (DETAILED_CHECKS if detailed else BASIC_CHECKS).items():
        if name != "database" and not results["database"]["ok"] and name != "broker":
            results[name] = {"ok": False, "detail": "skipped: the database is unreachable"}
            continue
        ok, detail, *more = check()
        results[name] = {"ok": ok, "detail": detail, **(more[0] if more else {})}
    return all(result["ok"] for result in results.values()), results
