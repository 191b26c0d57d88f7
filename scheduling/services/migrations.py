"""Moving servers (migrate, resize, live-migrate, evacuate) and settling a move (confirm,
revert, failure).

While a server moves, Placement's pattern holds: the migration's own consumer (type MIGRATION)
holds what the server held on the source, and the server's consumer holds the destination.
The move and every settlement are each one ``POST /allocations``-style write of both consumers
(``allocations_replace``), with both consumer generations checked, in a transaction that first
locks the server row and then the migration row (always in this order, then the allocation
write locks providers and consumers in its own order), so two steps on one move serialise and
the second sees the first's result: a repeated or stale call is a 409, never a double free.

A concurrent update met by the allocation write rolls the whole transaction back; the retry is
a new transaction that reads everything again.
"""

import contextlib
import logging
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from allocations.models import Allocation, Consumer
from allocations.services.allocations import (
    AllocationRefused,
    ConsumerAllocations,
    ProviderGone,
    allocations_replace,
)
from placementsite.core.exceptions import (
    ConcurrentUpdate,
    Conflict,
    InvalidRequest,
    NotFound,
    Unavailable,
)
from providers.services.compute_nodes import compute_node_disable

from ..models import LifecycleRecord, Migration, Server
from ..selectors.scheduler import explain, first_allocations, select_hosts
from .claims import CONCURRENT_RETRIES, ClaimFailed
from .servers import SELECTION_ROUNDS, NoValidHost, scheduling_spec

logger = logging.getLogger("placement.scheduler")

MIGRATION_CONSUMER_TYPE = "MIGRATION"
INSTANCE_CONSUMER_TYPE = "INSTANCE"


class InvalidMigrationState(Conflict):
    code = "migration.invalid_state"


class MoveInProgress(Conflict):
    code = "migration.in_progress"


class NothingToMove(Conflict):
    code = "migration.no_allocations"


class InvalidMove(InvalidRequest):
    code = "migration.invalid"


class MoveRefusedOnSource(Conflict):
    """The source's own inventory refuses to hand the server's allocations to the move (a
    min/max/step rule, or a class no longer there): no destination can help."""

    code = "migration.source_refused"


def lease_expiry(now=None):
    return (now or timezone.now()) + timedelta(seconds=settings.PLACEMENT_MIGRATION_LEASE_SECONDS)


def held_allocations(consumer_uuid):
    """``(generation, {provider uuid: {class: amount}})`` of a consumer, read in one statement
    so the two agree; ``(None, {})`` when it holds nothing (a consumer left with no allocations
    is deleted by every allocation write)."""
    rows = Allocation.objects.filter(consumer__uuid=consumer_uuid).values_list(
        "consumer__generation", "resource_provider__uuid", "resource_class__name", "used"
    )
    generation, held = None, {}
    for row_generation, provider_uuid, class_name, used in rows:
        generation = row_generation
        held.setdefault(str(provider_uuid), {})[class_name] = used
    if not held:
        generation = (
            Consumer.objects.filter(uuid=consumer_uuid).values_list("generation", flat=True).first()
        )
    return generation, held


def _with_fresh_transactions(step):
    """Run ``step()`` (which opens its own transaction); a concurrent-update conflict runs it
    again from scratch, in a new transaction, up to CONCURRENT_RETRIES times."""
    retries = 0
    while True:
        try:
            return step()
        except ConcurrentUpdate:
            if retries >= CONCURRENT_RETRIES:
                raise
            retries += 1
            logger.info("Migration step hit a concurrent update, retrying (%d)", retries)


# --- starting a move --------------------------------------------------------------------------


def _check_movable(server, kind, flavor, target_host):
    """Refuse a move that cannot start (InvalidMove, NothingToMove, MoveInProgress)."""
    if kind == Migration.Kind.RESIZE and flavor.pk == server.flavor_id:
        raise InvalidMove(f"Server {server.uuid} already has flavor {flavor.name}.")
    if kind != Migration.Kind.RESIZE and flavor.pk != server.flavor_id:
        raise InvalidMove("Only a resize changes the flavor.")
    if server.host_id is None:
        raise NothingToMove(f"Server {server.uuid} is on no host.")
    source = server.host
    if target_host and target_host in (source.name, str(source.uuid)):
        raise InvalidMove(f"The target host {target_host} is the server's own host.")
    if Migration.objects.filter(server=server, status__in=Migration.IN_FLIGHT).exists():
        raise MoveInProgress(f"Server {server.uuid} has a move in progress.")


