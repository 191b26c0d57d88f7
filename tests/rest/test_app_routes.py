"""Each app declares its /api/ routes in ``<app>/rest/urls.py``; the site's /api/ URLconf
serves every one of them and lists their collections under one root."""

import importlib

import pytest
from django.urls import NoReverseMatch, reverse

from placementsite import api_urls

APPS = ("providers", "allocations", "scheduling")


def app_route_modules():
    for app in APPS:
        try:
            yield importlib.import_module(f"{app}.rest.urls")
        except ModuleNotFoundError:  # an app without routes of its own (allocations)
            continue


def has_a_list(basename):
    try:
        reverse(f"{basename}-list")
    except NoReverseMatch:
        return False
    return True


def test_the_site_serves_every_route_an_app_declares():
    modules = list(app_route_modules())
    assert {module.__name__ for module in modules} == {
        "providers.rest.urls",
        "scheduling.rest.urls",
    }
    served = set(api_urls.urlpatterns)
    for module in modules:
        assert set(module.urlpatterns) <= served, module.__name__


@pytest.mark.django_db
def test_the_root_lists_the_collections_of_every_app(api):
    response = api.get("/api/")
    assert response.status == 200
    # DRF's root lists the routes that have a list (not /api/scheduler/, actions only).
    listed = {
        prefix
        for module in app_route_modules()
        for prefix, _viewset, basename in module.router.registry
        if has_a_list(basename)
    }
    assert set(response.json) == listed
