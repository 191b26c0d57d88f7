"""Base classes every view under /api/ is built from."""

import orjson
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.views import SpectacularAPIView
from rest_framework import filters, routers, viewsets
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import JSONRenderer

from placementsite.core.api import policy

from . import schema  # noqa: F401  (registers the token scheme with drf-spectacular)
from .authentication import PlacementTokenAuthentication
from .errors import exception_handler
from .pagination import ApiPagination
from .parsers import ApiJSONParser
from .permissions import PolicyPermission


class ApiViewMixin:
    """Token authentication, one policy rule per action, JSON in and out, errors in
    Placement's format, paged lists, django-filter and ``?ordering=``."""

    authentication_classes = [PlacementTokenAuthentication]
    permission_classes = [PolicyPermission]
    renderer_classes = [JSONRenderer]
    parser_classes = [ApiJSONParser]
    content_negotiation_class = DefaultContentNegotiation
    pagination_class = ApiPagination
    filter_backends = [DjangoFilterBackend, filters.OrderingFilter]

    def get_exception_handler(self):
        return exception_handler

    def authorize_project(self, request, project_id, user_id=None):
        """Check the action's rule with the project a new row is for as the target (a
        server created for ``project_id``); a refusal is a 403 naming the rule."""
        permission = PolicyPermission()
        if not permission.has_object_permission(request, self, _ProjectRow(project_id, user_id)):
            self.permission_denied(request, message=permission.message)


class LargeAnswerRenderer(JSONRenderer):
    """:class:`JSONRenderer`'s bytes, encoded by orjson: for a view whose answer holds only
    strings, integers, booleans, None, lists and dicts (orjson writes floats otherwise than
    the standard encoder), e.g. capacity's 100,000 hosts (0.12 s through the standard
    encoder, 0.015 s here). What orjson refuses (a lazy translation, an integer past 64
    bits) and an indent asked in the Accept header go through :class:`JSONRenderer`."""

    def render(self, data, accepted_media_type=None, renderer_context=None):
        if data is None or self.get_indent(accepted_media_type or "", renderer_context or {}):
            return super().render(data, accepted_media_type, renderer_context)
        try:
            body = orjson.dumps(data)
        except TypeError:
            return super().render(data, accepted_media_type, renderer_context)
        # JSONRenderer escapes the two line separators JavaScript does not take in strings.
        return body.replace("\u2028".encode(), b"\\u2028").replace("\u2029".encode(), b"\\u2029")


class _ProjectRow:
    def __init__(self, project_id, user_id):
        self.project_id, self.user_id = project_id, user_id


class ProjectScopedMixin:
    """A collection of rows that each belong to a project (``project_id``): its list holds
    the caller's project's rows unless ``all_projects_rule`` allows it every project's
    (as Nova's ``get_all_tenants``); a detail action checks its rule against the row's
    project (:class:`~.permissions.PolicyPermission`)."""

    all_projects_rule = None

    def sees_all_projects(self):
        return policy.check(self.all_projects_rule, self.request.auth)

    def get_queryset(self):
        queryset = super().get_queryset()
        if self.action == "list" and not self.sees_all_projects():
            queryset = queryset.filter(project_id=self.request.auth.project_id)
        return queryset


class ApiModelViewSet(ApiViewMixin, viewsets.ModelViewSet):
    http_method_names = ["get", "post", "put", "patch", "delete", "head", "options"]


class ApiReadOnlyViewSet(ApiViewMixin, viewsets.ReadOnlyModelViewSet):
    pass


class ApiViewSet(ApiViewMixin, viewsets.ViewSet):
    """For endpoints that are not one model's rows (capacity, explain)."""


class ApiRootView(ApiViewMixin, routers.APIRootView):
    """``GET /api/``: links to every collection."""

    policy_rule = policy.API_ROOT


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

    policy_rule = policy.API_SCHEMA
    renderer_classes = SpectacularAPIView.renderer_classes
