"""Reads of a provider's inventory."""

from placementsite.core import uuids
from placementsite.core.exceptions import NotFound

from ..models import Inventory, ResourceProvider
from ..services.generations import provider_not_found


def _provider(provider_uuid: str) -> ResourceProvider:
    named = uuids.parse(provider_uuid)
    if named is None:
        raise provider_not_found(uuid=provider_uuid)
    provider = ResourceProvider.objects.filter(uuid=named).first()
    if provider is None:
        raise provider_not_found(uuid=provider_uuid)
    return provider


def inventories_for_provider(*, provider_uuid: str) -> tuple[ResourceProvider, list[Inventory]]:
    """The provider and its inventory rows (resource class loaded), by class id."""
    provider = _provider(provider_uuid)
    rows = list(
        Inventory.objects.filter(resource_provider=provider)
        .select_related("resource_class")
        .order_by("resource_class_id")
    )
    return provider, rows


def inventory_for_provider(
    *, provider_uuid: str, resource_class: str
) -> tuple[ResourceProvider, Inventory]:
    """The provider and its inventory of one class; 404 when it has none."""
    provider = _provider(provider_uuid)
    inventory = (
        Inventory.objects.filter(resource_provider=provider, resource_class__name=resource_class)
        .select_related("resource_class")
        .first()
    )
    if inventory is None:
        raise NotFound(f"No inventory of class {resource_class} for {provider_uuid}")
    return provider, inventory
