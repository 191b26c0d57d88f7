"""JSON-schema validation with each schema checked and compiled once.

``jsonschema.validate`` checks the schema against its metaschema on every call, which cost more
than the rest of most requests (about 8 ms of each validation of an inventory write); this
service's schemas never change once built. :func:`validate` raises the same error as
``jsonschema.validate`` (the best match of all errors), so messages are unchanged;
:func:`check` refuses with Placement's words (an InvalidRequest), for the rules and the edges
alike.
"""

import functools
import json

import jsonschema

from placementsite.core.exceptions import InvalidRequest

# Checks the formats a schema names ("uuid", ...) when a caller asks for it.
FORMAT_CHECKER = jsonschema.FormatChecker()

# How Placement begins its refusal of a body, and of a query string.
BODY_REFUSAL = "JSON does not validate"
QUERY_REFUSAL = "Invalid query string parameters"


@functools.lru_cache(maxsize=512)
def _compiled(schema_json, format_checker):
    # Keyed by the schema's JSON text (schemas are dicts, which do not hash), in its own key
    # order: the order in which errors are found, hence which one is reported, is kept.
    schema = json.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=format_checker)


# The validator of each schema object met, by identity: the schemas are built once and kept
# (module constants, lru_cached builders), and finding them so costs nothing where dumping one
# for the key of _compiled cost 12 us (of the 66 us of a query string's validation). The
# schema and checker are kept too, so that their ids are not reused while the entry lives.
_BY_IDENTITY: dict = {}
_BY_IDENTITY_SIZE = 512


def _validator(schema, format_checker):
    key = (id(schema), id(format_checker))
    found = _BY_IDENTITY.get(key)
    if found is not None and found[0] is schema and found[1] is format_checker:
        return found[2]
    validator = _compiled(json.dumps(schema), format_checker)
    if len(_BY_IDENTITY) >= _BY_IDENTITY_SIZE:
        _BY_IDENTITY.clear()
    _BY_IDENTITY[key] = (schema, format_checker, validator)
    return validator


def validate(instance, schema, format_checker=None):
    """``jsonschema.validate(instance, schema, format_checker=...)`` with a compiled validator.

    Raises :class:`jsonschema.ValidationError` (the best match) when ``instance`` does not
    validate.
    """
    error = jsonschema.exceptions.best_match(
        _validator(schema, format_checker).iter_errors(instance)
    )
    if error is not None:
        raise error


def check(instance, schema, *, format_checker=FORMAT_CHECKER, refusal=BODY_REFUSAL):
    """Refuse ``instance`` unless it validates against ``schema``: InvalidRequest
    ``"<refusal>: <the best-matching error>"``."""
    try:
        validate(instance, schema, format_checker=format_checker)
    except jsonschema.ValidationError as exc:
        raise InvalidRequest(f"{refusal}: {exc}") from None
