"""JSON schemas of request bodies, and name checks shared by the views."""

from placementsite.core import json_schema

CUSTOM_NAME_PATTERN = r"^CUSTOM\_[A-Z0-9_]+$"

CUSTOM_NAME = {"type": "string", "pattern": CUSTOM_NAME_PATTERN, "maxLength": 255}

RESOURCE_CLASS_BODY = {
    "type": "object",
    "properties": {"name": CUSTOM_NAME},
    "required": ["name"],
    "additionalProperties": False,
}


def validate_custom_name(name):
    """Names in URLs (PUT /resource_classes/{name}, /traits/{name})."""
    json_schema.check(name, CUSTOM_NAME)
