"""placementsite.core.json_schema: jsonschema's answers, with each schema compiled once."""

import jsonschema
import pytest

from placementsite.core import json_schema

SCHEMA = {
    "type": "object",
    "properties": {
        "total": {"type": "integer", "minimum": 1},
        "uuid": {"type": "string", "format": "uuid"},
        "name": {"type": "string", "maxLength": 3},
    },
    "required": ["total"],
    "additionalProperties": False,
}

BAD = [
    {},
    {"total": 0},
    {"total": "8"},
    {"total": 1, "uuid": "not-a-uuid"},
    {"total": 0, "name": "toolong", "extra": 1},
]


@pytest.mark.parametrize("instance", BAD)
def test_reports_the_error_jsonschema_reports(instance):
    checker = json_schema.FORMAT_CHECKER
    with pytest.raises(jsonschema.ValidationError) as expected:
        jsonschema.validate(instance, SCHEMA, format_checker=checker)
    with pytest.raises(jsonschema.ValidationError) as got:
        json_schema.validate(instance, SCHEMA, format_checker=checker)
    assert got.value.message == expected.value.message


def test_valid_instance_passes_and_the_schema_is_compiled_once():
    json_schema._compiled.cache_clear()
    json_schema._BY_IDENTITY.clear()
    for _ in range(3):
        json_schema.validate({"total": 2, "name": "abc"}, SCHEMA)
    assert json_schema._compiled.cache_info().misses == 1


def test_a_broken_schema_is_refused_as_jsonschema_refuses_it():
    with pytest.raises(jsonschema.SchemaError):
        json_schema.validate({}, {"type": "no-such-type"})


# --- the quick yes of query strings' schemas ------------------------------------------------

QUERIES = [
    {"resources": "VCPU:1,MEMORY_MB:256", "limit": "10"},
    {"resources": "VCPU:1", "limit": "0"},
    {"resources": "VCPU:1", "limit": "ten"},
    {"resources1": "VCPU:1", "required1": "HW_CPU_X86_AVX2", "group_policy": "none"},
    {"resources1": "VCPU:1", "group_policy": "sometimes"},
    {"resources_NET": "SRIOV_NET_VF:1", "same_subtree": "_NET", "member_of": "in:a,b"},
    {"resources" + "x" * 65: "VCPU:1"},
    {"resources": "VCPU:1", "unknown": "1"},
    {"limit": "5"},
    {},
]


@pytest.mark.parametrize("version", [(1, 10), (1, 16), (1, 24), (1, 25), (1, 33), (1, 39)])
@pytest.mark.parametrize("query", QUERIES)
def test_query_schemas_answer_as_jsonschema(version, query):
    """A candidates query's schema is answered by the quick check when it validates, by
    jsonschema otherwise: jsonschema's verdict and message either way."""
    from providers import query_params

    schema = query_params.candidates_query_schema(version)
    checker = query_params.FORMAT_CHECKER
    assert json_schema._validator(schema, checker)[1] is not None
    try:
        jsonschema.validate(query, schema, format_checker=checker)
    except jsonschema.ValidationError as exc:
        with pytest.raises(jsonschema.ValidationError) as got:
            json_schema.validate(query, schema, format_checker=checker)
        assert got.value.message == exc.message
    else:
        json_schema.validate(query, schema, format_checker=checker)


def test_the_quick_check_says_yes_only_when_certain():
    plain = json_schema._Plain.of(
        {
            "type": "object",
            "properties": {"a": {"type": "string", "enum": ["x", "y"]}},
            "patternProperties": {"^b[0-9]$": {"type": "string", "pattern": "^[a-z]+$"}},
            "additionalProperties": False,
            "required": ["a"],
        }
    )
    assert plain({"a": "x", "b1": "abc"})
    assert not plain({"a": "z"})
    assert not plain({"b1": "abc"})  # a is required
    assert not plain({"a": "x", "b1": "ABC"})
    assert not plain({"a": "x", "c": "abc"})
    assert not plain({"a": 1})
    assert json_schema._Plain.of(SCHEMA) is None  # an integer, a format: jsonschema's
