"""URLs of /api/. Each app declares its routes on its own router (``<app>/rest/urls.py``); the
site lists all their collections under one root (``GET /api/``) and serves the OpenAPI schema."""

from django.urls import path

from placementsite.core.rest.views import ApiRouter, SchemaView
from providers.rest import urls as providers_api
from scheduling.rest import urls as scheduling_api

# The apps that contribute routes, in the order GET /api/ and the schema list them.
APP_URLS = (scheduling_api, providers_api)

root = ApiRouter.gathering(*(app.router for app in APP_URLS))

urlpatterns = [
    path("schema/", SchemaView.as_view(), name="api-schema"),
    # The apps' own patterns, spliced rather than nested so /api/ stays one flat list.
    *(pattern for app in APP_URLS for pattern in app.urlpatterns),
    path("", root.get_api_root_view(), name=root.root_view_name),
]
