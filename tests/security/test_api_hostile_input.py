"""Hostile input to /api/ is a 400 or 404 in the error format, never a 500: a Unicode digit
as an id, JSON nested deeper than the interpreter recurses, NUL characters in field values."""

import json

import pytest

from tests.providers.hosts import report
from tests.scheduling.scheduler_helpers import make_flavor, make_host

pytestmark = pytest.mark.django_db

DEEP = "[" * 5000 + "]" * 5000
DEEP_OBJECT = '{"a": ' * 5000 + "1" + "}" * 5000


def assert_error_4xx(response, expected=None):
    assert 400 <= response.status < 500, response
    if expected is not None:
        assert response.status == expected, response
    assert response.error["code"], response


@pytest.fixture
def cloud(api):
    make_host(api, "cn1")
    make_flavor(api, "m1.small", vcpus=1, ram=512, disk=1)


@pytest.mark.parametrize("value", ["%C2%B2", "%D9%A3", "12345678901234567890", "-1", "1.0"])
def test_flavor_ids_that_are_not_ascii_digits_are_404(api, cloud, value):
    assert_error_4xx(api.get(f"/api/flavors/{value}/"), 404)


def test_unicode_digit_flavor_in_a_body_is_400(api, cloud):
    body = {"name": "vm", "flavor": "²", "project_id": "p", "user_id": "u"}
    assert_error_4xx(api.post("/api/servers/", body), 400)


@pytest.mark.parametrize("raw", [DEEP, DEEP_OBJECT], ids=["array", "object"])
@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/api/flavors/"),
        ("POST", "/api/servers/"),
        ("POST", "/api/scheduler/explain/"),
        ("PUT", "/api/compute-nodes/cn9/"),
        ("PATCH", "/api/flavors/m1.small/"),
    ],
)
def test_deeply_nested_json_is_400(api, cloud, method, path, raw):
    response = api.request(method, path, raw=raw)
    assert_error_4xx(response, 400)
    assert "JSON" in response.error["detail"]


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/api/flavors/", {"name": "bad\u0000name", "vcpus": 1, "ram": 1, "disk": 1}),
        (
            "POST",
            "/api/flavors/",
            {"name": "nul-spec", "vcpus": 1, "ram": 1, "extra_specs": {"hw:numa_nodes": "\u0000"}},
        ),
        ("PATCH", "/api/flavors/m1.small/", {"extra_specs": {"k\u0000": "v"}}),
        (
            "POST",
            "/api/servers/",
            {"name": "vm\u0000", "flavor": "m1.small", "project_id": "p", "user_id": "u"},
        ),
        ("PUT", "/api/compute-nodes/cn9/", report(cpu_info={"model": "x\u0000"})),
        ("PATCH", "/api/resource-classes/CUSTOM_X/", {"description": "\u0000"}),
    ],
    ids=["flavor-name", "extra-spec", "extra-spec-key", "server-name", "report", "class"],
)
def test_nul_characters_in_field_values_are_400(api, cloud, method, path, body):
    api.put("/resource_classes/CUSTOM_X")
    response = api.request(method, path, raw=json.dumps(body))
    assert_error_4xx(response, 400)
    assert "NUL" in response.error["detail"]


def test_lone_surrogates_are_400(api, cloud):
    raw = '{"name": "\\ud800", "vcpus": 1, "ram": 1}'
    assert_error_4xx(api.request("POST", "/api/flavors/", raw=raw), 400)
