"""URLs of /api/. Each app registers its viewsets on the one router here."""

from django.urls import path

from .views import ApiRouter, SchemaView

router = ApiRouter()

urlpatterns = [
    path("schema/", SchemaView.as_view(), name="api-schema"),
    *router.urls,
]
