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
    for _ in range(3):
        json_schema.validate({"total": 2, "name": "abc"}, SCHEMA)
    assert json_schema._compiled.cache_info().misses == 1


def test_a_broken_schema_is_refused_as_jsonschema_refuses_it():
    with pytest.raises(jsonschema.SchemaError):
        json_schema.validate({}, {"type": "no-such-type"})
