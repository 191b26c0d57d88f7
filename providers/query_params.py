"""Query-string and body schemas of the request language, shared by the provider endpoints,
allocation candidates and the flavors that speak it.

Which keys a request may carry at a microversion, and their JSON-schema checks. The values
are parsed into request groups by :mod:`providers.request_groups`.
"""

import functools

import jsonschema

from placementsite.core import json_schema, uuids
from providers.request_groups import suffix_pattern

# A format checker whose "uuid" is as lenient as Placement's (oslo's is_uuid_like).
FORMAT_CHECKER = jsonschema.FormatChecker()
FORMAT_CHECKER.checks("uuid")(uuids.is_uuid_like)

UUID = {"type": "string", "format": "uuid"}
STRING = {"type": "string"}


def schema_for(version, params):
    """A query-string schema: ``params`` is ``[(since_version, name, schema), ...]``."""
    return {
        "type": "object",
        "properties": {name: schema for since, name, schema in params if version >= since},
        "additionalProperties": False,
    }


def validate_query(query, schema):
    """Check the query string (last value of each key) against ``schema``."""
    json_schema.check(
        query.dict(), schema, format_checker=FORMAT_CHECKER, refusal=json_schema.QUERY_REFUSAL
    )


def validate_body(data, schema):
    """JSON body validation with the same lenient uuid format."""
    json_schema.check(data, schema, format_checker=FORMAT_CHECKER)


# --- allocation candidates: granular request groups and request-wide options

LIMIT = {"type": "string", "pattern": "^[1-9][0-9]*$"}
GROUP_POLICY = {"type": "string", "enum": ["none", "isolate"]}


def granular_schema(version, params, granular_params):
    """A query schema: ``params`` as in :func:`schema_for`, ``granular_params``
    ``[(since, prefix, schema), ...]`` repeated under every group suffix."""
    schema = schema_for(version, params)
    suffix = suffix_pattern(version)
    if suffix:
        schema["patternProperties"] = {
            # Placement's patterns (they appear in its error messages): the suffix optional.
            f"^{prefix}({suffix})?$": value
            for since, prefix, value in granular_params
            if version >= since
        }
    return schema


# (since, parameter, schema) of allocation candidates' unsuffixed and request-wide parameters.
CANDIDATES_PARAMETERS = [
    ((1, 10), "resources", STRING),
    ((1, 16), "limit", LIMIT),
    ((1, 17), "required", STRING),
    ((1, 21), "member_of", STRING),
    ((1, 25), "group_policy", GROUP_POLICY),
    ((1, 31), "in_tree", STRING),  # its uuid is checked by the parser, with its message
    ((1, 35), "root_required", STRING),
    ((1, 36), "same_subtree", STRING),
]
# (since, prefix, schema) of the parameters repeated per granular group.
CANDIDATES_GRANULAR_PARAMETERS = [
    ((1, 25), "resources", STRING),
    ((1, 25), "required", STRING),
    ((1, 25), "member_of", STRING),
    ((1, 31), "in_tree", STRING),
]


@functools.lru_cache(maxsize=64)
def candidates_query_schema(version):
    """The allocation candidates query-string schema of a microversion (a ``(major, minor)``
    tuple), built once."""
    schema = granular_schema(version, CANDIDATES_PARAMETERS, CANDIDATES_GRANULAR_PARAMETERS)
    if version < (1, 25):
        schema["required"] = ["resources"]
    return schema
