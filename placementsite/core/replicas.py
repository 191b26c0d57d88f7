"""Read replicas: which database a query goes to.

The primary (alias ``default``) takes every write and every read, except the reads of a request
whose view says it tolerates a replica (``replica_reads``: allocation candidates, provider and
usage listings, capacity, explain, the dashboard, ``/metrics``). Such a request's reads go to a
replica (alias ``replica1``, ``replica2``... from ``DATABASE_REPLICA_URLS``) when one is

- reachable (one that is not is skipped for ``DOWN_RETRY_SECONDS``, never an error),
- less than ``PLACEMENT_REPLICA_MAX_LAG_MS`` behind in replaying the primary's WAL, and
- past the *fence*: it has replayed the primary's WAL up to where it was when the request's
  first read was routed (``pg_current_wal_flush_lsn()`` on the primary, compared with the replica's
  ``pg_last_wal_replay_lsn()``).

The fence is what guarantees read-your-writes: every write any client was answered for before
this request began is in the WAL below that position, so a replica past it shows it, whichever
API server took the write. A pin of the client to the primary after its write would need state
shared by every API server and a client identity (Nova's services all share one), and a lag
threshold alone lets a read 10 ms after a write see the state before it. The fence costs one
round trip to the primary and one to the replica per request (fractions of a millisecond); a
replica that has not replayed up to it yet (a write committed within the last milliseconds)
is asked again every millisecond for up to ``PLACEMENT_REPLICA_FENCE_WAIT_MS`` (default 5:
replay on a healthy replica is that close behind), then the request goes to the primary; so
under a heavy write load some reads stay there, and a request may wait a few milliseconds.

Within a request the decision is taken once, at its first read, so that its reads see one
database. Anything inside a transaction on the primary (locking reads, reads before a write)
and every read after the request's first write go to the primary.
"""

import contextvars
import itertools
import logging
import threading
import time
from contextlib import contextmanager

from django.conf import settings
from django.db import DatabaseError, connections
from prometheus_client import Counter

logger = logging.getLogger("placement.db")

PRIMARY = "default"
# A replica that could not be reached is not asked again for this long.
DOWN_RETRY_SECONDS = 5.0
# How often a replica behind the fence is asked again within PLACEMENT_REPLICA_FENCE_WAIT_MS.
FENCE_POLL_SECONDS = 0.001

READS_ROUTED = Counter(
    "placement_db_read_requests",
    "Requests whose reads a replica could serve, by the database that served them "
    "(default: the primary) and why",
    ["database", "reason"],
)

# The fence and the lag in one round trip to the replica. A server not in recovery (a
# promoted replica, or the primary itself behind another name) has nothing to replay.
#
# "Past the fence" allows a gap of less than 24 bytes: the primary's flushed position can sit
# at a page boundary while the last record ended up to 23 bytes before it (a record header
# never straddles a page: the rest of the page is padding). No commit record is that small, so
# every transaction committed before the fence is replayed. The same slack says "caught up"
# for the lag, which is otherwise the age of the last transaction replayed.
_REPLICA_STATE_SQL = """
SELECT pg_is_in_recovery(),
       COALESCE(pg_wal_lsn_diff(%s::pg_lsn, pg_last_wal_replay_lsn()) < 24,
                NOT pg_is_in_recovery()),
       CASE WHEN NOT pg_is_in_recovery() THEN 0
            WHEN pg_wal_lsn_diff(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn()) < 24 THEN 0
            ELSE COALESCE(
                1000 * EXTRACT(EPOCH FROM clock_timestamp() - pg_last_xact_replay_timestamp()), 0)
       END,
       pg_is_in_recovery() AND pg_is_wal_replay_paused(),
       pg_last_wal_replay_lsn()::text
"""


def replica_aliases():
    """The aliases of the replicas reads may use, in order (``PLACEMENT_READ_REPLICAS``)."""
    return list(getattr(settings, "PLACEMENT_READ_REPLICAS", ()))


def max_lag_ms():
    return getattr(settings, "PLACEMENT_REPLICA_MAX_LAG_MS", 500)


def fence_wait_ms():
    return getattr(settings, "PLACEMENT_REPLICA_FENCE_WAIT_MS", 5)


class _Routing:
    """One request's routing: may it read from a replica, which one, has it written."""

    __slots__ = ("eligible", "alias", "reason", "wrote")

    def __init__(self, eligible):
        self.eligible = eligible
        self.alias = None  # decided at the first read
        self.reason = ""
        self.wrote = False


_routing = contextvars.ContextVar("placement_db_routing", default=None)
_down_until = {}
_down_lock = threading.Lock()
_next_replica = itertools.count()


@contextmanager
def lag_tolerant_reads(eligible=True):
    """Within the block, reads may go to a replica (``eligible``) or stay on the primary."""
    token = _routing.set(_Routing(eligible))
    try:
        yield
    finally:
        state = _routing.get()
        if state is not None and state.alias is not None:
            READS_ROUTED.labels(database=state.alias, reason=state.reason).inc()
        _routing.reset(token)


def current_read_database():
    """Where this request's reads went (``None``: not decided yet, or not a routed request)."""
    state = _routing.get()
    return state.alias if state is not None else None


def _primary_in_transaction():
    return connections[PRIMARY].in_atomic_block


def read_alias():
    """The alias the next read should use."""
    state = _routing.get()
    if state is None or not state.eligible or state.wrote:
        return PRIMARY
    if state.alias is None:
        if _primary_in_transaction():
            return PRIMARY  # not decided: a later read outside the transaction may still go
        state.alias, state.reason = _choose_replica()
    elif state.alias != PRIMARY and _primary_in_transaction():
        return PRIMARY
    return state.alias


