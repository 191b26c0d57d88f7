"""JSON schemas of the allocation, usage and reshaper requests, per microversion.

Built step by step the way the API reference describes the bodies changing:
a list of allocations (1.0), project and user required (1.8), a dict keyed
by provider (1.12), POST of several consumers (1.13), consumer generations
and empty allocations (1.28), ``mappings`` (1.34), ``consumer_type`` (1.38).
"""

import copy

from providers.api.inventory_schemas import INVENTORIES_REPLACE_BODY

UUID_KEY = r"^[0-9a-fA-F-]{36}$"
RESOURCE_CLASS_KEY = r"^[A-Z0-9_]+$"
CONSUMER_TYPE_PATTERN = r"^[A-Z0-9_]+$"
# Request group suffixes (1.33+), the keys of ``mappings``.
GROUP_SUFFIX_KEY = r"^[a-zA-Z0-9_-]{1,64}$"

EXTERNAL_ID = {"type": "string", "minLength": 1, "maxLength": 255}
GENERATION = {"type": ["integer", "null"]}

RESOURCES = {
    "type": "object",
    "minProperties": 1,
    "patternProperties": {RESOURCE_CLASS_KEY: {"type": "integer", "minimum": 1}},
    "additionalProperties": False,
}

# --- PUT /allocations/{consumer_uuid} -----------------------------------------

PUT_1_0 = {
    "type": "object",
    "properties": {
        "allocations": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "resource_provider": {
                        "type": "object",
                        "properties": {"uuid": {"type": "string", "format": "uuid"}},
                        "required": ["uuid"],
                        "additionalProperties": False,
                    },
                    "resources": RESOURCES,
                },
                "required": ["resource_provider", "resources"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["allocations"],
    "additionalProperties": False,
}

PUT_1_8 = copy.deepcopy(PUT_1_0)
PUT_1_8["properties"].update(project_id=EXTERNAL_ID, user_id=EXTERNAL_ID)
PUT_1_8["required"] += ["project_id", "user_id"]

PUT_1_12 = {
    "type": "object",
    "properties": {
        "allocations": {
            "type": "object",
            "minProperties": 1,
            "patternProperties": {
                UUID_KEY: {
                    "type": "object",
                    "properties": {
                        # Echoed back from GET; accepted and ignored.
                        "generation": {"type": "integer"},
                        "resources": RESOURCES,
                    },
                    "required": ["resources"],
                    "additionalProperties": False,
                }
            },
            "additionalProperties": False,
        },
        "project_id": EXTERNAL_ID,
        "user_id": EXTERNAL_ID,
    },
    "required": ["allocations", "project_id", "user_id"],
    "additionalProperties": False,
}

# In POST /allocations (and from 1.28 in PUT) an empty dict removes allocations.
EMPTYABLE_1_12 = copy.deepcopy(PUT_1_12)
EMPTYABLE_1_12["properties"]["allocations"]["minProperties"] = 0

PUT_1_28 = copy.deepcopy(EMPTYABLE_1_12)
PUT_1_28["properties"]["consumer_generation"] = GENERATION
PUT_1_28["required"].append("consumer_generation")

MAPPINGS = {
    "type": "object",
    "minProperties": 1,  # an empty mappings is refused, as Placement does
    "patternProperties": {
        GROUP_SUFFIX_KEY: {
            "type": "array",
            "minItems": 1,
            "items": {"type": "string", "format": "uuid"},
        }
    },
}

PUT_1_34 = copy.deepcopy(PUT_1_28)
PUT_1_34["properties"]["mappings"] = MAPPINGS

PUT_1_38 = copy.deepcopy(PUT_1_34)
PUT_1_38["properties"]["consumer_type"] = {
    "type": "string",
    "pattern": CONSUMER_TYPE_PATTERN,
    "minLength": 1,
    "maxLength": 255,
}
PUT_1_38["required"].append("consumer_type")


def put_allocations_schema(version):
    for since, schema in (
        ((1, 38), PUT_1_38),
        ((1, 34), PUT_1_34),
        ((1, 28), PUT_1_28),
        ((1, 12), PUT_1_12),
        ((1, 8), PUT_1_8),
    ):
        if version >= since:
            return schema
    return PUT_1_0


# --- POST /allocations (1.13) ---------------------------------------------------


def _keyed_by_consumer(per_consumer, min_properties=1):
    return {
        "type": "object",
        "minProperties": min_properties,
        "patternProperties": {UUID_KEY: per_consumer},
        "additionalProperties": False,
    }


POST_1_13 = _keyed_by_consumer(EMPTYABLE_1_12)
POST_1_28 = _keyed_by_consumer(PUT_1_28)
POST_1_34 = _keyed_by_consumer(PUT_1_34)
POST_1_38 = _keyed_by_consumer(PUT_1_38)


def post_allocations_schema(version):
    for since, schema in (((1, 38), POST_1_38), ((1, 34), POST_1_34), ((1, 28), POST_1_28)):
        if version >= since:
            return schema
    return POST_1_13


# --- POST /reshaper (1.30) --------------------------------------------------------


def _reshaper(allocations):
    return {
        "type": "object",
        "properties": {
            "inventories": {
                "type": "object",
                "minProperties": 1,
                "patternProperties": {UUID_KEY: INVENTORIES_REPLACE_BODY},
                "additionalProperties": False,
            },
            # There may be no allocations at all against the inventory being moved.
            "allocations": _keyed_by_consumer(allocations, min_properties=0),
        },
        "required": ["inventories", "allocations"],
        "additionalProperties": False,
    }


RESHAPER_1_30 = _reshaper(PUT_1_28)
RESHAPER_1_34 = _reshaper(PUT_1_34)
RESHAPER_1_38 = _reshaper(PUT_1_38)


def reshaper_schema(version):
    if version >= (1, 38):
        return RESHAPER_1_38
    if version >= (1, 34):
        return RESHAPER_1_34
    return RESHAPER_1_30


# --- GET /usages (query string) ---------------------------------------------------

USAGES_QUERY_1_9 = {
    "type": "object",
    "properties": {"project_id": EXTERNAL_ID, "user_id": EXTERNAL_ID},
    "required": ["project_id"],
    "additionalProperties": False,
}

USAGES_QUERY_1_38 = copy.deepcopy(USAGES_QUERY_1_9)
USAGES_QUERY_1_38["properties"]["consumer_type"] = {
    "type": "string",
    "pattern": r"^[A-Z0-9_]+$|^all$|^unknown$",
    "minLength": 1,
    "maxLength": 255,
}


def usages_query_schema(version):
    return USAGES_QUERY_1_38 if version >= (1, 38) else USAGES_QUERY_1_9
