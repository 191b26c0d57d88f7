"""Capacity history: usage samples per provider and class, and pruning old history.

Usage lives with allocations; ``providers`` does not import them. The caller
(allocations/tasks.py) hands the usage in as ``{(provider_id, class_id): used}``.
"""

from collections.abc import Mapping
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ..capacity import usable_units
from ..models import Inventory, InventoryChange, UsageSample


def usage_samples_record(
    *, usage: Mapping[tuple[int, int], int], now: datetime | None = None
) -> int:
    """One sample per inventory now: total, usable capacity and ``usage``; returns the count."""
    now = now or timezone.now()
    rows = Inventory.objects.values_list(
        "resource_provider_id", "resource_class_id", "total", "reserved", "allocation_ratio"
    ).order_by("resource_provider_id", "resource_class_id")
    samples = [
        UsageSample(
            provider_id=provider_id,
            resource_class_id=class_id,
            sampled_at=now,
            total=total,
            capacity=usable_units(total, reserved, ratio),
            used=usage.get((provider_id, class_id), 0),
        )
        for provider_id, class_id, total, reserved, ratio in rows.iterator(chunk_size=2000)
    ]
    with transaction.atomic():
        UsageSample.objects.bulk_create(samples, batch_size=1000)
    return len(samples)


def history_prune(*, now: datetime | None = None, days: int | None = None) -> int:
    """Delete samples and inventory changes older than the retention; returns their count."""
    days = settings.PLACEMENT_HISTORY_RETENTION_DAYS if days is None else days
    cutoff = (now or timezone.now()) - timedelta(days=days)
    samples, _ = UsageSample.objects.filter(sampled_at__lt=cutoff).delete()
    changes, _ = InventoryChange.objects.filter(changed_at__lt=cutoff).delete()
    return samples + changes