def _claimable(host):
    """The allocations a move claims on ``host``; ClaimFailed when its tree changed since the
    pass read it (every candidate stale)."""
    allocations = first_allocations(host)
    if allocations is None:
        raise ClaimFailed(f"The tree of {host.name} changed since it was read.")
    return allocations


def server_move(*, server, kind, flavor=None, target_host=None):
    """Move ``server``: record a Migration, schedule a destination for ``flavor`` (a resize) or
    the server's own flavor, and move the allocations in one write. Returns the Migration
    (``migrating``). No host: the Migration ends ``error`` and NoValidHost is raised."""
    Kind = Migration.Kind
    flavor = flavor or server.flavor
    _check_movable(server, kind, flavor, target_host)
    source = server.host
    _generation, held = held_allocations(server.uuid)
    if not held:
        raise NothingToMove(f"Server {server.uuid} holds no allocations to move.")
    migration = Migration.objects.create(
        server=server,
        server_uuid=server.uuid,
        kind=kind,
        source=source,
        old_flavor=server.flavor,
        new_flavor=flavor,
        source_allocations=held,
        project_id=server.project_id,
        user_id=server.user_id,
        lease_expires_at=lease_expiry(),
    )
    if kind == Kind.EVACUATE:
        # The source is down: nothing else may be scheduled there until an operator says so.
        with contextlib.suppress(NotFound):  # a host without a report has nothing to disable
            compute_node_disable(
                root_provider_id=source.id, reason=f"evacuated: server {server.uuid} moved off it"
            )
    same_host_allowed = kind == Kind.RESIZE and settings.PLACEMENT_RESIZE_SAME_HOST
    hints = dict(server.scheduler_hints or {})
    if target_host:
        hints["target_host"] = target_host
    spec = scheduling_spec(
        flavor=flavor,
        project_id=server.project_id,
        user_id=server.user_id,
        hints=hints,
        availability_zone=server.availability_zone,
    )
    tries = max(1, settings.PLACEMENT_SCHEDULER_MAX_ATTEMPTS)
    selection = None
    try:
        for _round in range(SELECTION_ROUNDS):
            selection = select_hosts(spec)
            order = [
                w
                for w in selection.attempt_order()
                if (same_host_allowed or w.host.uuid != str(source.uuid))
                and (not target_host or target_host in (w.host.name, w.host.uuid))
            ]
            if not order:
                break
            for weighed in order[:tries]:
                try:
                    _with_fresh_transactions(
                        lambda w=weighed: _move_to(migration.pk, w.host, _claimable(w.host))
                    )
                except ClaimFailed as exc:
                    logger.info("Move to %s failed (%s); next host", weighed.host.name, exc)
                    continue
                migration.refresh_from_db()
                return migration
    except (Conflict, Unavailable) as exc:  # a refusal, a failed plugin, the time budget
        _mark_error(migration.pk, exc.detail)
        raise
    detail = f"No valid host was found to {kind} server {server.uuid}."
    _mark_error(migration.pk, detail)
    raise NoValidHost(detail, explain=explain(spec, selection) if selection else None)


def _mark_error(migration_pk, detail):
    Migration.objects.filter(pk=migration_pk, status=Migration.Status.PRE_MIGRATING).update(
        status=Migration.Status.ERROR, error=detail, updated_at=timezone.now()
    )


