"""Request bodies checked against their JSON schema, with Placement's message."""

import jsonschema

from placementsite import json_schema

from .errors import BadRequest


def validate_body(data, schema):
    """A request body checked against ``schema``; BadRequest with Placement's message."""
    try:
        json_schema.validate(data, schema, format_checker=json_schema.FORMAT_CHECKER)
    except jsonschema.ValidationError as exc:
        raise BadRequest(f"JSON does not validate: {exc}") from None
