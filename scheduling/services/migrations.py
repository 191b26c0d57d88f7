"""Moving servers (migrate, resize, live-migrate, evacuate) and settling a move (confirm,
revert, failure).

While a server moves, Placement's pattern holds: the migration's own consumer (type MIGRATION)
holds what the server held on the source, and the server's consumer holds the destination.
But for a pool both hosts share (a sharing provider, ``MISC_SHARES_VIA_AGGREGATE``, that the
source allocations and the destination's both take from): Nova's pattern would count it twice
during the move; here the server keeps its pool allocation through the move (the destination
claim's amount, which is the same for a migration) and the migration consumer holds only what
a resize shrinking it gives up, so that a revert can always take it back. Confirm leaves the
pool as the destination claim has it, revert puts the source amounts back: each exactly as
before. Pools not shared by both sides are held like host resources.
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
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from types import EllipsisType
from typing import Any, TypeVar
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from allocations.models import Allocation, Consumer
from allocations.services.allocations import (
    AllocationRefused,
    ConsumerAllocationWrite,
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
from providers.models import ResourceProvider
from providers.selectors.compute_nodes import host_is_down
from providers.selectors.resource_pools import sharing_provider_uuids
from providers.services.compute_nodes import compute_node_disable

from ..flavor_snapshots import flavor_snapshot, server_flavor
from ..host_limits import claim_checked
from ..models import Flavor, LifecycleRecord, Migration, Server, ServerGroup
from ..plugins import HostState
from ..selectors.pass_hosts import availability_zone_of
from ..selectors.pools import spec_within_pools
from ..selectors.scheduler import (
    SchedulingSpec,
    Selection,
    WeighedHost,
    explain,
    first_allocations,
    max_placement_results,
    select_hosts,
)
from ..selectors.server_groups import server_group_of
from .claims import CONCURRENT_RETRIES, ClaimFailed
from .server_groups import GroupPolicyViolated, group_admit, group_locked
from .servers import SELECTION_ROUNDS, NoValidHost, read_group_hosts, scheduling_spec

logger = logging.getLogger("placement.scheduler")

Allocations = dict[str, dict[str, int]]  # {provider uuid: {class: amount}}
# A consumer generation the caller saw (None: no consumer); ``...``: read it now.
Generation = int | None | EllipsisType
T = TypeVar("T")

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


class SourceUp(Conflict):
    """An evacuation from a host that is neither forced down nor stale: its servers may still
    run there, and rebuilding them elsewhere would run them twice."""

    code = "migration.source_up"


class MoveRefusedOnSource(Conflict):
    """The source's own inventory refuses to hand the server's allocations to the move (a
    min/max/step rule, or a class no longer there): no destination can help."""

    code = "migration.source_refused"


def held_allocations(*, consumer_uuid: UUID | str) -> tuple[int | None, Allocations]:
    """``(generation, {provider uuid: {class: amount}})`` of a consumer, read in one statement
    so the two agree; ``(None, {})`` when it holds nothing (a consumer left with no allocations
    is deleted by every allocation write)."""
    rows = Allocation.objects.filter(consumer__uuid=consumer_uuid).values_list(
        "consumer__generation", "resource_provider__uuid", "resource_class__name", "used"
    )
    generation: int | None = None
    held: Allocations = {}
    for row_generation, provider_uuid, class_name, used in rows:
        generation = row_generation
        held.setdefault(str(provider_uuid), {})[class_name] = used
    if not held:
        generation = (
            Consumer.objects.filter(uuid=consumer_uuid).values_list("generation", flat=True).first()
        )
    return generation, held


def _with_fresh_transactions(step: Callable[[], T]) -> T:
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


def shared_pools(
    *, source_allocations: Mapping[str, Any] | None, dest_allocations: Mapping[str, Any] | None
) -> set[str]:
    """The sharing providers (pools) both sides of a move take from: the server keeps them."""
    both = set(source_allocations or {}) & set(dest_allocations or {})
    return sharing_provider_uuids(uuids=both)


def migration_holdings(
    *, held: Allocations, dest_allocations: Mapping[str, Mapping[str, int]]
) -> Allocations:
    """What the migration consumer holds during a move: the server's source allocations, but
    on a pool both sides share only what the destination's amount does not cover (a resize
    that shrinks it), since the server keeps its pool allocation."""
    pools = shared_pools(source_allocations=held, dest_allocations=dest_allocations)
    holdings = {}
    for provider_uuid, resources in held.items():
        if provider_uuid in pools:
            kept = dest_allocations[provider_uuid]
            resources = {
                name: amount - kept.get(name, 0)
                for name, amount in resources.items()
                if amount > kept.get(name, 0)
            }
        if resources:
            holdings[provider_uuid] = resources
    return holdings


# --- starting a move --------------------------------------------------------------------------


def _check_movable(server: Server, kind: str, flavor: Flavor, target_host: str | None) -> None:
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
    if kind == Migration.Kind.EVACUATE and not host_is_down(root_provider_id=source.root_id):
        raise SourceUp(
            f"Host {source.name} is up (neither forced down nor stale): evacuate only from a "
            "host that is down; force it down first (forced_down) if it is."
        )


def _claimable(host: HostState) -> Allocations:
    """The allocations a move claims on ``host``; ClaimFailed when its tree changed since the
    pass read it (every candidate stale)."""
    allocations = first_allocations(host=host)
    if allocations is None:
        raise ClaimFailed(f"The tree of {host.name} changed since it was read.")
    return allocations


def server_move(
    *, server: Server, kind: str, flavor: Flavor | None = None, target_host: str | None = None
) -> Migration:
    """Move ``server``: record a Migration, schedule a destination for ``flavor`` (a resize) or
    the server's own flavor, and move the allocations in one write. Returns the Migration
    (``migrating``). No host: the Migration ends ``error`` and NoValidHost is raised."""
    Kind = Migration.Kind
    # Every move but a resize schedules the flavor the server was booted with, not the row's
    # present extra specs.
    flavor = flavor or server_flavor(server)
    _check_movable(server, kind, flavor, target_host)
    source = server.host
    _generation, held = held_allocations(consumer_uuid=server.uuid)
    if not held:
        raise NothingToMove(f"Server {server.uuid} holds no allocations to move.")
    hints = dict(server.scheduler_hints or {})
    # The boot's forced host is not the move's (as Nova resets forced destinations): the
    # move's own target, if any, replaces it.
    hints.pop("target_host", None)
    if target_host:
        hints["target_host"] = target_host
    # Built before anything is recorded: an unknown target host is a 400 that leaves no trace.
    group = server_group_of(server=server)
    spec = scheduling_spec(
        flavor=flavor,
        project_id=server.project_id,
        user_id=server.user_id,
        hints=hints,
        availability_zone=server.requested_availability_zone,
        group=group,
        moving_server=server.uuid,
        requested_resources=server.requested_resources or (),
    )
    migration = Migration.objects.create(
        server=server,
        server_uuid=server.uuid,
        kind=kind,
        source=source,
        old_flavor_id=server.flavor_id,
        new_flavor_id=flavor.pk,
        old_flavor_snapshot=server.flavor_snapshot or flavor_snapshot(server.flavor),
        new_flavor_snapshot=flavor_snapshot(flavor),
        source_allocations=held,
        project_id=server.project_id,
        user_id=server.user_id,
        lease_started_at=timezone.now(),
    )
    same_host_allowed = kind == Kind.RESIZE and settings.PLACEMENT_RESIZE_SAME_HOST
    tries = max(1, settings.PLACEMENT_SCHEDULER_MAX_ATTEMPTS)
    # First the hosts that share the server's pools, asked without the pool's amounts (the
    # server keeps its pool allocation: the move takes nothing more of it), then any host.
    passes: list[tuple[SchedulingSpec, Allocations]] = [(spec, {})]
    within = spec_within_pools(spec=spec, held=held)
    if within is not None:
        passes.insert(0, within)

    def accepts(host: HostState) -> bool:
        return (same_host_allowed or host.uuid != str(source.uuid)) and (
            not target_host or target_host in (host.name, host.uuid)
        )

    selection = None
    try:
        moved, selection = _move_to_first_fit(migration, passes, group, accepts, tries)
        if moved:
            migration.refresh_from_db()
            if kind == Kind.EVACUATE:
                _disable_evacuated(source, server)
            return migration
    except (Conflict, Unavailable) as exc:  # a refusal, a failed plugin, the time budget
        _mark_error(migration.pk, exc.detail)
        raise
    detail = f"No valid host was found to {kind} server {server.uuid}."
    _mark_error(migration.pk, detail)
    raise NoValidHost(
        detail, explain=explain(spec=spec, selection=selection) if selection else None
    )


def _move_to_first_fit(
    migration: Migration,
    passes: Sequence[tuple[SchedulingSpec, Allocations]],
    group: ServerGroup | None,
    accepts: Callable[[HostState], bool],
    tries: int,
) -> tuple[bool, Selection | None]:
    """Schedule each pass (a spec and the amounts the server keeps) and move to the first
    host ``accepts`` whose claim succeeds. A member of a server group moves under the group's
    lock, as boots into it place. Returns whether it moved and the last selection."""
    selection = None
    with group_locked(group=group) as locked:
        for pass_spec, kept in passes:
            pass_spec.group = locked
            for _round in range(SELECTION_ROUNDS):
                read_group_hosts(spec=pass_spec)
                selection = select_hosts(spec=pass_spec, limit=max_placement_results())
                order = [w for w in selection.attempt_order() if accepts(w.host)]
                if not order and selection.limited:
                    # The bound cut the read: the hosts beyond it are judged before giving up.
                    selection = select_hosts(spec=pass_spec)
                    order = [w for w in selection.attempt_order() if accepts(w.host)]
                if not order:
                    break
                if _claim_first(migration, order[:tries], kept, locked):
                    return True, selection
    return False, selection


def _claim_first(
    migration: Migration,
    weighed_hosts: Sequence[WeighedHost],
    kept: Allocations,
    group: ServerGroup | None,
) -> bool:
    for weighed in weighed_hosts:

        def move(w: WeighedHost = weighed) -> None:
            _move_to(migration.pk, w.host, {**_claimable(w.host), **kept}, group=group)

        try:
            _with_fresh_transactions(move)
        except ClaimFailed as exc:
            logger.info("Move to %s failed (%s); next host", weighed.host.name, exc)
            continue
        return True
    return False


def _disable_evacuated(source: ResourceProvider, server: Server) -> None:
    """Once a server left it, nothing else may be scheduled on the down source until an
    operator says so. A failed evacuation leaves the host as it was."""
    with contextlib.suppress(NotFound):  # a host without a report has nothing to disable
        compute_node_disable(
            root_provider_id=source.id, reason=f"evacuated: server {server.uuid} moved off it"
        )


def _mark_error(migration_pk: int, detail: str) -> None:
    Migration.objects.filter(pk=migration_pk, status=Migration.Status.PRE_MIGRATING).update(
        status=Migration.Status.ERROR, error=detail, updated_at=timezone.now()
    )


def _move_to(
    migration_pk: int,
    host: HostState,
    dest_allocations: Allocations,
    group: ServerGroup | None = None,
) -> None:
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
        generation, held = held_allocations(consumer_uuid=server.uuid)
        if not held:
            raise NothingToMove(f"Server {server.uuid} holds no allocations to move.")
        try:
            group_admit(group=group, host_uuid=host.uuid, server=server)
        except GroupPolicyViolated as exc:
            raise ClaimFailed(exc.detail) from None
        try:
            allocations_replace(
                consumers=[
                    ConsumerAllocationWrite(
                        consumer_uuid=str(migration.uuid),
                        allocations=migration_holdings(
                            held=held, dest_allocations=dest_allocations
                        ),
                        project_id=server.project_id,
                        user_id=server.user_id,
                        generation=None,
                        consumer_type=MIGRATION_CONSUMER_TYPE,
                        assign_devices=True,
                    ),
                    ConsumerAllocationWrite(
                        consumer_uuid=str(server.uuid),
                        allocations=dest_allocations,
                        project_id=server.project_id,
                        user_id=server.user_id,
                        generation=generation,
                        consumer_type=INSTANCE_CONSUMER_TYPE,
                        assign_devices=True,
                    ),
                ]
            )
            claim_checked([dest_allocations])  # the destination's reservation, host-wide
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
        migration.lease_started_at = now
        migration.save()
        _server_placed(
            server,
            host_id=host.id,
            allocations=dest_allocations,
            flavor_id=migration.new_flavor_id,
            flavor_snapshot=migration.new_flavor_snapshot,
            availability_zone=host.availability_zone,
        )


# --- settling a move --------------------------------------------------------------------------

CONFIRMABLE = (Migration.Status.MIGRATING, Migration.Status.FINISHED)
REVERTIBLE = (Migration.Status.PRE_MIGRATING, Migration.Status.MIGRATING, Migration.Status.FINISHED)
FAILABLE = (Migration.Status.PRE_MIGRATING, Migration.Status.MIGRATING)


@dataclass(frozen=True)
class Settlement:
    """How a move may end: from which statuses (``allowed``), into which ``status``, and
    whether the server goes back to its source (``revert``) or keeps its destination;
    ``refused_kinds``: the kinds of move it is no step of."""

    verb: str
    allowed: Collection[str]
    status: str
    revert: bool
    refused_kinds: Collection[str] = ()


# A live migration is finished (it completes), never confirmed, as in Nova: there is no resize
# to confirm, and confirming one still migrating would free its source under a running guest.
CONFIRM = Settlement(
    "confirm",
    CONFIRMABLE,
    Migration.Status.CONFIRMED,
    revert=False,
    refused_kinds=(Migration.Kind.LIVE_MIGRATE,),
)
REVERT = Settlement("revert", REVERTIBLE, Migration.Status.REVERTED, revert=True)
FAIL = Settlement("fail", FAILABLE, Migration.Status.ERROR, revert=True)
ABANDON = Settlement("abandon", REVERTIBLE, Migration.Status.ERROR, revert=False)
# A live migration's end: the guest runs on the destination, so the source is freed at once
# (as Nova's post-live-migration), with nothing left to confirm or revert.
COMPLETE = Settlement(
    "finish", (Migration.Status.MIGRATING,), Migration.Status.COMPLETED, revert=False
)


def migration_steps(*, migration: Migration) -> tuple[str, ...]:
    """What an operator may do to ``migration`` as it is now, of ``finish``, ``confirm`` and
    ``revert``: the steps the services below would take rather than refuse."""
    steps = []
    if migration.status == Migration.Status.MIGRATING:
        steps.append("finish")
    for settlement in (CONFIRM, REVERT):
        if migration.status in settlement.allowed and migration.kind not in (
            settlement.refused_kinds
        ):
            steps.append(settlement.verb)
    return tuple(steps)


def migration_finish(*, migration: Migration, generation: Generation = ...) -> Migration:
    """The move is done. A live migration frees its source and ends ``completed``; any other
    waits for a confirm or a revert (``migrating`` -> ``finished``), its lease started again."""
    if migration.kind == Migration.Kind.LIVE_MIGRATE:
        return _settle(migration, COMPLETE, generation=generation)
    with transaction.atomic():
        locked = Migration.objects.select_for_update().get(pk=migration.pk)
        if locked.status != Migration.Status.MIGRATING:
            raise InvalidMigrationState(
                f"Migration {locked.uuid} is {locked.status}; only a migrating one can finish."
            )
        now = timezone.now()
        locked.status = Migration.Status.FINISHED
        locked.finished_at = now
        locked.lease_started_at = now
        locked.save()
    return locked


def migration_confirm(
    *, migration: Migration, generation: Generation = ..., record: dict[str, Any] | None = None
) -> Migration:
    """Keep the destination: the migration consumer's allocations go. ``generation``: the
    migration consumer generation the caller saw (default: read now)."""
    return _settle(migration, CONFIRM, generation=generation, record=record)


def migration_revert(
    *, migration: Migration, generation: Generation = ..., record: dict[str, Any] | None = None
) -> Migration:
    """Go back: the server's consumer gets the source allocations back from the migration
    consumer, and the destination is freed, in one write."""
    return _settle(migration, REVERT, generation=generation, record=record)


def migration_fail(
    *, migration: Migration, reason: str = "", record: dict[str, Any] | None = None
) -> Migration:
    """A failure while migrating: the revert, leaving the migration ``error``."""
    record = record or {}
    record.setdefault("action", LifecycleRecord.Action.FAILED_REVERTED)
    record.setdefault("origin", "api")
    record.setdefault("detail", reason or "the move failed")
    return _settle(migration, FAIL, record=record, error=reason or "the move failed")


def migration_abandon(*, migration: Migration, record: dict[str, Any] | None = None) -> Migration:
    """A move whose server is gone: free what the migration consumer holds, ``error``."""
    return _settle(
        migration, ABANDON, record=record, error="the server was deleted during the move"
    )


def _settle(
    migration: Migration,
    settlement: Settlement,
    *,
    generation: Generation = ...,
    record: dict[str, Any] | None = None,
    error: str = "",
) -> Migration:
    """End ``migration`` as ``settlement`` says, in one transaction; a concurrent update
    runs it again from scratch."""
    return _with_fresh_transactions(
        lambda: _settle_once(
            migration.pk, settlement, generation=generation, record=record, error=error
        )
    )


def _settle_once(
    migration_pk: int,
    settlement: Settlement,
    *,
    generation: Generation,
    record: dict[str, Any] | None,
    error: str,
) -> Migration:
    with transaction.atomic():
        server, migration = _locked_for(migration_pk, settlement)
        current, held = held_allocations(consumer_uuid=migration.uuid)
        if generation is not ... and generation != current:
            raise Conflict(
                f"consumer generation conflict - expected {generation} but got {current}",
                code="migration.generation_conflict",
            )
        consumers = []
        if current is not None:
            consumers.append(
                ConsumerAllocationWrite(
                    consumer_uuid=str(migration.uuid),
                    allocations={},
                    project_id=migration.project_id,
                    user_id=migration.user_id,
                    generation=current,
                    consumer_type=MIGRATION_CONSUMER_TYPE,
                    assign_devices=True,
                )
            )
        restored = None
        moved = migration.status != Migration.Status.PRE_MIGRATING
        if settlement.revert and moved:
            assert server is not None  # _locked_for refuses a revert without one
            restored = _restored(migration, held)
            consumers.append(_server_consumer(server, restored))
        if consumers:
            allocations_replace(consumers=consumers)
        now = timezone.now()
        migration.status = settlement.status
        migration.finished_at = migration.finished_at or now
        if error:
            migration.error = error
        migration.save()
        if restored is not None:
            assert server is not None
            _back_to_source(server, migration, restored)
        if record:
            _record_settlement(migration, record, held)
    return migration


def _locked_for(migration_pk: int, settlement: Settlement) -> tuple[Server | None, Migration]:
    """The move's server (None when it was deleted) and migration, row-locked in that order;
    InvalidMigrationState when ``settlement`` is no step of the move as it is now."""
    server_pk = Migration.objects.values_list("server_id", flat=True).get(pk=migration_pk)
    server = Server.objects.select_for_update().filter(pk=server_pk).first()
    migration = Migration.objects.select_for_update().get(pk=migration_pk)
    if migration.status not in settlement.allowed:
        raise InvalidMigrationState(
            f"Migration {migration.uuid} is {migration.status}; it cannot {settlement.verb}."
        )
    if migration.kind in settlement.refused_kinds:
        raise InvalidMigrationState(
            f"Migration {migration.uuid} is a {migration.kind}; it cannot "
            f"{settlement.verb} (a live migration is finished)."
        )
    if settlement.revert and server is None:
        raise InvalidMigrationState(f"Migration {migration.uuid} has no server to revert.")
    return server, migration


def _restored(migration: Migration, held: Allocations) -> Allocations:
    """What a revert gives the server back: what the migration consumer holds now (if
    something freed it already, the recorded source allocations, claimed again with their
    capacity checked), and the pools the server kept through the move at their source
    amounts (what the migration consumer held of them is freed in the same write)."""
    restored = dict(held or migration.source_allocations)
    for pool in shared_pools(
        source_allocations=migration.source_allocations,
        dest_allocations=migration.dest_allocations,
    ):
        restored[pool] = migration.source_allocations[pool]
    return restored


def _server_consumer(server: Server, allocations: Allocations) -> ConsumerAllocationWrite:
    """The server's consumer holding ``allocations``, at the generation it has now."""
    server_generation, _server_held = held_allocations(consumer_uuid=server.uuid)
    return ConsumerAllocationWrite(
        consumer_uuid=str(server.uuid),
        allocations=allocations,
        project_id=server.project_id,
        user_id=server.user_id,
        generation=server_generation,
        consumer_type=INSTANCE_CONSUMER_TYPE,
        assign_devices=True,
    )


