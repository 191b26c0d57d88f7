"""The migration cleanup: what finished moves left behind, and moves whose lease expired.

Finished migrations (``confirmed``, ``reverted``, ``error``) not yet checked are taken in
batches, each batch one transaction: the migration rows are locked with SKIP LOCKED (a second
cleanup worker takes other rows, a confirm in progress is left alone), then the migration
consumers are deleted with their leftover allocations (by the allocations' own service, in
its lock order), what they held recorded, and the rows marked cleaned.
A worker killed mid-batch rolls the batch back; the next run does it again, once.

Moves still in flight past their lease are reported, reverted or confirmed according to
``PLACEMENT_MIGRATION_EXPIRED_ACTION``, each through the same service the API calls. Two
cleanups may read the same expired moves: each move is acted on under its row lock, and the
one that finds it already reported or settled by the other leaves it out of its run.
"""

import logging
import uuid as uuidlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.utils import timezone

from allocations.selectors.allocations import allocations_of_consumers
from allocations.services.allocations import consumers_free
from placementsite.core.exceptions import Conflict

from ..models import LifecycleRecord, Migration
from .migrations import (
    InvalidMigrationState,
    migration_abandon,
    migration_confirm,
    migration_revert,
)

logger = logging.getLogger("placement.scheduler")

EXPIRED_ACTIONS = ("report", "revert", "confirm")


def expired_action() -> str:
    action = settings.PLACEMENT_MIGRATION_EXPIRED_ACTION
    if action not in EXPIRED_ACTIONS:
        raise ImproperlyConfigured(
            f"PLACEMENT_MIGRATION_EXPIRED_ACTION={action!r}: expected one of "
            + ", ".join(EXPIRED_ACTIONS)
        )
    return action


@dataclass
class CleanupResult:
    run: uuidlib.UUID
    dry_run: bool = False
    checked: int = 0  # finished migrations looked at
    freed_migrations: int = 0  # of which held allocations
    freed_allocations: int = 0
    # [(migration uuid, what was done)]
    expired: list[tuple[uuidlib.UUID, str]] = field(default_factory=list)
    pruned_records: int = 0


def migrations_cleanup(
    *,
    dry_run: bool = False,
    origin: str = "task",
    batch_size: int | None = None,
    now: datetime | None = None,
) -> CleanupResult:
    """One cleanup run; returns a CleanupResult. ``dry_run`` changes and records nothing."""
    action = expired_action()
    now = now or timezone.now()
    result = CleanupResult(run=uuidlib.uuid4(), dry_run=dry_run)
    batch_size = batch_size or settings.PLACEMENT_MIGRATION_CLEANUP_BATCH
    last_id: int | None = 0
    while last_id is not None:
        last_id = _clean_batch(result, after=last_id, size=batch_size, origin=origin, now=now)
    _expired(result, action=action, origin=origin, now=now)
    if not dry_run:
        result.pruned_records = _prune_history(now)
        if result.freed_migrations or result.expired:
            LifecycleRecord.objects.create(
                run=result.run,
                origin=origin,
                action=LifecycleRecord.Action.CLEANUP_RUN,
                detail=(
                    f"checked {result.checked} finished migrations, freed "
                    f"{result.freed_allocations} allocations of {result.freed_migrations}; "
                    f"{len(result.expired)} expired"
                ),
            )
    return result


def _clean_batch(
    result: CleanupResult, *, after: int, size: int, origin: str, now: datetime
) -> int | None:
    """One transaction over the next ``size`` unchecked finished migrations after id
    ``after``; returns the last id seen, None when there were none."""
    with transaction.atomic():
        batch = list(
            Migration.objects.select_for_update(skip_locked=True)
            .filter(status__in=Migration.FINAL, cleaned_at=None, id__gt=after)
            .order_by("id")
            .values_list("id", "uuid")[:size]
        )
        if not batch:
            return None
        by_uuid = {uuid: pk for pk, uuid in batch}
        result.checked += len(batch)
        if result.dry_run:
            held = allocations_of_consumers(consumer_uuids=list(by_uuid))
        else:
            held = consumers_free(consumer_uuids=list(by_uuid))
        result.freed_migrations += len(held)
        result.freed_allocations += sum(
            len(resources) for holdings in held.values() for resources in holdings.values()
        )
        if result.dry_run:
            return batch[-1][0]
        Migration.objects.filter(id__in=[pk for pk, _uuid in batch]).update(cleaned_at=now)
        LifecycleRecord.objects.bulk_create(
            [
                LifecycleRecord(
                    run=result.run,
                    origin=origin,
                    action=LifecycleRecord.Action.FREED,
                    migration_id=by_uuid[consumer_uuid],
                    consumer_uuid=consumer_uuid,
                    allocations=allocations,
                    detail="left by a finished migration",
                )
                for consumer_uuid, allocations in held.items()
            ]
        )
        return batch[-1][0]


