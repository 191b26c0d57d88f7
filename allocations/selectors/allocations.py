"""Reads about allocations and usages, as set-based queries.

Every selector answers in one or two queries however many providers,
consumers or resource classes are involved.
"""

import uuid as uuidlib
from collections.abc import Iterable

from django.db.models import Count, QuerySet, Sum

from placementsite.core import uuids
from providers.allocations_port import ConsumerHoldings
from providers.models import Inventory, ResourceProvider

from ..models import Allocation
from .usage import usage_subquery

# How Placement names the type of a consumer that has none.
UNKNOWN_CONSUMER_TYPE = "unknown"
ALL_CONSUMER_TYPES = "all"


def provider_by_uuid(*, uuid: str) -> ResourceProvider | None:
    """The provider with ``uuid`` or None (a malformed uuid finds none)."""
    canonical = uuids.parse(uuid)
    if canonical is None:
        return None
    return ResourceProvider.objects.filter(uuid=canonical).first()


def allocations_for_consumer(*, consumer_uuid: str) -> list[Allocation]:
    """A consumer's allocations with provider, class, consumer, project, user, type."""
    canonical = uuids.parse(consumer_uuid)
    if canonical is None:
        return []
    return list(
        Allocation.objects.filter(consumer__uuid=canonical)
        .select_related(
            "resource_provider",
            "resource_class",
            "consumer__project",
            "consumer__user",
            "consumer__consumer_type",
        )
        .order_by("id")
    )


def allocations_of_consumers(
    *, consumer_uuids: Iterable[str | uuidlib.UUID]
) -> dict[uuidlib.UUID, dict[str, dict[str, int]]]:
    """``{consumer uuid: {provider uuid: {class: used}}}`` of these consumers, those holding
    anything; one query."""
    held: dict[uuidlib.UUID, dict[str, dict[str, int]]] = {}
    rows = Allocation.objects.filter(consumer__uuid__in=list(consumer_uuids)).values_list(
        "consumer__uuid", "resource_provider__uuid", "resource_class__name", "used"
    )
    for consumer_uuid, provider_uuid, class_name, used in rows:
        holdings = held.setdefault(consumer_uuid, {})
        holdings.setdefault(str(provider_uuid), {})[class_name] = used
    return held


def allocations_for_provider(*, provider: ResourceProvider) -> list[Allocation]:
    """Allocations against ``provider`` with their consumer and class."""
    return list(
        Allocation.objects.filter(resource_provider=provider)
        .select_related("resource_class", "consumer")
        .order_by("id")
    )


def usages_for_provider(*, provider: ResourceProvider) -> dict[str, int]:
    """``{class name: used}`` for every class the provider has inventory of."""
    rows = (
        Inventory.objects.filter(resource_provider=provider)
        .annotate(usage=usage_subquery())
        .order_by("resource_class_id")
        .values_list("resource_class__name", "usage")
    )
    return dict(rows)


def _project_allocations(project_id: str, user_id: str | None = None) -> QuerySet:
    found = Allocation.objects.filter(consumer__project__external_id=project_id)
    if user_id:
        found = found.filter(consumer__user__external_id=user_id)
    return found


def usages_for_project(*, project_id: str, user_id: str | None = None) -> dict[str, int]:
    """``{class name: used}`` summed over the consumers of a project (and user)."""
    rows = (
        _project_allocations(project_id, user_id)
        .order_by()
        .values("resource_class__name")
        .annotate(total=Sum("used"))
        .values_list("resource_class__name", "total")
    )
    return dict(rows)


def usages_for_project_by_consumer_type(
    *, project_id: str, user_id: str | None = None, consumer_type: str | None = None
) -> dict[str, dict[str, int]]:
    """Usages per consumer type, each with a ``consumer_count``.

    ``consumer_type`` filters: a type name, ``"unknown"`` (consumers without
    a type) or ``"all"`` (every consumer, summed under ``"all"``); None gives
    one entry per type. Consumers are counted once however many classes they
    use. Two GROUP BY queries whose selected columns are exactly their
    grouping keys plus aggregates, so PostgreSQL accepts them.
    """
    found = _project_allocations(project_id, user_id)
    if consumer_type == UNKNOWN_CONSUMER_TYPE:
        found = found.filter(consumer__consumer_type__isnull=True)
    elif consumer_type and consumer_type != ALL_CONSUMER_TYPES:
        found = found.filter(consumer__consumer_type__name=consumer_type)

    def type_key(name: str | None) -> str:
        if consumer_type == ALL_CONSUMER_TYPES:
            return ALL_CONSUMER_TYPES
        return name or UNKNOWN_CONSUMER_TYPE

    group = [] if consumer_type == ALL_CONSUMER_TYPES else ["consumer__consumer_type__name"]
    distinct_consumers = Count("consumer_id", distinct=True)
    counts: list[tuple[str | None, int]]
    if group:
        counts = list(
            found.order_by()
            .values(*group)
            .annotate(consumers=distinct_consumers)
            .values_list(*group, "consumers")
        )
    else:
        counts = [("", found.aggregate(consumers=distinct_consumers)["consumers"])]
    result: dict[str, dict[str, int]] = {}
    for name, consumers in counts:
        if consumers:
            result[type_key(name)] = {"consumer_count": consumers}
    sums = (
        found.order_by()
        .values(*group, "resource_class__name")
        .annotate(total=Sum("used"))
        .values_list(*group, "resource_class__name", "total")
    )
    for row in sums:
        name = row[0] if group else ""
        rc_name, total = row[-2], row[-1]
        result.setdefault(type_key(name), {"consumer_count": 0})[rc_name] = total
    return result


def consumers_holding(*, provider_ids: Iterable[int]) -> list[ConsumerHoldings]:
    """Every consumer holding anything on these providers, with all it holds (on any
    provider) and its generation, in consumer uuid order; one query."""
    rows = (
        Allocation.objects.filter(
            consumer_id__in=Allocation.objects.filter(
                resource_provider_id__in=list(provider_ids)
            ).values("consumer_id")
        )
        .order_by("consumer__uuid", "resource_provider_id", "resource_class_id")
        .values_list(
            "consumer__uuid",
            "consumer__generation",
            "consumer__project__external_id",
            "consumer__user__external_id",
            "consumer__consumer_type__name",
            "resource_provider__uuid",
            "resource_class__name",
            "used",
        )
    )
    owners: dict[uuidlib.UUID, tuple[int, str, str, str | None]] = {}
    held: dict[uuidlib.UUID, dict[str, dict[str, int]]] = {}
    for consumer, generation, project, user, kind, provider, name, used in rows:
        owners.setdefault(consumer, (generation, project, user, kind))
        held.setdefault(consumer, {}).setdefault(str(provider), {})[name] = used
    return [
        ConsumerHoldings(str(consumer), generation, project, user, kind, held[consumer])
        for consumer, (generation, project, user, kind) in owners.items()
    ]
