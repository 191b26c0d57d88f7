"""Query-string parsing shared by the provider list and allocation candidates.

Each function takes what Django parsed (``request.GET``) and the request's
microversion, and returns plain values for a
:class:`providers.selectors.resource_providers.RequestGroup`, or raises
BadRequest with Placement's own message. ``suffix`` names a granular request
group (``required1``, ``member_of_X``); the unnumbered group has ``""``.
"""

import re
import uuid as uuidlib

import jsonschema

from placementsite.api import validation
from placementsite.api.errors import BadRequest

RESOURCES_FORM = "?resources=VCPU:2,MEMORY_MB:1024"


def normalize_uuid(value):
    """The canonical uuid for ``value`` (dashes optional, any case, braces); None if not one."""
    if not isinstance(value, str):
        return None
    text = value.strip().lower()
    for prefix in ("urn:", "uuid:"):
        if text.startswith(prefix):
            text = text[len(prefix) :]
    text = text.strip("{}").replace("-", "")
    if len(text) != 32:
        return None
    try:
        return str(uuidlib.UUID(hex=text))
    except ValueError:
        return None


def is_uuid_like(value):
    return normalize_uuid(value) is not None


# A format checker whose "uuid" is as lenient as Placement's (oslo's is_uuid_like).
FORMAT_CHECKER = jsonschema.FormatChecker()
FORMAT_CHECKER.checks("uuid")(is_uuid_like)

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
    try:
        validation.validate(query.dict(), schema, format_checker=FORMAT_CHECKER)
    except jsonschema.ValidationError as exc:
        raise BadRequest(f"Invalid query string parameters: {exc.message}") from None


def validate_body(data, schema):
    """JSON body validation with the same lenient uuid format."""
    try:
        validation.validate(data, schema, format_checker=FORMAT_CHECKER)
    except jsonschema.ValidationError as exc:
        raise BadRequest(f"JSON does not validate: {exc.message}") from None


def parse_resources(value):
    """``VCPU:2,MEMORY_MB:1024`` -> ``{"VCPU": 2, "MEMORY_MB": 1024}``."""
    if value.strip() == "":
        raise BadRequest(
            "Badly formed resources parameter. Expected resources query string "
            f"parameter in form: {RESOURCES_FORM}. Got: empty string."
        )
    resources = {}
    for item in value.split(","):
        parts = item.split(":")
        if len(parts) != 2:
            raise BadRequest(
                "Badly formed resources parameter. Expected resources query string "
                f"parameter in form: {RESOURCES_FORM}. Got: {item}."
            )
        name, amount_text = parts
        try:
            amount = int(amount_text)
        except ValueError:
            raise BadRequest(
                f"Requested resource {name} expected positive integer amount. Got: {amount_text}."
            ) from None
        if amount < 1:
            raise BadRequest(f"Requested resource {name} requires amount >= 1. Got: {amount}.")
        resources[name] = amount
    return resources


def _parse_one_required(value, allow_forbidden, allow_any):
    """One ``required`` value -> (list of any-of sets, set of forbidden names)."""
    if value.startswith("in:"):
        if not allow_any:
            raise BadRequest(
                "Invalid query string parameters: The format "
                "'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since microversion 1.39. "
                f"Got: {value}"
            )
        any_of = {name.strip() for name in value[3:].split(",")}
        if not all(any_of):
            raise BadRequest(
                "Invalid query string parameters: Expected 'required' parameter value of "
                f"the form: in:HW_CPU_X86_VMX,CUSTOM_MAGIC. Got an empty trait in: {value}"
            )
        if any(name.startswith("!") for name in any_of):
            raise BadRequest(
                "Invalid query string parameters: The format "
                "'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' does not support forbidden traits. "
                f"Got: {value}"
            )
        return [frozenset(any_of)], set()

    names = [name.strip() for name in value.split(",")]
    # Placement strips every leading "!": "!!FOO" forbids FOO.
    forbidden = {name.lstrip("!") for name in names if name.startswith("!")}
    form = "HW_CPU_X86_VMX,!CUSTOM_MAGIC" if allow_forbidden else "HW_CPU_X86_VMX,CUSTOM_MAGIC"
    if not all(names) or not all(forbidden):
        raise BadRequest(
            "Invalid query string parameters: Expected 'required' parameter value of "
            f"the form: {form}. Got an empty trait in: {value}"
        )
    if forbidden and not allow_forbidden:
        raise BadRequest(
            "Invalid query string parameters: Expected 'required' parameter value of "
            f"the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: {value}"
        )
    required = [frozenset([name]) for name in names if not name.startswith("!")]
    return required, forbidden


def parse_required(query, version, suffix=""):
    """``required`` (1.18): (list of any-of trait sets, all needed; forbidden set).

    ``!TRAIT`` forbids from 1.22; ``in:A,B`` (any of) and repeating the
    parameter (all of them) from 1.39; before 1.39 only the last value counts.
    """
    values = query.getlist("required" + suffix)
    allow_any = version >= (1, 39)
    if not allow_any:
        values = values[-1:]
    required, forbidden = [], set()
    for value in values:
        any_of, not_wanted = _parse_one_required(value, version >= (1, 22), allow_any)
        required.extend(any_of)
        forbidden |= not_wanted
    return required, frozenset(forbidden)