def _expired(result: CleanupResult, *, action: str, origin: str, now: datetime) -> None:
    """Moves past their lease, and moves whose server was deleted meanwhile (freed at once)."""
    expired = Migration.objects.filter(
        status__in=Migration.IN_FLIGHT, **Migration.lease_started_before(now)
    )
    if action == "report":
        # Reported once per lease: a lease renewed after the report is reported again.
        expired = expired.exclude(expiry_reported_at__gte=now - _lease())
    orphaned = Migration.objects.filter(status__in=Migration.IN_FLIGHT, server=None)
    for migration in (expired | orphaned).distinct().order_by("id").iterator():
        what = _expired_what(migration, action)
        if result.dry_run:
            result.expired.append((migration.uuid, what))
            continue
        record = {"run": result.run, "origin": origin}
        try:
            acted = _act_on_expired(migration, what, record, now)
        except InvalidMigrationState as exc:
            # Settled meanwhile (by another cleanup, or through the API): not this run's.
            logger.info("Expired migration %s: %s skipped: %s", migration.uuid, what, exc)
            continue
        except Conflict as exc:
            # The source is full again, or the like: say so.
            logger.warning("Expired migration %s: %s failed: %s", migration.uuid, what, exc)
            result.expired.append((migration.uuid, f"{what} failed: {exc.detail}"))
            continue
        if acted:
            result.expired.append((migration.uuid, what))


def _act_on_expired(migration: Migration, what: str, record: dict[str, Any], now: datetime) -> bool:
    """Do ``what`` to an expired move; False when another cleanup reported it first."""
    if what == "abandon":
        record.update(action=LifecycleRecord.Action.EXPIRED, detail="server gone")
        migration_abandon(migration=migration, record=record)
    elif what == "revert":
        record.update(action=LifecycleRecord.Action.EXPIRED_REVERTED)
        migration_revert(migration=migration, record=record)
    elif what == "confirm":
        record.update(action=LifecycleRecord.Action.EXPIRED_CONFIRMED)
        migration_confirm(migration=migration, record=record)
    else:
        return _report_expired(migration, record, now)
    return True


def _expired_what(migration: Migration, action: str) -> str:
    if migration.server_id is None:
        return "abandon"
    if action != "report" and migration.status == Migration.Status.PRE_MIGRATING:
        return "revert"  # nothing moved yet: there is nothing to confirm
    if migration.kind == Migration.Kind.LIVE_MIGRATE:
        # The guest may already run on the destination: neither putting its allocations back
        # on the source nor freeing it is safe without the operator.
        return "report"
    return action


def _report_expired(migration: Migration, record: dict[str, Any], now: datetime) -> bool:
    """Record an expired lease once: False when it is settled, or reported already for this
    lease (by another cleanup that held the row first)."""
    with transaction.atomic():
        locked = Migration.objects.select_for_update().get(pk=migration.pk)
        if locked.status not in Migration.IN_FLIGHT:
            return False
        reported = locked.expiry_reported_at
        if reported is not None and reported >= now - _lease():
            return False
        locked.expiry_reported_at = now
        locked.save(update_fields=["expiry_reported_at", "updated_at"])
        LifecycleRecord.objects.create(
            run=record["run"],
            origin=record["origin"],
            action=LifecycleRecord.Action.EXPIRED,
            migration=locked,
            consumer_uuid=locked.uuid,
            allocations=locked.source_allocations,
            detail=f"{locked.kind} {locked.status} since {locked.updated_at:%Y-%m-%d %H:%M:%S}, "
            f"lease expired {locked.lease_expires_at:%Y-%m-%d %H:%M:%S}",
        )
    return True


def _lease() -> timedelta:
    return timedelta(seconds=settings.PLACEMENT_MIGRATION_LEASE_SECONDS)


def _prune_history(now: datetime) -> int:
    keep = timedelta(days=settings.PLACEMENT_HISTORY_RETENTION_DAYS)
    deleted, _ = LifecycleRecord.objects.filter(created_at__lt=now - keep).delete()
    return deleted
