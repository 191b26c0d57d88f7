"""Hostile input never gives a 500, on any endpoint, at any microversion.

Placement's reference answers 500 to NUL bytes, lone surrogates and
percent-encoded non-UTF-8 in names and query values, and to very deeply
nested JSON; we answer 4xx in Placement's error format.
"""

import json

import pytest

from tests.factories import make_provider

pytestmark = pytest.mark.django_db

RP = "11111111-2222-4333-8444-555555555555"

PATHS = [
    "/resource_classes/{x}",
    "/traits/{x}",
    "/resource_providers/{x}",
    "/resource_providers/{x}/inventories",
    "/resource_providers/{x}/inventories/{x}",
    "/resource_providers/{x}/traits",
    "/resource_providers/{x}/aggregates",
    "/resource_providers/{x}/allocations",
    "/resource_providers/{x}/usages",
    "/resource_providers/" + RP + "/inventories/{x}",
    "/allocations/{x}",
]
QUERIES = [
    "/resource_providers?{q}",
    "/traits?{q}",
    "/usages?{q}",
    "/allocation_candidates?{q}",
    "/resource_classes?{q}",
]
HOSTILE = ["%00", "%ff%fe", "%ed%a0%80", "CUSTOM_%00X", "a" * 3000, "%25s%25n", "..%2F..", "%C0%AF"]
BODIES = [
    "[" * 100000 + "]" * 100000,
    '{"name": "\\ud800"}',
    '{"name": "CUSTOM_\\u0000"}',
    '{"resource_provider_generation": 1e400, "inventories": {}}',
    '{"a": NaN}',
    "\xff\xfe",
    "null",
    "[]",
    '"string"',
    '{"name": {"$gt": ""}}',
]
VERSIONS = ["1.0", "1.14", "latest"]


@pytest.fixture(autouse=True)
def provider(db):
    return make_provider("hostile", uuid=RP, inventories={"VCPU": 8})


def assert_client_error(response):
    assert 400 <= response.status < 500, response
    assert response.json["errors"][0]["status"] == response.status


def assert_no_server_error(response):
    """Some reads answer 200 for an unknown id (GET /allocations/{x} lists none)."""
    assert response.status < 500, response
    if response.status >= 400:
        assert_client_error(response)


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("path", PATHS)
def test_hostile_path_values(api_at, path, version):
    client = api_at(version)
    for value in HOSTILE:
        assert_no_server_error(client.get(path.format(x=value)))
        assert_client_error(client.delete(path.format(x=value)))


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("path", QUERIES)
def test_hostile_query_values(api_at, path, version):
    client = api_at(version)
    for key in (
        "name",
        "uuid",
        "resources",
        "required",
        "member_of",
        "in_tree",
        "project_id",
        "limit",
        "resources1",
        "same_subtree",
        "associated",
    ):
        for value in HOSTILE:
            assert_no_server_error(client.get(path.format(q=f"{key}={value}")))


WRITES = [
    ("POST", "/resource_classes"),
    ("PUT", "/resource_classes/CUSTOM_X"),
    ("POST", "/resource_providers"),
    ("PUT", "/resource_providers/" + RP),
    ("PUT", "/resource_providers/" + RP + "/inventories"),
    ("POST", "/resource_providers/" + RP + "/inventories"),
    ("PUT", "/resource_providers/" + RP + "/inventories/VCPU"),
    ("PUT", "/resource_providers/" + RP + "/traits"),
    ("PUT", "/resource_providers/" + RP + "/aggregates"),
    ("PUT", "/allocations/" + RP),
    ("POST", "/allocations"),
    ("POST", "/reshaper"),
]


@pytest.mark.parametrize("version", ["1.1", "1.19", "latest"])
@pytest.mark.parametrize(("method", "path"), WRITES)
def test_hostile_bodies(api_at, method, path, version):
    client = api_at(version)
    before = json.loads(client.get("/resource_providers/" + RP + "/inventories").content)
    for body in BODIES:
        r = client.request(method, path, raw=body)
        if path.endswith("CUSTOM_X") and version != "1.1":
            assert r.status in (201, 204)  # from 1.7 this PUT takes no body
        elif path.endswith("aggregates") and version == "1.1" and body == "[]":
            assert r.status == 200  # before 1.19 a bare (empty) list is the body
        else:
            assert_client_error(r)
    after = json.loads(client.get("/resource_providers/" + RP + "/inventories").content)
    assert after == before
