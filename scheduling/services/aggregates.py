"""The scheduling side of aggregates (names, availability zones, metadata), as Nova's host
aggregates keep them; which providers are members stays the Placement API's."""

import uuid as uuidlib
from collections.abc import Mapping
from typing import Any

from django.db import transaction

from placementsite.core.exceptions import DuplicateName
from providers.services.aggregates import aggregate_ensure

from ..models import AggregateMetadata


def _check_name(name: str, exclude: AggregateMetadata | None = None) -> None:
    if not name:
        return
    taken = AggregateMetadata.objects.filter(name=name)
    if exclude is not None:
        taken = taken.exclude(pk=exclude.pk)
    if taken.exists():
        raise DuplicateName(f"An aggregate named {name} exists already.")


def aggregate_metadata_create(
    *,
    name: str,
    uuid: uuidlib.UUID | str | None = None,
    availability_zone: str | None = "",
    metadata: Mapping[str, Any] | None = None,
) -> AggregateMetadata:
    """An aggregate's name, zone and metadata; the aggregate itself is created in Placement
    when its uuid is new (a new uuid when none is given)."""
    uuid = uuid or uuidlib.uuid4()
    with transaction.atomic():
        _check_name(name)
        aggregate = aggregate_ensure(uuid=uuid)
        if AggregateMetadata.objects.filter(aggregate=aggregate).exists():
            raise DuplicateName(f"Aggregate {uuid} has a name and metadata already.")
        return AggregateMetadata.objects.create(
            aggregate=aggregate,
            name=name,
            availability_zone=availability_zone or "",
            metadata=dict(metadata or {}),
        )


def aggregate_metadata_update(*, record: AggregateMetadata, **changes: Any) -> AggregateMetadata:
    """Change the name, zone or metadata given (a key left out keeps its value)."""
    with transaction.atomic():
        if "name" in changes:
            _check_name(changes["name"], exclude=record)
        for field in ("name", "availability_zone", "metadata"):
            if field in changes:
                setattr(record, field, changes[field] if changes[field] is not None else "")
        record.save()
        return record


def aggregate_metadata_delete(*, record: AggregateMetadata) -> None:
    """Forget the aggregate's name, zone and metadata (Placement keeps the aggregate)."""
    record.delete()
