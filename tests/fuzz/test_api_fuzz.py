"""Fuzzing /api/ with schemathesis from its own OpenAPI document (drf-spectacular).

Every operation gets a bounded number of generated requests (valid and invalid bodies, query
strings and path parameters) sent through the whole WSGI stack as the admin. No answer may be
a server error, and every 4xx must be in the documented error format. Examples are derived
deterministically, so a run is repeatable; ``PLACEMENT_FUZZ_EXAMPLES`` raises the bound for a
longer local run.
"""

import os

import jsonschema
import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from placementsite.core.rest.schema import ERROR_SCHEMA

EXAMPLES = int(os.environ.get("PLACEMENT_FUZZ_EXAMPLES", "8"))

schema = schemathesis.openapi.from_dict(SchemaGenerator().get_schema(request=None, public=True))
schema.app = WSGIHandler()


@pytest.fixture
def in_test_transaction(db, settings):
    """Requests share the test's transaction, as with Django's test client."""
    settings.PLACEMENT_AUTH_STRATEGY = "noauth2"
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
    ],
)
def test_api_answers_without_server_errors_and_in_its_error_format(case, in_test_transaction):
    response = case.call(headers={"X-Auth-Token": "admin"})
    case.validate_response(response, checks=[not_a_server_error])
    if 400 <= response.status_code < 500 and case.method.upper() != "HEAD":
        content_type = response.headers.get("content-type", [""])[0]
        assert content_type.startswith("application/json"), (
            response.status_code,
            response.text[:300],
        )
        body = response.json()
        jsonschema.validate(body, ERROR_SCHEMA)
        assert body["errors"][0]["status"] == response.status_code
