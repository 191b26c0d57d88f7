"""Providers' routes under /api/ (compute nodes, resource classes); the site's /api/ URLconf
(placementsite/api_urls.py) includes them."""

from placementsite.core.rest.views import AppRouter

from .views import ComputeNodeViewSet, ResourceClassViewSet, ResourcePoolViewSet

router = AppRouter()
router.register("compute-nodes", ComputeNodeViewSet, basename="compute-node")
router.register("resource-classes", ResourceClassViewSet, basename="resource-class")
router.register("resource-pools", ResourcePoolViewSet, basename="resource-pool")

urlpatterns = router.urls
