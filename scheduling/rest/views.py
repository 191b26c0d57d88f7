"""/api/flavors/, /api/servers/, /api/scheduler/explain/ and /api/capacity/: parse, call one
service or selector, render."""

from django.db.models import ProtectedError
from django.http import JsonResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from placementsite.core.api.errors import placement_error_for
from placementsite.core.exceptions import Conflict
from placementsite.core.rest.errors import error_json
from placementsite.core.rest.views import ApiModelViewSet, ApiViewMixin, ApiViewSet

from ..models import Flavor, Server
from ..selectors.capacity import flavor_capacity
from ..selectors.scheduler import explain
from ..services.servers import NoValidHost, scheduling_spec, server_delete, servers_create
from .filters import FlavorFilter, ServerFilter
from .serializers import (
    CapacityQuerySerializer,
    FlavorSerializer,
    ServerRequestSerializer,
    ServerSerializer,
)


class FlavorViewSet(ApiModelViewSet):
    """Flavors: a size of instance and its extra specs. ``{id}`` may be the flavor's name."""

    queryset = Flavor.objects.all()
    serializer_class = FlavorSerializer
    filterset_class = FlavorFilter
    ordering_fields = ["name", "vcpus", "ram", "disk", "id"]
    policy_prefix = "placement:api:flavors"
    lookup_value_regex = "[^/]+"

    def get_object(self):
        value = self.kwargs["pk"]
        found = Flavor.objects.filter(name=value).first()
        if found is None and value.isdigit():
            self.kwargs["pk"] = int(value)
            return super().get_object()
        if found is None:
            from django.http import Http404

            raise Http404
        self.check_object_permissions(self.request, found)
        return found

    def perform_destroy(self, instance):
        try:
            instance.delete()
        except ProtectedError:
            raise Conflict(
                f"Flavor {instance.name} is used by servers.", code="scheduler.flavor_in_use"
            ) from None


def no_valid_host_response(request, exc):
    """The 409 of a NoValidHost, with the funnel of its last pass as the error's ``explain``."""
    error = placement_error_for(exc)
    body = error_json(request._request, error.status, error.detail, error.code)
    body["errors"][0]["explain"] = exc.explain
    return JsonResponse(body, status=error.status)


class ServerViewSet(
    ApiViewMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    """Servers placed by the scheduler; each id is the Placement consumer of its allocations."""

    queryset = Server.objects.select_related("flavor", "host")
    serializer_class = ServerSerializer
    filterset_class = ServerFilter
    ordering_fields = ["created_at", "name"]
    lookup_field = "uuid"
    lookup_url_kwarg = "pk"
    policy_prefix = "placement:api:servers"

    @extend_schema(request=ServerRequestSerializer, responses={201: ServerSerializer(many=True)})
    def create(self, request):
        body = ServerRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        try:
            placed = servers_create(
                name=data["name"],
                flavor=data["flavor"],
                project_id=data["project_id"],
                user_id=data["user_id"],
                count=data["count"],
                hints=data["scheduler_hints"],
                availability_zone=data["availability_zone"],
            )
        except NoValidHost as exc:
            return no_valid_host_response(request, exc)
        servers = Server.objects.select_related("flavor", "host").filter(
            uuid__in=[s.uuid for s in placed]
        )
        order = {s.uuid: i for i, s in enumerate(placed)}
        rendered = ServerSerializer(sorted(servers, key=lambda s: order[s.uuid]), many=True).data
        return Response({"servers": rendered}, status=201)

    def destroy(self, request, pk=None):
        server_delete(server=self.get_object())
        return Response(status=204)


class SchedulerViewSet(ApiViewSet):
    policy_prefix = "placement:api:scheduler"

    @extend_schema(request=ServerRequestSerializer, responses={200: dict})
    @action(detail=False, methods=["post"])
    def explain(self, request):
        """The scheduler's funnel for a server create body; claims nothing."""
        body = ServerRequestSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        spec = scheduling_spec(
            flavor=data["flavor"],
            project_id=data["project_id"],
            user_id=data["user_id"],
            count=data["count"],
            hints=data["scheduler_hints"],
            availability_zone=data["availability_zone"],
        )
        return Response({"flavor": data["flavor"].name, **explain(spec)})


class CapacityViewSet(ApiViewSet):
    policy_prefix = "placement:api:capacity"

    @extend_schema(
        parameters=[
            OpenApiParameter("flavor", str, required=True, description="flavor name or id"),
            OpenApiParameter("aggregate", str, description="only hosts in this aggregate"),
        ],
        responses={200: dict},
    )
    def list(self, request):
        """How many more instances of a flavor fit, in total and per host; claims nothing."""
        query = CapacityQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        aggregate = query.validated_data.get("aggregate")
        found = flavor_capacity(
            flavor=query.validated_data["flavor"],
            aggregate=str(aggregate) if aggregate else None,
        )
        return Response(
            {
                "flavor": found.flavor,
                "total": found.total,
                "hosts": [{"uuid": h.uuid, "name": h.name, "fits": h.fits} for h in found.hosts],
            }
        )
