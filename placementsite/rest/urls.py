"""URLs of /api/. Each app registers its viewsets on the one router here."""

from django.urls import path

from scheduling.rest.views import CapacityViewSet, FlavorViewSet, SchedulerViewSet, ServerViewSet

from .views import ApiRouter, SchemaView

router = ApiRouter()
router.register("flavors", FlavorViewSet, basename="flavor")
router.register("servers", ServerViewSet, basename="server")
router.register("scheduler", SchedulerViewSet, basename="scheduler")
router.register("capacity", CapacityViewSet, basename="capacity")

urlpatterns = [
    path("schema/", SchemaView.as_view(), name="api-schema"),
    *router.urls,
]
