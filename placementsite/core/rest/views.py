"""Base classes every view under /api/ is built from."""

from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.views import SpectacularAPIView
from rest_framework import filters, routers, viewsets
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import JSONParser
from rest_framework.renderers import JSONRenderer

from . import schema  # noqa: F401  (registers the token scheme with drf-spectacular)
from .authentication import PlacementTokenAuthentication
from .errors import exception_handler
from .pagination import ApiPagination
from .permissions import PolicyPermission


class ApiViewMixin:
    """Token authentication, one policy rule per action, JSON in and out, errors in
    Placement's format, paged lists, django-filter and ``?ordering=``."""

    authentication_classes = [PlacementTokenAuthentication]
    permission_classes = [PolicyPermission]
    renderer_classes = [JSONRenderer]
    parser_classes = [JSONParser]
    content_negotiation_class = DefaultContentNegotiation
    pagination_class = ApiPagination
    filter_backends = [DjangoFilterBackend, filters.OrderingFilter]

    def get_exception_handler(self):
        return exception_handler


class ApiModelViewSet(ApiViewMixin, viewsets.ModelViewSet):
    http_method_names = ["get", "post", "put", "patch", "delete", "head", "options"]


class ApiReadOnlyViewSet(ApiViewMixin, viewsets.ReadOnlyModelViewSet):
    pass


class ApiViewSet(ApiViewMixin, viewsets.ViewSet):
    """For endpoints that are not one model's rows (capacity, explain)."""


class ApiRootView(ApiViewMixin, routers.APIRootView):
    """``GET /api/``: links to every collection."""

    policy_rule = "placement:api:root"


class ApiRouter(routers.DefaultRouter):
    """The site's router: ``GET /api/`` lists the collections of every app router it gathers."""

    APIRootView = ApiRootView
    include_format_suffixes = False

    @classmethod
    def gathering(cls, *app_routers):
        """A router whose registry is the apps' registries in this order (for the root view)."""
        router = cls()
        for app_router in app_routers:
            router.registry.extend(app_router.registry)
        return router


class AppRouter(routers.SimpleRouter):
    """An app's own ``/api/`` routes (``<app>/rest/urls.py``): no root view; the site's
    ``ApiRouter`` lists them with every other app's under ``GET /api/``."""


class SchemaView(ApiViewMixin, SpectacularAPIView):
    """``GET /api/schema/``: the OpenAPI 3 document of /api/ (JSON, or YAML on request)."""

    policy_rule = "placement:api:schema"
    renderer_classes = SpectacularAPIView.renderer_classes
