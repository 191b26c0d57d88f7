"""URLs: the Placement API at the root, the project's own API under /api/, the Django admin
under /admin/ and the dashboard under /dashboard/."""

from django.contrib import admin
from django.urls import include, path

from placementsite.api.views import RootView

urlpatterns = [
    path("admin/", admin.site.urls),
    path("dashboard/", include("placementsite.dashboard.urls")),
    path("api/", include("placementsite.rest.urls")),
    path("", RootView.as_view(), name="root"),
    path("", include("providers.api.urls")),
    path("", include("allocations.api.urls")),
    path("", include("scheduling.api.urls")),
]
