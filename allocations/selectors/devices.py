"""Reads about device assignments: which consumer holds which unit of which device."""

from collections import defaultdict

from django.db.models import Count

from providers.models import DeviceUnit

from ..models import DeviceAssignment


def device_unit_holders(*, unit_ids):
    """``{unit id: consumer uuid}`` of the assigned units among ``unit_ids``."""
    return {
        unit_id: str(consumer_uuid)
        for unit_id, consumer_uuid in DeviceAssignment.objects.filter(
            unit_id__in=list(unit_ids)
        ).values_list("unit_id", "consumer__uuid")
    }


def devices_of_consumers(*, consumer_uuids):
    """``{consumer uuid: [{"resource_class", "provider", "address", "parent_address",
    "mdev_type"}, ...]}`` (ordered by provider name and address), in one query."""
    found = defaultdict(list)
    rows = (
        DeviceAssignment.objects.filter(consumer__uuid__in=[str(u) for u in consumer_uuids])
        .order_by("unit__provider__name", "unit__address")
        .values_list(
            "consumer__uuid",
            "unit__resource_class__name",
            "unit__provider__uuid",
            "unit__provider__name",
            "unit__address",
            "unit__parent_address",
            "unit__mdev_type",
        )
    )
    for consumer_uuid, name, provider, provider_name, address, parent, mdev_type in rows:
        device = {
            "resource_class": name,
            "provider": str(provider),
            "provider_name": provider_name,
            "address": address,
            "parent_address": parent or None,
        }
        if mdev_type:
            device["mdev_type"] = mdev_type
        found[str(consumer_uuid)].append(device)
    return dict(found)


def device_assignment_counts():
    """``{(consumer uuid, provider uuid, class name): units assigned}``, in one query."""
    rows = (
        DeviceAssignment.objects.values_list(
            "consumer__uuid", "unit__provider__uuid", "unit__resource_class__name"
        )
        .annotate(n=Count("id"))
        .order_by()
    )
    return {(str(c), str(p), name): n for c, p, name, n in rows}


def device_unit_keys():
    """``{(provider uuid, class name)}`` of every provider class that has device units."""
    return {
        (str(p), name)
        for p, name in DeviceUnit.objects.values_list(
            "provider__uuid", "resource_class__name"
        ).distinct()
    }
