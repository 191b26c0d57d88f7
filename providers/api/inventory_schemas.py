"""JSON schemas of the inventory request bodies (Placement's limits and keys)."""

import copy

from ..services.inventories import INVENTORY_RECORD, RESOURCE_CLASS_PATTERN

GENERATION = {"type": "integer"}

# PUT /resource_providers/{uuid}/inventories/{resource_class}
INVENTORY_UPDATE_BODY = copy.deepcopy(INVENTORY_RECORD)
INVENTORY_UPDATE_BODY["required"] = ["total", "resource_provider_generation"]

# POST /resource_providers/{uuid}/inventories (a generation may be sent; it is not checked)
INVENTORY_CREATE_BODY = copy.deepcopy(INVENTORY_RECORD)
INVENTORY_CREATE_BODY["properties"]["resource_class"] = {
    "type": "string",
    "pattern": RESOURCE_CLASS_PATTERN,
}
INVENTORY_CREATE_BODY["required"] = ["total", "resource_class"]

# PUT /resource_providers/{uuid}/inventories
INVENTORIES_REPLACE_BODY = {
    "type": "object",
    "properties": {
        "resource_provider_generation": GENERATION,
        "inventories": {
            "type": "object",
            # Keys that are no resource class name still get their record checked;
            # the service then refuses them as unknown resource classes.
            "additionalProperties": INVENTORY_RECORD,
        },
    },
    "required": ["resource_provider_generation", "inventories"],
    "additionalProperties": False,
}
