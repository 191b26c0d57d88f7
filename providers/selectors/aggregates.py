"""Reads about aggregates: which aggregates a provider is a member of.

A provider's aggregates are listed in the order they were associated with
it, so a list that was PUT comes back in the order it was sent.
"""

from collections import defaultdict
from collections.abc import Iterable

from ..models import ResourceProvider, ResourceProviderAggregate
from ..services.generations import provider_not_found


def aggregate_uuids_of_provider(*, provider: ResourceProvider | int) -> list[str]:
    """The aggregate uuids (strings) of one provider (a ResourceProvider or its id)."""
    provider_id = getattr(provider, "pk", provider)
    links = ResourceProviderAggregate.objects.filter(resource_provider_id=provider_id)
    return [str(u) for u in links.order_by("id").values_list("aggregate__uuid", flat=True)]


def aggregate_uuids_by_provider(*, provider_ids: Iterable[int]) -> dict[int, list[str]]:
    """``{provider_id: [aggregate uuid strings]}`` for many providers, in one query.

    Providers in no aggregate map to an empty list.
    """
    ids = list(provider_ids)
    found: defaultdict[int, list[str]] = defaultdict(list)
    rows = (
        ResourceProviderAggregate.objects.filter(resource_provider_id__in=ids)
        .order_by("id")
        .values_list("resource_provider_id", "aggregate__uuid")
    )
    for provider_id, aggregate_uuid in rows:
        found[provider_id].append(str(aggregate_uuid))
    return {provider_id: found.get(provider_id, []) for provider_id in ids}


def provider_aggregates(*, provider_uuid: str) -> tuple[ResourceProvider, list[str]]:
    """``(provider, its aggregate uuids)``; 404 for an unknown provider."""
    provider = ResourceProvider.objects.filter(uuid=provider_uuid).first()
    if provider is None:
        raise provider_not_found(uuid=provider_uuid)
    return provider, aggregate_uuids_of_provider(provider=provider)
