"""Health checks, as Placement's oslo healthcheck answers a load balancer, and in detail.

Each check returns ``(ok, detail)``. The plain check (``database``) is what a load balancer
needs: can this server answer API calls. The detailed report adds what an operator wants to
know: are the migrations applied, is the Celery broker reachable, has beat run lately.
"""

import datetime as dt

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from placementsite.models import Heartbeat


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


def check_beat(now=None):
    now = now or timezone.now()
    try:
        heartbeat = Heartbeat.objects.filter(name="heartbeat").first()
    except DatabaseError as exc:
        return False, f"cannot read the heartbeat: {exc.__class__.__name__}"
    if heartbeat is None:
        return False, "the heartbeat task has never run (are the Celery worker and beat up?)"
    age = now - heartbeat.last_run
    # The heartbeat task runs every minute; missed runs mean beat or the worker is down.
    if age > dt.timedelta(seconds=settings.PLACEMENT_HEARTBEAT_MAX_AGE):
        return False, f"last heartbeat {int(age.total_seconds())} s ago ({heartbeat.hostname})"
    return True, f"last heartbeat {int(age.total_seconds())} s ago ({heartbeat.hostname})"


BASIC_CHECKS = {"database": check_database}
DETAILED_CHECKS = {
    "database": check_database,
    "migrations": check_migrations,
    "broker": check_broker,
    "beat": check_beat,
}


def health_report(*, detailed=False):
    """``(healthy, {name: {"ok": bool, "detail": str}})``; a failed database skips the rest."""
    results = {}
    for name, check in (DETAILED_CHECKS if detailed else BASIC_CHECKS).items():
        if name != "database" and not results["database"]["ok"] and name != "broker":
            results[name] = {"ok": False, "detail": "skipped: the database is unreachable"}
            continue
        ok, detail = check()
        results[name] = {"ok": ok, "detail": detail}
    return all(result["ok"] for result in results.values()), results
