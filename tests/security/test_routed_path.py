"""The API middleware decides on the routed path (``path_info``), as the URL resolver does: a
``SCRIPT_NAME`` a proxy forwards cannot make an API request skip authentication, and a
Placement view reached without the middleware's checks refuses the request, and says so."""

import logging

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("script_name", ["/x", "/dashboard", "/admin", "/metrics", "/static"])
@pytest.mark.parametrize("path", ["/resource_providers", "/traits", "/usages?project_id=p"])
def test_a_script_name_does_not_skip_authentication(script_name, path):
    response = Client().get(path, SCRIPT_NAME=script_name)
    assert response.status_code == 401, response.content
    assert response.json()["errors"][0]["status"] == 401


@pytest.mark.parametrize("script_name", ["/x", "/dashboard"])
def test_a_script_name_keeps_the_api_working_with_a_token(script_name):
    response = Client().get(
        "/resource_providers", SCRIPT_NAME=script_name, HTTP_X_AUTH_TOKEN="admin"
    )
    assert response.status_code == 200, response.content


def test_rest_api_under_a_script_name_needs_a_token_too():
    response = Client().get("/api/servers/", SCRIPT_NAME="/dashboard")
    assert response.status_code == 401, response.content


def test_a_placement_view_reached_without_the_middleware_fails_closed(settings, caplog):
    settings.MIDDLEWARE = [
        m
        for m in settings.MIDDLEWARE
        if m != "placementsite.core.api.middleware.PlacementApiMiddleware"
    ]
    with caplog.at_level(logging.ERROR, logger="placement.api"):
        response = Client().get("/resource_providers", HTTP_X_AUTH_TOKEN="admin")
    assert response.status_code == 401
    assert any("without passing PlacementApiMiddleware" in r.getMessage() for r in caplog.records)
