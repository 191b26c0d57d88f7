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
import re

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
    """``(validator, plain)``: the compiled validator of ``schema`` and its :class:`_Plain`
    check (None when the schema is not of that shape)."""
    key = (id(schema), id(format_checker))
    found = _BY_IDENTITY.get(key)
    if found is not None and found[0] is schema and found[1] is format_checker:
        return found[2]
    validator = _compiled(json.dumps(schema), format_checker)
    if len(_BY_IDENTITY) >= _BY_IDENTITY_SIZE:
        _BY_IDENTITY.clear()
    _BY_IDENTITY[key] = (schema, format_checker, (validator, _Plain.of(schema)))
    return validator, _BY_IDENTITY[key][2][1]


# What a query string's schema is made of: an object of string values, each maybe matching a
# pattern or one of an enum.
_PLAIN_OBJECT = {"type", "properties", "patternProperties", "additionalProperties", "required"}
_PLAIN_STRING = {"type", "pattern", "enum"}


class _Plain:
    """A quick yes of a schema of the query strings' shape (see _PLAIN_OBJECT): True only when
    the instance certainly validates, as jsonschema would say (its keywords, its re.search);
    anything else (an error to report, a value of another type) goes to jsonschema. A
    candidates query's check takes a few microseconds where jsonschema's walk took 45."""

    def __init__(self, properties, patterns, closed, required):
        self.properties = properties  # name -> value checks
        self.patterns = patterns  # [(compiled key pattern, value checks)]
        self.closed = closed  # additionalProperties: false
        self.required = required

    @classmethod
    def of(cls, schema):
        if set(schema) - _PLAIN_OBJECT or schema.get("type") != "object":
            return None
        if schema.get("additionalProperties", True) not in (True, False):
            return None
        subschemas = [*schema.get("properties", {}).values()]
        subschemas += schema.get("patternProperties", {}).values()
        if not all(_is_plain_string(subschema) for subschema in subschemas):
            return None
        return cls(
            {name: _string_check(sub) for name, sub in schema.get("properties", {}).items()},
            [
                (re.compile(pattern), _string_check(sub))
                for pattern, sub in schema.get("patternProperties", {}).items()
            ],
            schema.get("additionalProperties", True) is False,
            tuple(schema.get("required", ())),
        )

    def __call__(self, instance):
        if type(instance) is not dict or not all(name in instance for name in self.required):
            return False
        for name, value in instance.items():
            if type(value) is not str:
                return False
            checks = [self.properties[name]] if name in self.properties else []
            checks += [check for key, check in self.patterns if key.search(name)]
            if not checks and self.closed:
                return False
            if not all(check(value) for check in checks):
                return False
        return True


def _is_plain_string(subschema):
    return (
        isinstance(subschema, dict)
        and not set(subschema) - _PLAIN_STRING
        and subschema.get("type") == "string"
        and isinstance(subschema.get("pattern", ""), str)
        and isinstance(subschema.get("enum", []), list)
    )


def _string_check(subschema):
    """The check of a string value (see _is_plain_string)."""
    pattern = re.compile(subschema["pattern"]) if "pattern" in subschema else None
    enum = subschema.get("enum")
    return lambda value: (
        (pattern is None or pattern.search(value) is not None) and (enum is None or value in enum)
    )


def validate(instance, schema, format_checker=None):
    """``jsonschema.validate(instance, schema, format_checker=...)`` with a compiled validator.

    Raises :class:`jsonschema.ValidationError` (the best match) when ``instance`` does not
    validate.
    """
    validator, plain = _validator(schema, format_checker)
    if plain is not None and plain(instance):
        return
    error = jsonschema.exceptions.best_match(validator.iter_errors(instance))
    if error is not None:
        raise error


def check(instance, schema, *, format_checker=FORMAT_CHECKER, refusal=BODY_REFUSAL):
    """Refuse ``instance`` unless it validates against ``schema``: InvalidRequest
    ``"<refusal>: <the best-matching error>"``."""
    try:
        validate(instance, schema, format_checker=format_checker)
    except jsonschema.ValidationError as exc:
        raise InvalidRequest(f"{refusal}: {exc}") from None
