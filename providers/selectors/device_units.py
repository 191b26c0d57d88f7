"""Reads about a host's device units: every unit of its tree's devices and who holds it."""

from django.db.models import Q

from ..allocations_port import port
from ..models import DeviceUnit


def host_device_units(*, root_provider_id: int) -> list[dict[str, str | None]]:
    """``[{"provider", "provider_name", "resource_class", "address", "parent_address",
    "mdev_type", "consumer"}]`` of every unit on the tree of ``root_provider_id``, by provider
    name and address; ``consumer`` is the uuid of the consumer assigned it, or None. Two
    queries, however many units."""
    rows = list(
        DeviceUnit.objects.filter(
            Q(provider__root_id=root_provider_id) | Q(provider_id=root_provider_id)
        )
        .order_by("provider__name", "address")
        .values_list(
            "id",
            "provider__uuid",
            "provider__name",
            "resource_class__name",
            "address",
            "parent_address",
            "mdev_type",
        )
    )
    holders = port().device_unit_holders(unit_ids=[row[0] for row in rows])
    return [
        {
            "provider": str(uuid),
            "provider_name": provider_name,
            "resource_class": name,
            "address": address,
            "parent_address": parent_address or None,
            "mdev_type": mdev_type or None,
            "consumer": holders.get(unit_id),
        }
        for unit_id, uuid, provider_name, name, address, parent_address, mdev_type in rows
    ]