def _back_to_source(server: Server, migration: Migration, restored: Allocations) -> None:
    """The reverted server's record: on its source, with its old flavor."""
    _server_placed(
        server,
        host_id=migration.source_id,
        allocations=restored,
        flavor_id=migration.old_flavor_id,
        flavor_snapshot=migration.old_flavor_snapshot,
        availability_zone=availability_zone_of(provider_id=migration.source_id),
    )


def _server_placed(
    server: Server,
    *,
    host_id: int,
    allocations: Allocations,
    flavor_id: int | None,
    flavor_snapshot: dict,
    availability_zone: str | None,
) -> None:
    """The server's record on ``host_id`` with that flavor and those allocations (a move
    finished on its destination, or reverted to its source); its zone is the host's, when
    the host is in one."""
    server.host_id = host_id
    server.allocations = allocations
    server.flavor_id = flavor_id
    server.flavor_snapshot = flavor_snapshot
    server.availability_zone = availability_zone or server.availability_zone
    server.save(
        update_fields=[
            "host",
            "allocations",
            "flavor",
            "flavor_snapshot",
            "availability_zone",
            "updated_at",
        ]
    )


def _record_settlement(migration: Migration, record: Mapping[str, Any], held: Allocations) -> None:
    LifecycleRecord.objects.create(
        run=record.get("run") or migration.uuid,
        origin=record.get("origin", "task"),
        action=record["action"],
        migration=migration,
        consumer_uuid=migration.uuid,
        allocations=held,
        detail=record.get("detail", ""),
    )
