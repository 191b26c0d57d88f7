"""``/resource_providers/{uuid}/inventories`` and ``.../inventories/{resource_class}``."""

from django.utils.http import http_date

from placementsite.core.api.microversion import since
from placementsite.core.api.parsers import require_json
from placementsite.core.api.views import PlacementView, latest

from .. import policies
from ..selectors import inventories as selectors
from ..services import inventories as services
from .inventory_schemas import (
    INVENTORIES_REPLACE_BODY,
    INVENTORY_CREATE_BODY,
    INVENTORY_UPDATE_BODY,
)

GENERATION = "resource_provider_generation"


def reserved_may_equal_total(request):
    """Placement's capacity rule by microversion: from 1.26 ``reserved`` may equal ``total``."""
    return request.microversion >= (1, 26)


def inventory_repr(inventory):
    return {field: getattr(inventory, field) for field in services.FIELDS}


def inventories_repr(provider, rows):
    return {
        "inventories": {inv.resource_class.name: inventory_repr(inv) for inv in rows},
        GENERATION: provider.generation,
    }


def one_inventory_repr(provider, inventory):
    return {**inventory_repr(inventory), GENERATION: provider.generation}


def inventory_url(provider, resource_class):
    return f"/resource_providers/{provider.uuid}/inventories/{resource_class}"


def last_modified(rows):
    return latest(*(row.last_modified for row in rows))


class _InventoryView(PlacementView):
    def _write_headers(self, request, rows):
        """Placement also dates its inventory answers to writes, from 1.15."""
        if request.microversion < (1, 15):
            return {}
        return {
            "Last-Modified": http_date(last_modified(rows).timestamp()),
            "Cache-Control": "no-cache",
        }


class InventoryListView(_InventoryView):
    def get(self, request, uuid):
        self.authorize(request, policies.INVENTORIES_LIST)
        provider, rows = selectors.inventories_for_provider(provider_uuid=uuid)
        return self.respond(
            request, inventories_repr(provider, rows), last_modified=last_modified(rows)
        )

    def put(self, request, uuid):
        require_json(request)
        self.authorize(request, policies.INVENTORIES_UPDATE)
        data = self.json_body(request, INVENTORIES_REPLACE_BODY)
        provider, rows = services.inventories_replace(
            provider_uuid=uuid,
            generation=data[GENERATION],
            inventories={
                name: services.inventory_fields(record=record)
                for name, record in data["inventories"].items()
            },
            allow_reserved_equal_total=reserved_may_equal_total(request),
        )
        return self.respond(
            request, inventories_repr(provider, rows), headers=self._write_headers(request, rows)
        )

    def post(self, request, uuid):
        require_json(request)
        self.authorize(request, policies.INVENTORIES_CREATE)
        data = self.json_body(request, INVENTORY_CREATE_BODY)
        resource_class = data.pop("resource_class")
        data.pop(GENERATION, None)
        provider, inventory = services.inventory_create(
            provider_uuid=uuid,
            resource_class=resource_class,
            inventory=services.inventory_fields(record=data),
            allow_reserved_equal_total=reserved_may_equal_total(request),
        )
        headers = {"Location": inventory_url(provider, resource_class)}
        headers.update(self._write_headers(request, [inventory]))
        return self.respond(
            request, one_inventory_repr(provider, inventory), status=201, headers=headers
        )

    @since("1.5", status=405)
    def delete(self, request, uuid):
        self.authorize(request, policies.INVENTORIES_DELETE)
        services.inventories_delete(provider_uuid=uuid)
        return self.respond(request, status=204)


class InventoryDetailView(_InventoryView):
    def get(self, request, uuid, resource_class):
        self.authorize(request, policies.INVENTORIES_SHOW)
        provider, inventory = selectors.inventory_for_provider(
            provider_uuid=uuid, resource_class=resource_class
        )
        return self.respond(
            request,
            one_inventory_repr(provider, inventory),
            last_modified=inventory.last_modified,
        )

    def put(self, request, uuid, resource_class):
        require_json(request)
        self.authorize(request, policies.INVENTORIES_UPDATE)
        data = self.json_body(request, INVENTORY_UPDATE_BODY)
        generation = data.pop(GENERATION)
        provider, inventory = services.inventory_update(
            provider_uuid=uuid,
            resource_class=resource_class,
            generation=generation,
            inventory=services.inventory_fields(record=data),
            allow_reserved_equal_total=reserved_may_equal_total(request),
        )
        return self.respond(
            request,
            one_inventory_repr(provider, inventory),
            headers=self._write_headers(request, [inventory]),
        )

    def delete(self, request, uuid, resource_class):
        self.authorize(request, policies.INVENTORIES_DELETE)
        services.inventory_delete(provider_uuid=uuid, resource_class=resource_class)
        return self.respond(request, status=204)