def _parse_one_member_of(value):
    """One ``member_of`` value -> (set of uuids one of which is needed, forbidden set)."""
    if "," in value and not value.startswith(("in:", "!in:")):
        raise BadRequest(
            "Multiple values for 'member_of' must be prefixed with the 'in:' or '!in:' "
            f"keyword using the valid microversion. Got: {value}"
        )
    required, forbidden = [], []
    if value.startswith("!in:"):
        forbidden = value[4:].split(",")
    elif value.startswith("!"):
        forbidden = [value[1:]]
    elif value.startswith("in:"):
        required = value[3:].split(",")
    else:
        required = [value]
    normalized = {}
    for text in required + forbidden:
        found = normalize_uuid(text)
        if found is None:
            raise BadRequest(
                "Invalid query string parameters: Expected 'member_of' parameter to "
                f"contain valid UUID(s). Got: {text}"
            )
        normalized[text] = found
    return (
        frozenset(normalized[t] for t in required),
        frozenset(normalized[t] for t in forbidden),
    )


def parse_member_of(query, version, suffix=""):
    """``member_of`` (1.3): (list of any-of aggregate sets, all needed; forbidden set).

    Repeating the parameter is allowed from 1.24; ``!uuid`` and ``!in:`` from 1.32.
    """
    key = "member_of" + suffix
    values = query.getlist(key)
    if version < (1, 24) and len(values) > 1:
        raise BadRequest(f"Multiple {key} parameters are not supported")
    required, forbidden = [], set()
    for value in values:
        any_of, not_wanted = _parse_one_member_of(value)
        if any_of:
            required.append(any_of)
        if not_wanted:
            if version < (1, 32):
                raise BadRequest(
                    f"Forbidden {key} parameters are not supported in the specified microversion"
                )
            forbidden |= not_wanted
    return required, frozenset(forbidden)


# --- allocation candidates: granular request groups and request-wide options --------

GROUP_PREFIXES = ("resources", "required", "member_of", "in_tree")
NUMBERED_SUFFIX = r"[1-9][0-9]*"
STRING_SUFFIX = r"[a-zA-Z0-9_-]{1,64}"
LIMIT = {"type": "string", "pattern": "^[1-9][0-9]*$"}
GROUP_POLICY = {"type": "string", "enum": ["none", "isolate"]}


def suffix_pattern(version):
    """The regex of a granular group suffix: numbers (1.25), any short string (1.33)."""
    if version >= (1, 33):
        return STRING_SUFFIX
    if version >= (1, 25):
        return NUMBERED_SUFFIX
    return None


def group_key_regex(version):
    """``(prefix, suffix)`` from a query key such as ``resources_NET1``."""
    suffix = suffix_pattern(version)
    tail = f"({suffix})?" if suffix else "()"
    return re.compile(rf"^({'|'.join(GROUP_PREFIXES)}){tail}$")


def granular_schema(version, params, granular_params):
    """A query schema: ``params`` as in :func:`schema_for`, ``granular_params``
    ``[(since, prefix, schema), ...]`` repeated under every group suffix."""
    schema = schema_for(version, params)
    suffix = suffix_pattern(version)
    if suffix:
        schema["patternProperties"] = {
            f"^{prefix}{suffix}$": value
            for since, prefix, value in granular_params
            if version >= since
        }
    return schema


def parse_group_keys(query, version):
    """The suffixes in use and, per suffix, which of the group prefixes it names.

    Returns ``{suffix: set of prefixes}``; the unsuffixed group is ``""``.
    """
    regex = group_key_regex(version)
    found = {}
    for key in query:
        match = regex.match(key)
        if match:
            found.setdefault(match.group(2) or "", set()).add(match.group(1))
    return found


def parse_in_tree(query, suffix=""):
    """``in_tree<suffix>``: the provider uuid (already schema-checked)."""
    key = "in_tree" + suffix
    return normalize_uuid(query[key]) if key in query else None


def parse_root_required(query):
    """``root_required`` (1.35): (list of one-trait sets, forbidden set)."""
    value = query["root_required"]
    names = [name.strip() for name in value.split(",")]
    forbidden = {name[1:] for name in names if name.startswith("!")}
    if not all(names) or not all(forbidden):
        raise BadRequest(
            "Invalid query string parameters: Expected 'root_required' parameter value of "
            f"the form: HW_CPU_X86_VMX,!CUSTOM_MAGIC. Got an empty trait in: {value}"
        )
    required = [frozenset([name]) for name in names if not name.startswith("!")]
    return required, frozenset(forbidden)


def parse_same_subtree(query):
    """``same_subtree`` (1.36), repeatable: a list of tuples of group suffixes."""
    found = []
    for value in query.getlist("same_subtree"):
        suffixes = tuple(part.strip() for part in value.split(","))
        if not all(suffixes):
            raise BadRequest(
                "Invalid query string parameters: Expected 'same_subtree' parameter value "
                f"of the form: _SUFFIX1,_SUFFIX2. Got an empty suffix in: {value}"
            )
        found.append(suffixes)
    return found
