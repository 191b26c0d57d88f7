"""Microversions, errors, request ids and auth, shared by every endpoint."""

import pytest

from tests.conftest import PlacementClient

pytestmark = pytest.mark.django_db


def test_root_needs_no_token_and_lists_versions(db):
    r = PlacementClient(token=None).get("/")
    assert r.status == 200
    version = r.json["versions"][0]
    assert version["min_version"] == "1.0"
    assert version["max_version"] == "1.39"
    assert version["id"] == "v1.0"
    assert version["status"] == "CURRENT"


def test_other_urls_need_a_token(db):
    r = PlacementClient(token=None).get("/resource_classes")
    assert r.status == 401
    assert r.json["errors"][0]["status"] == 401


def test_version_headers_in_responses(api_at):
    r = api_at("1.20").get("/resource_classes")
    assert r.headers["OpenStack-API-Version"] == "placement 1.20"
    assert r.headers["Vary"] == "openstack-api-version"
    assert r.headers["openstack-request-id"].startswith("req-")


def test_latest_is_the_maximum(api):
    assert api.get("/").headers["OpenStack-API-Version"] == "placement 1.39"


def test_no_version_header_means_1_0(db):
    assert PlacementClient().get("/").headers["OpenStack-API-Version"] == "placement 1.0"


@pytest.mark.parametrize("bad", ["1.x", "one", "1.", "2", "1.2.3"])
def test_malformed_version_is_400(api_at, bad):
    assert api_at(bad).get("/resource_classes").status == 400


@pytest.mark.parametrize("bad", ["1.40", "2.0", "0.9"])
def test_version_out_of_range_is_406(api_at, bad):
    assert api_at(bad).get("/resource_classes").status == 406


def test_error_code_only_from_1_23(api_at):
    before = api_at("1.22").get("/resource_classes/CUSTOM_NOPE")
    after = api_at("1.23").get("/resource_classes/CUSTOM_NOPE")
    assert "code" not in before.error
    assert after.error["code"] == "placement.undefined_code"
    assert after.error["request_id"] == after.headers["openstack-request-id"]
    assert after.error["title"] == "Not Found"


def test_unknown_url_is_placement_404(api):
    r = api.get("/no/such/thing")
    assert r.status == 404
    assert r.json["errors"][0]["status"] == 404


def test_unsupported_method_is_405_with_allow(api):
    r = api.request("PATCH", "/resource_classes")
    assert r.status == 405
    assert "GET" in r.headers["Allow"]
    assert "POST" in r.headers["Allow"]


def test_last_modified_and_no_cache_from_1_15(api_at):
    old = api_at("1.14").get("/resource_classes")
    assert "Last-Modified" not in old.headers
    new = api_at("1.15").get("/resource_classes")
    assert new.headers["Cache-Control"] == "no-cache"
    assert "GMT" in new.headers["Last-Modified"]


def test_not_acceptable_accept_header(api):
    r = api.get("/resource_classes", headers={"Accept": "text/html"})
    assert r.status == 406


def test_nul_in_url_is_400(api):
    assert api.get("/resource_classes/CUSTOM_%00").status == 400


def test_caller_request_id_is_logged_as_global_request_id(api, caplog):
    caller_id = "req-12345678-1234-1234-1234-123456789abc"
    with caplog.at_level("INFO", logger="placement.api"):
        r = api.get("/resource_classes", headers={"X-OpenStack-Request-Id": caller_id})
    lines = [rec for rec in caplog.records if rec.name == "placement.api"]
    assert lines, "no request log line"
    assert lines[-1].global_request_id == caller_id
    assert lines[-1].request_id == r.headers["openstack-request-id"] != caller_id
    assert '"GET /resource_classes" status: 200' in lines[-1].getMessage()


def test_malformed_caller_request_id_is_not_trusted(api, caplog):
    with caplog.at_level("INFO", logger="placement.api"):
        api.get("/resource_classes", headers={"X-OpenStack-Request-Id": "evil\nvalue"})
    lines = [rec for rec in caplog.records if rec.name == "placement.api"]
    assert lines[-1].global_request_id == "-"
