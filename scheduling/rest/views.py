"""/api/flavors/, /api/servers/, /api/scheduler/explain/ and /api/capacity/: parse, call one
service or selector, render."""

from django.db.models import ProtectedError
from django.http import Http404, JsonResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from placementsite.core import uuids
from placementsite.core.api import policy
from placementsite.core.api.errors import placement_error_for
from placementsite.core.exceptions import Conflict, InvalidRequest
from placementsite.core.rest.errors import error_json
from placementsite.core.rest.views import (
    ApiModelViewSet,
    ApiViewMixin,
    ApiViewSet,
    LargeAnswerRenderer,
    ProjectScopedMixin,
)

from .. import policies
from ..filtersets import FlavorFilter, ServerFilter
from ..models import AggregateMetadata, Flavor, Server
from ..selectors.capacity import flavor_capacity
from ..selectors.flavors import FlavorViewer, flavor_lookup, flavor_projects, flavors_visible
from ..selectors.scheduler import explain
from ..selectors.server_groups import GroupViewer
from ..services.aggregates import (
    aggregate_metadata_create,
    aggregate_metadata_delete,
    aggregate_metadata_update,
)
from ..services.flavors import flavor_access_add, flavor_access_remove
from ..services.servers import (
    BootStats,
    NoValidHost,
    scheduling_spec,
    server_delete,
    servers_create,
)
from .serializers import (
    AggregateSerializer,
    CapacityQuerySerializer,
    FlavorAccessSerializer,
    FlavorSerializer,
    ServerRequestSerializer,
    ServerSerializer,
)


def flavor_viewer(request):
    """The caller as flavors see it: its project, and whether it sees every private one."""
    context = request.auth
    return FlavorViewer(
        project_id=context.project_id,
        all_projects=policy.check(policies.FLAVORS_ALL_PROJECTS, context),
    )


def group_viewer(request):
    """The caller as server groups see it: its project's, or every one."""
    context = request.auth
    return GroupViewer(
        project_id=context.project_id,
        all_projects=policy.check(policies.SERVER_GROUPS_ALL_PROJECTS, context),
    )


def with_flavors(request):
    """The context of a serializer naming a flavor (the caller may use only those it sees)
    or a server group (likewise)."""
    return {
        "request": request,
        "flavor_viewer": flavor_viewer(request),
        "group_viewer": group_viewer(request),
    }


class FlavorViewSet(ApiModelViewSet):
    """Flavors: a size of instance and its extra specs. ``{id}`` may be the flavor's name.

    A private flavor (``is_public: false``) is listed, shown and usable only for the projects
    given it (``/api/flavors/{id}/access/``, as Nova's flavor access) and for callers
    ``placement:api:flavors:all_projects`` allows."""

    queryset = Flavor.objects.all()
    serializer_class = FlavorSerializer
    filterset_class = FlavorFilter
    ordering_fields = ["name", "vcpus", "ram", "disk", "id"]
    policy_prefix = policies.FLAVORS
    policy_verbs = {
        "access": "access:list",
        "access_add": "access:add",
        "access_remove": "access:remove",
    }
    lookup_value_regex = "[^/]+"

    def get_queryset(self):
        return flavors_visible(viewer=flavor_viewer(self.request))

    def get_object(self):
        found = flavor_lookup(value=self.kwargs["pk"], viewer=flavor_viewer(self.request))
        if found is None:
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

    def _access(self, flavor, status=200):
        return Response(
            {"flavor": flavor.name, "projects": flavor_projects(flavor=flavor)}, status=status
        )

    @extend_schema(request=None, responses={200: FlavorAccessSerializer})
    @action(detail=True, methods=["get"])
    def access(self, request, pk=None):
        """The projects given this private flavor."""
        return self._access(self.get_object())

    @extend_schema(request=FlavorAccessSerializer, responses={201: FlavorAccessSerializer})
    @access.mapping.post
    def access_add(self, request, pk=None):
        """Give a project this private flavor: ``{"project_id": "..."}``."""
        body = FlavorAccessSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        flavor = self.get_object()
        flavor_access_add(flavor=flavor, project_id=body.validated_data["project_id"])
        return self._access(flavor, status=201)

    @extend_schema(request=None, responses={204: None})
    @action(detail=True, methods=["delete"], url_path=r"access/(?P<project_id>[^/]+)")
    def access_remove(self, request, pk=None, project_id=None):
        """Take this private flavor from a project."""
        flavor_access_remove(flavor=self.get_object(), project_id=project_id)
        return Response(status=204)


def no_valid_host_response(request, exc):
    """The 409 of a NoValidHost, with the funnel of its last pass as the error's ``explain``."""
    error = placement_error_for(exc)
    body = error_json(request._request, error.status, error.detail, error.code)
    body["errors"][0]["explain"] = exc.explain
    return JsonResponse(body, status=error.status)


IDEMPOTENCY_KEY = "Idempotency-Key"
IDEMPOTENCY_KEY_MAX = 255


def idempotency_key(request):
    """The client's ``Idempotency-Key`` (None when not given): printable, 1 to 255 chars."""
    key = request.headers.get(IDEMPOTENCY_KEY)
    if key is None:
        return None
    if not 0 < len(key) <= IDEMPOTENCY_KEY_MAX or not key.isprintable():
        raise InvalidRequest(
            f"{IDEMPOTENCY_KEY} must be 1 to {IDEMPOTENCY_KEY_MAX} printable characters.",
            code="scheduler.invalid_idempotency_key",
        )
    return key


