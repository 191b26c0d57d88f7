"""``/api/compute-nodes/`` (host reports) and ``/api/resource-classes/`` (their metadata)."""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.decorators import action
from rest_framework.response import Response

from placementsite.core.api import policy
from placementsite.core.api.errors import HTTPBadRequest
from placementsite.core.rest.views import ApiModelViewSet

from .. import policies
from ..filtersets import ComputeNodeFilter, ResourceClassFilter, ResourcePoolFilter
from ..host_reports import HOSTNAME_RULE, hostname_valid
from ..models import ComputeNode, ResourceClass, ResourcePool
from ..selectors.device_units import host_device_units
from ..selectors.resource_pools import pool_usage
from ..services.compute_nodes import (
    compute_node_delete,
    compute_node_force_down,
    compute_node_report,
    compute_node_set_enabled,
)
from ..services.resource_classes import resource_class_describe
from ..services.resource_pools import (
    resource_pool_delete,
    resource_pool_report,
    resource_pool_set_enabled,
)
from .serializers import (
    ComputeNodeSerializer,
    HostReportSerializer,
    PoolReportSerializer,
    ResourceClassSerializer,
    ResourcePoolSerializer,
)


class ComputeNodeViewSet(ApiModelViewSet):
    """Hosts and their reports. ``PUT`` creates or replaces a host's report (idempotent);
    ``PATCH`` sets ``enabled`` and ``disabled_reason``, and ``forced_down``
    (``placement:api:compute_nodes:force_down``, admins) (any other field is a 400);
    ``DELETE`` decommissions the host: its record and its whole provider tree, refused with a
    409 ``compute_node.in_use`` while anything is allocated on the tree.

    A report naming a provider the host sync did not create is a 409; ``PUT ...?adopt=true``
    (``placement:api:compute_nodes:adopt``, admins) hands that provider to the sync."""

    queryset = ComputeNode.objects.select_related("provider")
    serializer_class = ComputeNodeSerializer
    filterset_class = ComputeNodeFilter
    ordering_fields = ["hostname", "reported_at", "synced_at", "sync_status"]
    lookup_field = "hostname"
    lookup_value_regex = "[^/]+"
    policy_prefix = policies.COMPUTE_NODES
    http_method_names = ["get", "put", "patch", "delete", "head", "options"]
    policy_verbs = {"devices": "show"}

    @extend_schema(request=HostReportSerializer, responses=ComputeNodeSerializer)
    def update(self, request, *args, hostname=None, **kwargs):
        if kwargs.get("partial"):
            return super().update(request, *args, hostname=hostname, **kwargs)
        if not hostname_valid(hostname):
            raise HTTPBadRequest(f"hostname: {HOSTNAME_RULE}", code="api.invalid")
        adopt = self._adopt(request)
        report = HostReportSerializer(data=request.data, context={"hostname": hostname})
        report.is_valid(raise_exception=True)
        reported = compute_node_report(hostname=hostname, report=report.validated_data, adopt=adopt)
        status = 201 if reported.created else 200
        return Response(ComputeNodeSerializer(reported.node).data, status=status)

    def perform_update(self, serializer):
        data = serializer.validated_data
        node = serializer.instance
        if "forced_down" in data:
            if not policy.check(policies.COMPUTE_NODES_FORCE_DOWN, self.request.auth):
                self.permission_denied(
                    self.request,
                    message=f"Policy does not allow {policies.COMPUTE_NODES_FORCE_DOWN} to be "
                    "performed.",
                )
            node = compute_node_force_down(hostname=node.hostname, forced_down=data["forced_down"])
            serializer.instance = node
            if not {"enabled", "disabled_reason"} & set(data):
                return
        enabled = data.get("enabled", node.enabled)
        reason = data.get("disabled_reason", "" if enabled else node.disabled_reason)
        serializer.instance = compute_node_set_enabled(
            hostname=node.hostname, enabled=enabled, reason=reason
        )

    @extend_schema(
        responses={
            204: None,
            409: OpenApiResponse(description="compute_node.in_use: allocations on its tree"),
        }
    )
    def destroy(self, request, *args, hostname=None, **kwargs):
        self.get_object()  # 404 for an unknown host, and the object permission
        compute_node_delete(hostname=hostname)
        return Response(status=204)

    @extend_schema(responses={200: dict})
    @action(detail=True, methods=["get"])
    def devices(self, request, hostname=None):
        """Every assignable unit of the host's devices (VFs, vGPU slots, whole devices) and
        the consumer holding each (``null``: free)."""
        node = self.get_object()
        units = (
            [] if node.provider_id is None else host_device_units(root_provider_id=node.provider_id)
        )
        return Response({"hostname": node.hostname, "devices": units})

    def _adopt(self, request):
        value = request.query_params.get("adopt", "false")
        if value not in ("true", "false"):
            raise HTTPBadRequest("adopt: true or false", code="api.invalid")
        if value == "false":
            return False
        if not policy.check(policies.COMPUTE_NODES_ADOPT, request.auth):
            self.permission_denied(
                request,
                message=f"Policy does not allow {policies.COMPUTE_NODES_ADOPT} to be performed.",
            )
        return True