def _move_to(migration_pk, host, dest_allocations):
    """The move's one write: the migration consumer takes the server's source allocations,
    the server's consumer takes ``dest_allocations``. The destination refused: ClaimFailed
    (the next host is tried); the source refused: MoveRefusedOnSource. Handing the same
    amounts to the migration consumer never raises the source's usage, so a source lowered
    below its usage is never refused for capacity."""
    with transaction.atomic():
        server_pk = Migration.objects.values_list("server_id", flat=True).get(pk=migration_pk)
        server = Server.objects.select_for_update().get(pk=server_pk)
        migration = Migration.objects.select_for_update().get(pk=migration_pk)
        if migration.status != Migration.Status.PRE_MIGRATING:
            raise InvalidMigrationState(f"Migration {migration.uuid} is {migration.status}.")
        busy = Migration.objects.filter(server=server, status__in=Migration.IN_FLIGHT).exclude(
            pk=migration.pk
        )
        if busy.exists():
            raise MoveInProgress(f"Server {server.uuid} has a move in progress.")
        if server.host_id != migration.source_id:
            raise InvalidMigrationState(f"Server {server.uuid} left its host meanwhile.")
        generation, held = held_allocations(server.uuid)
        if not held:
            raise NothingToMove(f"Server {server.uuid} holds no allocations to move.")
        try:
            allocations_replace(
                consumers=[
                    ConsumerAllocations(
                        consumer_uuid=str(migration.uuid),
                        allocations=held,
                        project_id=server.project_id,
                        user_id=server.user_id,
                        generation=None,
                        consumer_type=MIGRATION_CONSUMER_TYPE,
                    ),
                    ConsumerAllocations(
                        consumer_uuid=str(server.uuid),
                        allocations=dest_allocations,
                        project_id=server.project_id,
                        user_id=server.user_id,
                        generation=generation,
                        consumer_type=INSTANCE_CONSUMER_TYPE,
                    ),
                ]
            )
        except ConcurrentUpdate:
            raise
        except AllocationRefused as exc:
            if exc.provider_uuid in held and exc.provider_uuid not in dest_allocations:
                raise MoveRefusedOnSource(
                    f"The source host refuses the move of server {server.uuid}: {exc.detail}"
                ) from None
            raise ClaimFailed(exc.detail) from None
        except (Conflict, ProviderGone) as exc:
            raise ClaimFailed(exc.detail) from None
        now = timezone.now()
        migration.status = Migration.Status.MIGRATING
        migration.dest_id = host.id
        migration.source_allocations = held
        migration.dest_allocations = dest_allocations
        migration.lease_expires_at = lease_expiry(now)
        migration.save()
        server.host_id = host.id
        server.allocations = dest_allocations
        server.flavor_id = migration.new_flavor_id
        server.save(update_fields=["host", "allocations", "flavor", "updated_at"])


# --- settling a move --------------------------------------------------------------------------

CONFIRMABLE = (Migration.Status.MIGRATING, Migration.Status.FINISHED)
REVERTIBLE = (Migration.Status.PRE_MIGRATING, Migration.Status.MIGRATING, Migration.Status.FINISHED)
FAILABLE = (Migration.Status.PRE_MIGRATING, Migration.Status.MIGRATING)


@dataclass(frozen=True)
class Settlement:
    """How a move may end: from which statuses (``allowed``), into which ``status``, and
    whether the server goes back to its source (``revert``) or keeps its destination."""

    verb: str
    allowed: tuple
    status: str
    revert: bool


CONFIRM = Settlement("confirm", CONFIRMABLE, Migration.Status.CONFIRMED, revert=False)
REVERT = Settlement("revert", REVERTIBLE, Migration.Status.REVERTED, revert=True)
FAIL = Settlement("fail", FAILABLE, Migration.Status.ERROR, revert=True)
ABANDON = Settlement("abandon", REVERTIBLE, Migration.Status.ERROR, revert=False)


def migration_finish(*, migration):
    """The move is done and waits for a confirm or a revert (``migrating`` -> ``finished``);
    the lease starts again."""
    with transaction.atomic():
        locked = Migration.objects.select_for_update().get(pk=migration.pk)
        if locked.status != Migration.Status.MIGRATING:
            raise InvalidMigrationState(
                f"Migration {locked.uuid} is {locked.status}; only a migrating one can finish."
            )
        now = timezone.now()
        locked.status = Migration.Status.FINISHED
        locked.finished_at = now
        locked.lease_expires_at = lease_expiry(now)
        locked.save()
    return locked