class ServerViewSet(
    ProjectScopedMixin,
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
    policy_prefix = policies.SERVERS
    all_projects_rule = policies.SERVERS_ALL_PROJECTS

    @extend_schema(request=ServerRequestSerializer, responses={201: ServerSerializer(many=True)})
    def create(self, request):
        body = ServerRequestSerializer(data=request.data, context=with_flavors(request))
        body.is_valid(raise_exception=True)
        data = body.validated_data
        self.authorize_project(request, data["project_id"], data["user_id"])
        key = idempotency_key(request)
        stats = BootStats()
        try:
            placed = servers_create(
                name=data["name"],
                flavor=data["flavor"],
                project_id=data["project_id"],
                user_id=data["user_id"],
                count=data["count"],
                hints=data["scheduler_hints"],
                availability_zone=data["availability_zone"],
                request_key=key,
                stats=stats,
                group=data["group"],
                requested_resources=data["requested_resources"],
            )
        except NoValidHost as exc:
            return no_valid_host_response(request, exc)
        # The servers just made are rendered as made (flavor and host in hand); those of an
        # earlier create with the same key as read back.
        servers = placed
        if stats.replayed:
            found = Server.objects.select_related("flavor", "host").filter(
                uuid__in=[s.uuid for s in placed]
            )
            order = {s.uuid: i for i, s in enumerate(placed)}
            servers = sorted(found, key=lambda s: order[s.uuid])
        rendered = ServerSerializer(servers, many=True).data
        response = Response({"servers": rendered}, status=201)
        if stats.replayed:
            response["Idempotent-Replayed"] = "true"
        return response

    def destroy(self, request, pk=None):
        server_delete(server=self.get_object())
        return Response(status=204)


class SchedulerViewSet(ApiViewSet):
    policy_prefix = policies.SCHEDULER
    replica_reads = frozenset({"explain"})  # claims nothing: a current replica answers

    @extend_schema(request=ServerRequestSerializer, responses={200: dict})
    @action(detail=False, methods=["post"])
    def explain(self, request):
        """The scheduler's funnel for a server create body; claims nothing."""
        body = ServerRequestSerializer(data=request.data, context=with_flavors(request))
        body.is_valid(raise_exception=True)
        data = body.validated_data
        self.authorize_project(request, data["project_id"], data["user_id"])
        spec = scheduling_spec(
            flavor=data["flavor"],
            project_id=data["project_id"],
            user_id=data["user_id"],
            count=data["count"],
            hints=data["scheduler_hints"],
            availability_zone=data["availability_zone"],
            group=data["group"],
            requested_resources=data["requested_resources"],
        )
        answer = {"flavor": data["flavor"].name, **explain(spec=spec, count=data["count"])}
        if not answer["placeable"]:
            # A boot of the same body would answer no valid host: so does explain, with the
            # funnel that says why in the error's ``explain``.
            exc = NoValidHost(
                f"No valid host was found (flavor {data['flavor'].name}).", explain=answer
            )
            return no_valid_host_response(request, exc)
        return Response(answer)


class CapacityViewSet(ApiViewSet):
    policy_prefix = policies.CAPACITY
    renderer_classes = [LargeAnswerRenderer]  # strings and integers, a row per host
    replica_reads = frozenset({"list"})

    @extend_schema(
        parameters=[
            OpenApiParameter("flavor", str, required=True, description="flavor name or id"),
            OpenApiParameter(
                "aggregate", str, description="only hosts in this aggregate (uuid or name)"
            ),
            OpenApiParameter(
                "availability_zone",
                str,
                description="only hosts in this zone (a zone, an aggregate's name or uuid)",
            ),
        ],
        responses={200: dict},
    )
    def list(self, request):
        """How many more instances of a flavor fit, in total and per host; claims nothing."""
        query = CapacityQuerySerializer(data=request.query_params, context=with_flavors(request))
        query.is_valid(raise_exception=True)
        found = flavor_capacity(
            flavor=query.validated_data["flavor"],
            aggregate=query.validated_data.get("aggregate"),
            availability_zone=query.validated_data.get("availability_zone", ""),
        )
        return Response(
            {
                "flavor": found.flavor,
                "total": found.total,
                "hosts": [{"uuid": h.uuid, "name": h.name, "fits": h.fits} for h in found.hosts],
                # False when the engine's budget cut the read: the figures are lower bounds.
                "complete": found.incomplete is None,
                "incomplete_reason": found.incomplete,
            }
        )


class AggregateViewSet(ApiModelViewSet):
    """Aggregates as Nova's host aggregates: uuid, name, availability zone and metadata (what
    ``aggregate_instance_extra_specs`` match and zones name). ``{id}`` is the uuid or the
    name. Membership stays the Placement API's; creating one with a new uuid (or none: a new
    one is made) creates the aggregate."""

    queryset = AggregateMetadata.objects.select_related("aggregate")
    serializer_class = AggregateSerializer
    ordering_fields = ["name", "created_at"]
    policy_prefix = policies.AGGREGATES
    lookup_value_regex = "[^/]+"

    def get_object(self):
        value = self.kwargs["pk"]
        found = None
        parsed = uuids.parse(value)
        if parsed is not None:
            found = self.get_queryset().filter(aggregate__uuid=parsed).first()
        if found is None:
            found = self.get_queryset().filter(name=value).first()
        if found is None:
            raise Http404
        self.check_object_permissions(self.request, found)
        return found

    def perform_create(self, serializer):
        data = serializer.validated_data
        serializer.instance = aggregate_metadata_create(
            uuid=data.get("aggregate", {}).get("uuid"),
            name=data["name"],
            availability_zone=data.get("availability_zone", ""),
            metadata=data.get("metadata", {}),
        )

    def perform_update(self, serializer):
        data = dict(serializer.validated_data)
        data.pop("aggregate", None)
        serializer.instance = aggregate_metadata_update(record=serializer.instance, **data)

    def perform_destroy(self, instance):
        aggregate_metadata_delete(record=instance)
