"""Reads of moves for the dashboard's Migrations page: moves in flight, what migration
consumers hold per host, stuck ones, and the cleanup and audit history. A fixed number of
queries whatever the number of moves."""

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from django.db.models import Count, Sum
from django.utils import timezone

from allocations.models import Allocation

from ..models import LifecycleRecord, Migration

SHOWN = 100


@dataclass
class HostHeld:
    host: str
    uuid: str
    resources: list[tuple[str, int]]  # [(class, amount)]


@dataclass
class MigrationsOverview:
    in_flight: list[Migration]  # expired ones flagged ``.expired``
    in_flight_count: int
    expired_count: int
    held: list[HostHeld]
    leftovers: int  # finished migrations not checked by the cleanup yet
    history: list[LifecycleRecord]
    counts: dict[str, int]  # status -> number of migrations


def migrations_overview(
    *, now: datetime | None = None, history_action: str | None = None
) -> MigrationsOverview:
    now = now or timezone.now()
    in_flight_qs = Migration.objects.filter(status__in=Migration.IN_FLIGHT)
    in_flight = list(
        in_flight_qs.select_related(
            "server", "source", "dest", "old_flavor", "new_flavor"
        ).order_by("lease_started_at", "id")[:SHOWN]
    )
    for migration in in_flight:
        migration.expired = migration.lease_expires_at < now
    counts = dict(
        Migration.objects.order_by()
        .values_list("status")
        .annotate(n=Count("id"))
        .values_list("status", "n")
    )
    history = LifecycleRecord.objects.select_related("migration__server")
    if history_action:
        history = history.filter(action=history_action)
    return MigrationsOverview(
        in_flight=in_flight,
        in_flight_count=sum(counts.get(s, 0) for s in Migration.IN_FLIGHT),
        expired_count=in_flight_qs.filter(**Migration.lease_started_before(now)).count(),
        held=_held_per_host(),
        leftovers=Migration.objects.filter(status__in=Migration.FINAL, cleaned_at=None).count(),
        history=list(history[:SHOWN]),
        counts=counts,
    )


def _held_per_host() -> list[HostHeld]:
    rows = (
        Allocation.objects.filter(consumer__consumer_type__name="MIGRATION")
        .order_by()
        .values(
            "resource_provider__root__name",
            "resource_provider__root__uuid",
            "resource_class__name",
        )
        .annotate(used=Sum("used"))
        .order_by("resource_provider__root__name", "resource_class__name")
    )
    hosts: dict[str, HostHeld] = {}
    for row in rows:
        name = row["resource_provider__root__name"]
        entry = hosts.setdefault(
            name, HostHeld(name, str(row["resource_provider__root__uuid"]), [])
        )
        entry.resources.append((row["resource_class__name"], row["used"]))
    return list(hosts.values())


def migration_by_uuid(*, uuid: UUID | str) -> Migration | None:
    """The migration ``uuid`` with its server, or None."""
    return Migration.objects.select_related("server").filter(uuid=uuid).first()
