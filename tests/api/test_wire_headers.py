"""Headers and negotiation as Placement sends them: Location, Vary, Allow, Accept, Content-Type."""

import pytest
from django.test import Client

from tests.conftest import new_uuid
from tests.factories import make_provider

pytestmark = pytest.mark.django_db


def test_location_after_posting_an_inventory_is_absolute(api):
    rp = make_provider("cn")
    r = api.post(
        f"/resource_providers/{rp.uuid}/inventories",
        {"resource_class": "DISK_GB", "total": 10, "resource_provider_generation": 0},
    )
    assert r.status == 201
    assert r.headers["Location"] == (
        f"http://testserver/resource_providers/{rp.uuid}/inventories/DISK_GB"
    )


def test_location_of_a_new_provider_is_absolute(api):
    r = api.post("/resource_providers", {"name": "cn"})
    assert r.headers["Location"] == f"http://testserver/resource_providers/{r.json['uuid']}"


def test_put_resource_class_sends_location_when_created_and_when_present(api_at):
    api = api_at("1.7")
    created = api.put("/resource_classes/CUSTOM_COW")
    again = api.put("/resource_classes/CUSTOM_COW")
    assert (created.status, again.status) == (201, 204)
    assert created.headers["Location"] == "http://testserver/resource_classes/CUSTOM_COW"
    assert again.headers["Location"] == "http://testserver/resource_classes/CUSTOM_COW"


def test_vary_names_the_microversion_header_in_lower_case(api):
    assert api.get("/").headers["Vary"] == "openstack-api-version"


def test_405_names_the_method_and_allows_only_routed_methods(api):
    r = api.delete("/")
    assert r.status == 405
    assert r.headers["Allow"] == "GET"
    assert r.error["title"] == "Method Not Allowed"
    r = api.delete("/resource_providers")
    assert "The method DELETE is not allowed for this resource." in r.error["detail"]
    assert sorted(r.headers["Allow"].split(", ")) == ["GET", "POST"]


def test_options_without_cors_is_405(api):
    r = api.request("OPTIONS", "/resource_providers")
    assert r.status == 405
    assert "The method OPTIONS is not allowed for this resource." in r.error["detail"]


def test_error_is_html_when_the_client_prefers_html(api):
    r = api.get(f"/{new_uuid()}", headers={"Accept": "text/html"})
    assert r.status == 404
    assert r.headers["Content-Type"].startswith("text/html")
    assert b"<h1>404 Not Found</h1>" in r.content
    assert b"The resource could not be found" in r.content


def test_microversion_error_is_html_when_the_client_prefers_html(api):
    r = api.get("/", headers={"Accept": "text/html"}, version="0.5")
    assert r.status == 406
    assert r.headers["Content-Type"].startswith("text/html")
    assert b"Unacceptable version header: 0.5" in r.content


@pytest.mark.parametrize("accept", [None, "*/*", "application/json"])
def test_error_stays_json_without_a_preference_for_html(api, accept):
    headers = {"Accept": accept} if accept else {}
    r = api.get(f"/{new_uuid()}", headers=headers)
    assert r.headers["Content-Type"] == "application/json"
    assert r.error["status"] == 404


def test_write_answers_json_whatever_accept_says(api):
    # Placement checks Accept on reads only: this POST reaches its schema check.
    r = api.post("/resource_classes", {"name": "FOO"}, headers={"Accept": "text/plain"})
    assert r.status == 400
    assert "JSON does not validate" in r.error["detail"]
    assert api.get("/resource_classes", headers={"Accept": "text/plain"}).status == 406


def test_body_without_content_type_is_400(db):
    response = Client().generic(
        "POST",
        "/resource_providers",
        b"I want a provider",
        content_type="",
        HTTP_X_AUTH_TOKEN="admin",
    )
    assert response.status_code == 400
    assert b"content-type header required when content-length > 0" in response.content


def test_put_without_body_or_content_type_is_415_before_the_lookup(db):
    # The provider does not exist: the content type is checked first, as Placement does.
    response = Client().generic(
        "PUT", f"/resource_providers/{new_uuid()}", b"", content_type="", HTTP_X_AUTH_TOKEN="admin"
    )
    assert response.status_code == 415
    assert b"The media type None is not supported, use application/json" in response.content


def test_put_aggregates_of_unknown_provider_is_404_before_the_body(api):
    r = api.put(f"/resource_providers/{new_uuid()}/aggregates", {"bad": "body"})
    assert r.status == 404
