"""Capacity and usage over time, and the changes syncs made: what the history charts draw."""

from collections import defaultdict
from datetime import timedelta

from django.db.models import Sum
from django.utils import timezone

from ..models import InventoryChange, ResourceProvider, UsageSample


def usage_series(*, provider_ids=None, days=7, now=None):
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
    series = defaultdict(list)
    for name, sampled_at, capacity, used in rows:
        series[name].append((sampled_at, capacity, used))
    return dict(series)


def recent_changes(*, provider_ids, limit=20):
    """The latest inventory changes syncs made on these providers, newest first."""
    return list(
        InventoryChange.objects.filter(provider_id__in=list(provider_ids))
        .select_related("provider", "resource_class")
        .order_by("-changed_at", "-id")[:limit]
    )


def history_provider_ids(provider):
    """A host's whole tree for its root provider; just the provider for any other."""
    if provider.root_id == provider.id:
        return list(
            ResourceProvider.objects.filter(root_id=provider.id).values_list("id", flat=True)
        )
    return [provider.id]
