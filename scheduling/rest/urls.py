"""The scheduler's routes under /api/ (flavors, servers and their moves, migrations, the
scheduler, capacity, aggregates); the site's /api/ URLconf (placementsite/api_urls.py) includes them."""

from placementsite.core.rest.views import AppRouter

from .drain import HostDrainViewSet
from .moves import MigrationViewSet, ServerMoveViewSet
from .server_groups import ServerGroupViewSet
from .views import (
    AggregateViewSet,
    CapacityViewSet,
    FlavorViewSet,
    SchedulerViewSet,
    ServerViewSet,
)

router = AppRouter()
router.register("flavors", FlavorViewSet, basename="flavor")
# Moves of a server: /api/servers/{id}/migrate/ and the like (detail actions only). Registered
# before ServerViewSet, whose list then names "servers" in GET /api/ (the last one wins there).
router.register("servers", ServerMoveViewSet, basename="server-move")
router.register("servers", ServerViewSet, basename="server")
router.register("migrations", MigrationViewSet, basename="migration")
router.register("server-groups", ServerGroupViewSet, basename="server-group")
router.register("scheduler", SchedulerViewSet, basename="scheduler")
router.register("capacity", CapacityViewSet, basename="capacity")
# /api/compute-nodes/{hostname}/drain/ (a detail action only; the host list is the providers').
router.register("compute-nodes", HostDrainViewSet, basename="compute-node-drain")
router.register("aggregates", AggregateViewSet, basename="aggregate")

urlpatterns = router.urls
