"""URLs: the Placement API at the root, the project's own API under /api/, the Django admin
under /admin/ and the dashboard under /dashboard/."""

from django.contrib import admin
from django.urls import include, path

from placementsite.core.api.views import RootView
from placementsite.dashboard import errors

urlpatterns = [
    path("admin/", admin.site.urls),
    path("dashboard/", include("placementsite.dashboard.urls")),
    path("favicon.ico", errors.favicon, name="favicon"),
    path("api/", include("placementsite.api_urls")),
    path("", include("placementsite.observability.urls")),
    path("", RootView.as_view(), name="root"),
    path("", include("providers.api.urls")),
    path("", include("allocations.api.urls")),
    path("", include("scheduling.api.urls")),
]

# HTML error pages with the dashboard's navigation (the APIs turn them into JSON errors).
handler400 = errors.bad_request
handler403 = errors.permission_denied
handler404 = errors.page_not_found
handler500 = errors.server_error
