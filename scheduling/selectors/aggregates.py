"""Reads of aggregates as requests name them: by uuid, name or availability zone."""

from collections.abc import Iterable

from placementsite.core import uuids
from providers.models import Aggregate

from ..models import AggregateMetadata


def aggregate_uuid(*, value: str) -> str | None:
    """The uuid (as a string) of the aggregate ``value`` names (its uuid or its name), or
    None when there is none."""
    parsed = uuids.parse(value)
    if parsed is not None and Aggregate.objects.filter(uuid=parsed).exists():
        return str(parsed)
    found = AggregateMetadata.objects.filter(name=value).values_list("aggregate__uuid", flat=True)
    first = found.first()
    return str(first) if first is not None else None


def zone_exists(*, value: str) -> bool:
    """Whether ``value`` names an availability zone as a server create may: a zone set on an
    aggregate, an aggregate's name or an aggregate's uuid."""
    return bool(
        AggregateMetadata.objects.filter(availability_zone=value).exists()
        or aggregate_uuid(value=value)
    )


def aggregate_uuids_named(*, names: Iterable[str]) -> dict[str, str]:
    """``{name: aggregate uuid}`` for the names among ``names`` an aggregate has (one read);
    what providers ask through :mod:`providers.aggregate_names` (a pool's members)."""
    rows = AggregateMetadata.objects.filter(name__in=list(names)).exclude(name="")
    return {name: str(uuid) for name, uuid in rows.values_list("name", "aggregate__uuid")}
