"""Capacity and usage over time, and the changes syncs made: what the history charts draw."""

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime, timedelta

from django.db.models import Sum
from django.utils import timezone

from ..models import InventoryChange, ResourceProvider, UsageSample


def usage_series(
    *, provider_ids: Iterable[int] | None = None, days: int = 7, now: datetime | None = None
) -> dict[str, list[tuple[datetime, int, int]]]:
    """``{class name: [(sampled_at, capacity, used), ...]}`` summed per sample time.

    Over ``provider_ids`` (a host's tree) or, with None, the whole cloud.
    """
    since = (now or timezone.now()) - timedelta(days=days)
    samples = UsageSample.objects.filter(sampled_at__gte=since)
    if provider_ids is not None:
        samples = samples.filter(provider_id__in=list(provider_ids))
    rows = (
        samples.values("resource_class__name", "sampled_at")
        .annotate(capacity=Sum("capacity"), used=Sum("used"))
        .order_by("resource_class__name", "sampled_at")
        .values_list("resource_class__name", "sampled_at", "capacity", "used")
    )
    series: defaultdict[str, list[tuple[datetime, int, int]]] = defaultdict(list)
    for name, sampled_at, capacity, used in rows:
        series[name].append((sampled_at, capacity, used))
    return dict(series)


def recent_changes(*, provider_ids: Iterable[int], limit: int = 20) -> list[InventoryChange]:
    """The latest inventory changes syncs made on these providers, newest first."""
    return list(
        InventoryChange.objects.filter(provider_id__in=list(provider_ids))
        .select_related("provider", "resource_class")
        .order_by("-changed_at", "-id")[:limit]
    )


def history_provider_ids(*, provider: ResourceProvider) -> list[int]:
    """A host's whole tree for its root provider; just the provider for any other."""
    if provider.root_id == provider.id:
        return list(
            ResourceProvider.objects.filter(root_id=provider.id).values_list("id", flat=True)
        )
    return [provider.id]
