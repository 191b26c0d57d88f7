"""URLs of /api/. Each app registers its viewsets on the one router here."""

from django.urls import path

from providers.rest.views import ComputeNodeViewSet, ResourceClassViewSet
from scheduling.rest.moves import MigrationViewSet, ServerMoveViewSet
from scheduling.rest.views import CapacityViewSet, FlavorViewSet, SchedulerViewSet, ServerViewSet

from .core.rest.views import ApiRouter, SchemaView

router = ApiRouter()
router.register("flavors", FlavorViewSet, basename="flavor")
# Moves of a server: /api/servers/{id}/migrate/ and the like (detail actions only). Registered
# before ServerViewSet, whose list then names "servers" in GET /api/ (the last one wins there).
router.register("servers", ServerMoveViewSet, basename="server-move")
router.register("servers", ServerViewSet, basename="server")
router.register("migrations", MigrationViewSet, basename="migration")
router.register("scheduler", SchedulerViewSet, basename="scheduler")
router.register("capacity", CapacityViewSet, basename="capacity")
router.register("compute-nodes", ComputeNodeViewSet, basename="compute-node")
router.register("resource-classes", ResourceClassViewSet, basename="resource-class")

urlpatterns = [
    path("schema/", SchemaView.as_view(), name="api-schema"),
    *router.urls,
]
