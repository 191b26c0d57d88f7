"""Reads about device assignments: which consumer holds which unit of which device."""

import uuid as uuidlib
from collections import defaultdict
from collections.abc import Iterable
from typing import NotRequired, TypedDict

from django.db.models import Count

from providers.models import DeviceUnit

from ..models import DeviceAssignment


class AssignedDevice(TypedDict):
    """One device unit assigned to a consumer, as the API and the pages show it."""

    resource_class: str
    provider: str  # its provider's uuid
    provider_name: str
    address: str
    parent_address: str | None
    mdev_type: NotRequired[str]  # a mediated device's type, only when it has one


def device_unit_holders(*, unit_ids: Iterable[int]) -> dict[int, str]:
    """``{unit id: consumer uuid}`` of the assigned units among ``unit_ids``."""
    return {
        unit_id: str(consumer_uuid)
        for unit_id, consumer_uuid in DeviceAssignment.objects.filter(
            unit_id__in=list(unit_ids)
        ).values_list("unit_id", "consumer__uuid")
    }


def devices_of_consumers(
    *, consumer_uuids: Iterable[str | uuidlib.UUID]
) -> dict[str, list[AssignedDevice]]:
    """``{consumer uuid: [{"resource_class", "provider", "address", "parent_address",
    "mdev_type"}, ...]}`` (ordered by provider name and address), in one query."""
    found: dict[str, list[AssignedDevice]] = defaultdict(list)
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
        device: AssignedDevice = {
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


def device_assignment_counts() -> dict[tuple[str, str, str], int]:
    """``{(consumer uuid, provider uuid, class name): units assigned}``, in one query."""
    rows = (
        DeviceAssignment.objects.values_list(
            "consumer__uuid", "unit__provider__uuid", "unit__resource_class__name"
        )
        .annotate(n=Count("id"))
        .order_by()
    )
    return {(str(c), str(p), name): n for c, p, name, n in rows}


def device_unit_keys() -> set[tuple[str, str]]:
    """``{(provider uuid, class name)}`` of every provider class that has device units."""
    return {
        (str(p), name)
        for p, name in DeviceUnit.objects.values_list(
            "provider__uuid", "resource_class__name"
        ).distinct()
    }
