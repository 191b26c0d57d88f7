"""The dashboard's reads about flavors: the list with server counts, "fits N more", and those
the Schedule page offers."""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, QuerySet

from placementsite.core.exceptions import DomainError

from ..models import AggregateMetadata, Flavor, Migration, Server
from .capacity import FlavorCapacity, flavor_capacity


def flavors_to_schedule() -> QuerySet:
    """The flavors the Schedule page offers: every enabled one, smallest first."""
    return Flavor.objects.filter(disabled=False).order_by("vcpus", "ram", "name")


def flavors_with_counts() -> QuerySet:
    return Flavor.objects.annotate(server_count=Count("servers")).order_by("vcpus", "ram", "name")


def flavors_to_count() -> QuerySet:
    """The flavors whose "fits N more" the overview shows: every enabled public one,
    smallest first."""
    return Flavor.objects.filter(disabled=False, is_public=True).order_by("vcpus", "ram", "name")


def flavor_by_pk(*, pk: int | str) -> Flavor | None:
    return Flavor.objects.filter(pk=pk).first()


def fits_of(*, flavor: Flavor) -> FlavorCapacity | None:
    """How many more instances of ``flavor`` the cloud takes now, as the scheduler's capacity
    counts them; None when the flavor names an unknown class or trait."""
    try:
        return flavor_capacity(flavor=flavor)
    except (DomainError, LookupError):
        return None


# --- names the dashboard shows for Placement's ids ------------------------------------------


@dataclass(frozen=True)
class AggregateName:
    name: str
    availability_zone: str
    metadata: dict[str, Any]


def aggregate_names(*, uuids: Iterable[str]) -> dict[str, AggregateName]:
    """``{str(aggregate uuid): AggregateName}`` of those among ``uuids`` that have a name, a
    zone or metadata (one query)."""
    rows = AggregateMetadata.objects.filter(aggregate__uuid__in=list(uuids)).values_list(
        "aggregate__uuid", "name", "availability_zone", "metadata"
    )
    return {
        str(uuid): AggregateName(name, zone, metadata or {})
        for uuid, name, zone, metadata in rows
        if name or zone or metadata
    }


@dataclass(frozen=True)
class ConsumerName:
    """What a consumer is to the scheduler: a server, or a move of one (``migration``)."""

    server_uuid: str
    server_name: str
    flavor: str
    project_id: str
    availability_zone: str
    migration: str = ""  # the move's kind, for a migration consumer


def consumer_names(*, uuids: Iterable[str]) -> dict[str, ConsumerName]:
    """``{str(consumer uuid): ConsumerName}`` of the servers and migrations among ``uuids``
    (two queries)."""
    uuids = list(uuids)
    found = {
        str(s.uuid): ConsumerName(
            str(s.uuid), s.name, s.flavor.name, s.project_id, s.availability_zone
        )
        for s in Server.objects.filter(uuid__in=uuids).select_related("flavor")
    }
    for m in Migration.objects.filter(uuid__in=uuids).select_related("server", "new_flavor"):
        found[str(m.uuid)] = ConsumerName(
            str(m.server_uuid),
            m.server.name if m.server is not None else "",
            m.new_flavor.name,
            m.project_id,
            m.server.availability_zone if m.server is not None else "",
            migration=m.kind,
        )
    return found
