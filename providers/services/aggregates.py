"""Aggregate writes: the set of aggregates a provider is a member of.

Aggregates are known only by uuid and are created the first time a provider
joins them; they are never deleted here (another provider may join later).
"""

import uuid as uuidlib
from collections.abc import Iterable

from django.db import transaction

from ..models import Aggregate, ResourceProvider, ResourceProviderAggregate
from .generations import bump_generation, check_generation, provider_for_update
from .traits import PROVIDER_GENERATION_CHANGED


def aggregate_ids(*, uuids: Iterable[uuidlib.UUID]) -> dict[uuidlib.UUID, int]:
    """``{uuid: id}`` for these aggregate uuids, creating the missing ones."""
    # ON CONFLICT DO NOTHING: a concurrent writer creating the same aggregate is
    # waited for instead of failing the transaction.
    wanted = list(uuids)
    Aggregate.objects.bulk_create([Aggregate(uuid=u) for u in wanted], ignore_conflicts=True)
    return dict(Aggregate.objects.filter(uuid__in=wanted).values_list("uuid", "id"))


def provider_aggregates_set(
    *,
    provider_uuid: str | uuidlib.UUID,
    aggregates: Iterable[str | uuidlib.UUID],
    generation: int | None = None,
) -> tuple[ResourceProvider, list[str]]:
    """Make a provider a member of exactly ``aggregates``; returns ``(provider, uuids)``.

    With a ``generation`` (microversion 1.19 on) a stale one is a 409
    ``placement.concurrent_update`` and the provider's generation is bumped;
    without one (before 1.19) Placement neither checks nor bumps it. The
    provider row is locked either way. ``uuids`` are the normalised aggregate
    uuids in the order given.
    """
    wanted = list(dict.fromkeys(uuidlib.UUID(str(u)) for u in aggregates))
    with transaction.atomic():
        provider = provider_for_update(uuid=provider_uuid)
        if generation is not None:
            check_generation(
                provider=provider, generation=generation, message=PROVIDER_GENERATION_CHANGED
            )
        ids = aggregate_ids(uuids=wanted)
        links = ResourceProviderAggregate.objects.filter(resource_provider=provider)
        current = set(links.values_list("aggregate_id", flat=True))
        target = [ids[u] for u in wanted]
        links.exclude(aggregate_id__in=target).delete()
        ResourceProviderAggregate.objects.bulk_create(
            [
                ResourceProviderAggregate(resource_provider=provider, aggregate_id=aggregate_id)
                for aggregate_id in target
                if aggregate_id not in current
            ]
        )
        if generation is not None:
            bump_generation(provider=provider)
        return provider, [str(u) for u in wanted]


def aggregate_ensure(*, uuid: str | uuidlib.UUID) -> Aggregate:
    """The aggregate of ``uuid``, created when Placement does not know it yet (membership
    stays ``PUT /resource_providers/{uuid}/aggregates``'s)."""
    named = uuidlib.UUID(str(uuid))
    aggregate_id = aggregate_ids(uuids=[named])[named]
    return Aggregate.objects.get(pk=aggregate_id)