class ResourceClassViewSet(ApiModelViewSet):
    """Resource classes with their type, unit and description; custom ones are editable."""

    queryset = ResourceClass.objects.order_by("id")
    serializer_class = ResourceClassSerializer
    filterset_class = ResourceClassFilter
    ordering_fields = ["name", "id"]
    lookup_field = "name"
    lookup_value_regex = "[A-Z0-9_]+"
    policy_prefix = policies.API_RESOURCE_CLASSES
    http_method_names = ["get", "put", "patch", "head", "options"]

    def perform_update(self, serializer):
        data = serializer.validated_data
        serializer.instance = resource_class_describe(
            name=serializer.instance.name,
            kind=data.get("kind"),
            unit=data.get("unit"),
            description=data.get("description"),
        )


class ResourcePoolViewSet(ApiModelViewSet):
    """Resource pools (shared storage, IP pools). ``PUT`` creates or replaces a pool's report
    (idempotent; a service or admin token); ``PATCH`` sets ``enabled`` and
    ``disabled_reason`` (any other field is a 400); ``DELETE`` removes the pool and its
    provider, refused with a 409 ``resource_pool.in_use`` while anything is allocated on it."""

    queryset = ResourcePool.objects.select_related("provider")
    serializer_class = ResourcePoolSerializer
    filterset_class = ResourcePoolFilter
    ordering_fields = ["name", "kind", "reported_at", "synced_at", "sync_status"]
    lookup_field = "name"
    lookup_value_regex = "[^/]+"
    policy_prefix = policies.RESOURCE_POOLS
    http_method_names = ["get", "put", "patch", "delete", "head", "options"]

    def paginate_queryset(self, queryset):
        page = super().paginate_queryset(queryset)
        rows = page if page is not None else list(queryset)
        # The page's usage in one read (no query per pool).
        self._usage = pool_usage(provider_ids=[p.provider_id for p in rows if p.provider_id])
        return page

    def get_serializer_context(self):
        context = super().get_serializer_context()
        if getattr(self, "_usage", None) is not None:
            context["pool_usage"] = self._usage
        return context

    @extend_schema(request=PoolReportSerializer, responses=ResourcePoolSerializer)
    def update(self, request, *args, name=None, **kwargs):
        if kwargs.get("partial"):
            return super().update(request, *args, name=name, **kwargs)
        if not hostname_valid(name):
            raise HTTPBadRequest(f"name: {HOSTNAME_RULE}", code="api.invalid")
        report = PoolReportSerializer(data=request.data)
        report.is_valid(raise_exception=True)
        reported = resource_pool_report(name=name, report=report.validated_data)
        status = 201 if reported.created else 200
        return Response(ResourcePoolSerializer(reported.pool).data, status=status)

    def perform_update(self, serializer):
        data = serializer.validated_data
        pool = serializer.instance
        enabled = data.get("enabled", pool.enabled)
        reason = data.get("disabled_reason", "" if enabled else pool.disabled_reason)
        serializer.instance = resource_pool_set_enabled(
            name=pool.name, enabled=enabled, reason=reason
        )

    @extend_schema(
        responses={
            204: None,
            409: OpenApiResponse(description="resource_pool.in_use: allocations on its provider"),
        }
    )
    def destroy(self, request, *args, name=None, **kwargs):
        self.get_object()  # 404 for an unknown pool, and the object permission
        resource_pool_delete(name=name)
        return Response(status=204)