def migration_confirm(*, migration, generation=..., record=None):
    """Keep the destination: the migration consumer's allocations go. ``generation``: the
    migration consumer generation the caller saw (default: read now)."""
    return _settle(migration, CONFIRM, generation=generation, record=record)


def migration_revert(*, migration, generation=..., record=None):
    """Go back: the server's consumer gets the source allocations back from the migration
    consumer, and the destination is freed, in one write."""
    return _settle(migration, REVERT, generation=generation, record=record)


def migration_fail(*, migration, reason="", record=None):
    """A failure while migrating: the revert, leaving the migration ``error``."""
    record = record or {}
    record.setdefault("action", LifecycleRecord.Action.FAILED_REVERTED)
    record.setdefault("origin", "api")
    record.setdefault("detail", reason or "the move failed")
    return _settle(migration, FAIL, record=record, error=reason or "the move failed")


def migration_abandon(*, migration, record=None):
    """A move whose server is gone: free what the migration consumer holds, ``error``."""
    return _settle(
        migration, ABANDON, record=record, error="the server was deleted during the move"
    )


def _settle(migration, settlement, *, generation=..., record=None, error=""):
    """End ``migration`` as ``settlement`` says, in one transaction; a concurrent update
    runs it again from scratch."""
    return _with_fresh_transactions(
        lambda: _settle_once(
            migration.pk, settlement, generation=generation, record=record, error=error
        )
    )


def _settle_once(migration_pk, settlement, *, generation, record, error):
    with transaction.atomic():
        server_pk = Migration.objects.values_list("server_id", flat=True).get(pk=migration_pk)
        server = Server.objects.select_for_update().filter(pk=server_pk).first()
        migration = Migration.objects.select_for_update().get(pk=migration_pk)
        if migration.status not in settlement.allowed:
            raise InvalidMigrationState(
                f"Migration {migration.uuid} is {migration.status}; it cannot {settlement.verb}."
            )
        if settlement.revert and server is None:
            raise InvalidMigrationState(f"Migration {migration.uuid} has no server to revert.")
        current, held = held_allocations(migration.uuid)
        if generation is not ... and generation != current:
            raise Conflict(
                f"consumer generation conflict - expected {generation} but got {current}",
                code="migration.generation_conflict",
            )
        moved = migration.status != Migration.Status.PRE_MIGRATING
        consumers = []
        if current is not None:
            consumers.append(
                ConsumerAllocations(
                    consumer_uuid=str(migration.uuid),
                    allocations={},
                    project_id=migration.project_id,
                    user_id=migration.user_id,
                    generation=current,
                    consumer_type=MIGRATION_CONSUMER_TYPE,
                )
            )
        restored = None
        if settlement.revert and moved:
            # What the migration consumer holds now is what goes back; if something freed it
            # already, the recorded source allocations are claimed again (capacity checked).
            restored = held or migration.source_allocations
            server_generation, _server_held = held_allocations(server.uuid)
            consumers.append(
                ConsumerAllocations(
                    consumer_uuid=str(server.uuid),
                    allocations=restored,
                    project_id=server.project_id,
                    user_id=server.user_id,
                    generation=server_generation,
                    consumer_type=INSTANCE_CONSUMER_TYPE,
                )
            )
        if consumers:
            allocations_replace(consumers=consumers)
        now = timezone.now()
        migration.status = settlement.status
        migration.finished_at = migration.finished_at or now
        if error:
            migration.error = error
        migration.save()
        if restored is not None:
            server.host_id = migration.source_id
            server.allocations = restored
            server.flavor_id = migration.old_flavor_id
            server.save(update_fields=["host", "allocations", "flavor", "updated_at"])
        if record:
            LifecycleRecord.objects.create(
                run=record.get("run") or migration.uuid,
                origin=record.get("origin", "task"),
                action=record["action"],
                migration=migration,
                consumer_uuid=migration.uuid,
                allocations=held,
                detail=record.get("detail", ""),
            )
    return migration