def note_write():
    """A write: this request reads from the primary from now on."""
    state = _routing.get()
    if state is not None:
        state.wrote = True


def _is_down(alias):
    with _down_lock:
        until = _down_until.get(alias)
        return until is not None and time.monotonic() < until


def _mark_down(alias, exc):
    with _down_lock:
        already = _down_until.get(alias)
        _down_until[alias] = time.monotonic() + DOWN_RETRY_SECONDS
    if already is None:
        logger.warning("replica %s unreachable, reads go to the primary: %s", alias, exc)
    try:
        connections[alias].close()
    except DatabaseError:
        pass


def _mark_up(alias):
    with _down_lock:
        was_down = _down_until.pop(alias, None) is not None
    if was_down:
        logger.info("replica %s reachable again", alias)


def forget_down_replicas():
    """Every replica is tried again at the next request (tests, a configuration change)."""
    with _down_lock:
        _down_until.clear()


def _primary_lsn():
    with connections[PRIMARY].cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_flush_lsn()::text")
        return cursor.fetchone()[0]


def replica_state(alias, fence_lsn="0/0"):
    """``{"in_recovery", "past_fence", "lag_ms", "paused", "replay_lsn"}`` of one replica;
    raises ``DatabaseError`` when it cannot be reached."""
    connection = connections[alias]
    with connection.cursor() as cursor:
        cursor.execute(_REPLICA_STATE_SQL, [fence_lsn])
        in_recovery, past_fence, lag_ms, paused, replay_lsn = cursor.fetchone()
    return {
        "in_recovery": bool(in_recovery),
        "past_fence": bool(past_fence),
        "lag_ms": float(lag_ms or 0),
        "paused": bool(paused),
        "replay_lsn": replay_lsn,
    }


def _choose_replica():
    """``(alias, reason)``: the first replica, round robin, that is up, close enough and past
    the fence; else the primary and why."""
    aliases = replica_aliases()
    if not aliases or connections[PRIMARY].vendor != "postgresql":
        return PRIMARY, "no replica"
    start = next(_next_replica)
    ordered = [aliases[(start + i) % len(aliases)] for i in range(len(aliases))]
    candidates = [alias for alias in ordered if not _is_down(alias)]
    if not candidates:
        return PRIMARY, "replicas down"
    try:
        fence = _primary_lsn()
    except DatabaseError:
        return PRIMARY, "primary position unknown"  # the request's own reads will say more
    reason = "replicas down"
    for alias in candidates:
        deadline = time.monotonic() + fence_wait_ms() / 1000
        while True:
            try:
                state = replica_state(alias, fence)
            except DatabaseError as exc:
                _mark_down(alias, exc)
                break
            _mark_up(alias)
            if state["lag_ms"] > max_lag_ms():
                reason = "replica lagging"
                break
            if state["past_fence"]:
                return alias, "replica current"
            reason = "replica behind the fence"
            # Replaying a few milliseconds behind: worth a short wait rather than the primary.
            if time.monotonic() >= deadline:
                break
            time.sleep(FENCE_POLL_SECONDS)
    return PRIMARY, reason


def replicas_report():
    """Each replica's state for ``/healthcheck?detailed``: ``{alias: {...}}``."""
    report = {}
    for alias in replica_aliases():
        try:
            state = replica_state(alias)
        except DatabaseError as exc:
            _mark_down(alias, exc)
            report[alias] = {"status": "down", "detail": f"{exc.__class__.__name__}: {exc}".strip()}
            continue
        _mark_up(alias)
        lagging = state["lag_ms"] > max_lag_ms()
        report[alias] = {
            "status": "lagging" if lagging else "up",
            "lag_ms": round(state["lag_ms"], 1),
            "replay_paused": state["paused"],
            "replay_lsn": state["replay_lsn"],
            "in_recovery": state["in_recovery"],
        }
    return report


class ReplicaRouter:
    """``DATABASE_ROUTERS``: reads as ``read_alias()`` says, writes to the primary."""

    def db_for_read(self, model, **hints):
        return read_alias()

    def db_for_write(self, model, **hints):
        note_write()
        return PRIMARY

    def allow_relation(self, obj1, obj2, **hints):
        return True  # one database, copied

    def allow_migrate(self, db, app_label, model_name=None, **hints):
        return db == PRIMARY


def tolerates_replica_lag(*methods):
    """Marks a function view (or a view class) whose reads may come from a replica, for the
    HTTP ``methods`` given (default ``GET`` and ``HEAD``)."""

    def mark(view):
        view.replica_reads = frozenset(methods or ("GET", "HEAD"))
        return view

    return mark


def view_tolerates_lag(view_func, method):
    """Whether ``view_func`` (as the URL resolver gives it) reads from a replica for
    ``method``. A view class says so with ``replica_reads`` (HTTP methods); a DRF viewset
    with the names of its actions."""
    marked = getattr(view_func, "replica_reads", None)
    if marked is None:
        view_class = getattr(view_func, "view_class", None) or getattr(view_func, "cls", None)
        marked = getattr(view_class, "replica_reads", None)
    if not marked:
        return False
    actions = getattr(view_func, "actions", None)
    if actions:  # a viewset: by action
        return actions.get(method.lower()) in marked
    return method in marked


class ReplicaReadsMiddleware:
    """Lets the views marked as tolerating replica lag read from a replica."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        with lag_tolerant_reads(eligible=False):
            return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        state = _routing.get()
        if state is not None and state.alias is None and not state.wrote:
            state.eligible = view_tolerates_lag(view_func, request.method)
        return None
