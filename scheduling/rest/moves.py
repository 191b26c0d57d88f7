"""Moves under /api/: ``POST /api/servers/{id}/migrate|resize|live-migrate|evacuate/`` and
``/api/migrations/`` (list, show, confirm, revert, finish, fail). Serializers and viewsets
of moves together, apart from the servers' own module (the filter set of
``/api/migrations/`` is with the app's others, in ``scheduling/filtersets.py``)."""

from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from placementsite.core import uuids
from placementsite.core.rest.serializers import StrictSerializer
from placementsite.core.rest.views import ApiViewMixin, ApiViewSet, ProjectScopedMixin

from .. import policies
from ..filtersets import MigrationFilter
from ..models import Migration, Server
from ..services import migrations as moves
from ..services.servers import NoValidHost
from .serializers import FlavorField
from .views import no_valid_host_response, with_flavors

# --- serializers ---------------------------------------------------------------------------


class MigrationSerializer(serializers.ModelSerializer):
    id = serializers.UUIDField(source="uuid", read_only=True)
    server = serializers.UUIDField(source="server_uuid", read_only=True)
    source = serializers.UUIDField(source="source.uuid", read_only=True, default=None)
    source_host = serializers.CharField(source="source.name", read_only=True, default=None)
    dest = serializers.UUIDField(source="dest.uuid", read_only=True, default=None)
    dest_host = serializers.CharField(source="dest.name", read_only=True, default=None)
    old_flavor = serializers.CharField(source="old_flavor.name", read_only=True)
    new_flavor = serializers.CharField(source="new_flavor.name", read_only=True)
    lease_expires_at = serializers.DateTimeField(read_only=True)

    class Meta:
        model = Migration
        fields = [
            "id",
            "server",
            "kind",
            "status",
            "source",
            "source_host",
            "dest",
            "dest_host",
            "old_flavor",
            "new_flavor",
            "source_allocations",
            "dest_allocations",
            "lease_expires_at",
            "created_at",
            "updated_at",
            "finished_at",
            "cleaned_at",
            "error",
        ]
        read_only_fields = fields


class _StrictSerializer(StrictSerializer):
    unknown_field_message = "unknown field"


class MoveSerializer(_StrictSerializer):
    host = serializers.CharField(max_length=255, required=False, allow_null=True)


@extend_schema_field(OpenApiTypes.STR)
class FlavorRef(FlavorField):
    """A flavor by name or id (a string in the OpenAPI document)."""


class ResizeSerializer(_StrictSerializer):
    flavor = FlavorRef()


class SettleSerializer(_StrictSerializer):
    consumer_generation = serializers.IntegerField(required=False, allow_null=True)


class FailSerializer(_StrictSerializer):
    reason = serializers.CharField(max_length=2000, required=False, allow_blank=True)


# --- views -------------------------------------------------------------------------------------


def _migration_response(migration, status=200):
    fresh = Migration.objects.select_related("source", "dest", "old_flavor", "new_flavor").get(
        pk=migration.pk
    )
    return Response({"migration": MigrationSerializer(fresh).data}, status=status)


class ServerMoveViewSet(ApiViewSet):
    """Moves of one server; each answers the Migration it started."""

    policy_prefix = policies.SERVERS
    lookup_value_regex = "[^/]+"

    def _server(self, pk):
        named = uuids.parse(pk)
        if named is None:
            raise Http404
        server = Server.objects.select_related("flavor", "host").filter(uuid=named).first()
        if server is None:
            raise Http404
        self.check_object_permissions(self.request, server)
        return server

    def _move(self, request, pk, kind, serializer_class):
        body = serializer_class(data=request.data, context=with_flavors(request))
        body.is_valid(raise_exception=True)
        data = body.validated_data
        try:
            migration = moves.server_move(
                server=self._server(pk),
                kind=kind,
                flavor=data.get("flavor"),
                target_host=data.get("host"),
            )
        except NoValidHost as exc:
            return no_valid_host_response(request, exc)
        return _migration_response(migration, status=201)

    @extend_schema(request=MoveSerializer, responses={201: MigrationSerializer})
    @action(detail=True, methods=["post"])
    def migrate(self, request, pk=None):
        """Cold-migrate to a host the scheduler picks (or ``host``), never the source."""
        return self._move(request, pk, Migration.Kind.MIGRATE, MoveSerializer)

    @extend_schema(request=ResizeSerializer, responses={201: MigrationSerializer})
    @action(detail=True, methods=["post"])
    def resize(self, request, pk=None):
        """Resize to ``flavor``; the source host only with PLACEMENT_RESIZE_SAME_HOST."""
        return self._move(request, pk, Migration.Kind.RESIZE, ResizeSerializer)

    @extend_schema(request=MoveSerializer, responses={201: MigrationSerializer})
    @action(detail=True, methods=["post"], url_path="live-migrate")
    def live_migrate(self, request, pk=None):
        return self._move(request, pk, Migration.Kind.LIVE_MIGRATE, MoveSerializer)

    @extend_schema(request=MoveSerializer, responses={201: MigrationSerializer})
    @action(detail=True, methods=["post"])
    def evacuate(self, request, pk=None):
        """Rebuild elsewhere; the source's compute node is marked down (disabled)."""
        return self._move(request, pk, Migration.Kind.EVACUATE, MoveSerializer)


class MigrationViewSet(
    ProjectScopedMixin,
    ApiViewMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    """Moves, newest first. Filters: ``status`` (repeatable), ``kind``, ``server``, ``host``
    (source or destination, name or uuid), ``older_than`` (ISO 8601), ``in_flight``."""

    queryset = Migration.objects.select_related("source", "dest", "old_flavor", "new_flavor")
    serializer_class = MigrationSerializer
    filterset_class = MigrationFilter
    ordering_fields = ["created_at", "updated_at", "status", "kind"]
    lookup_field = "uuid"
    lookup_url_kwarg = "pk"
    policy_prefix = policies.MIGRATIONS
    all_projects_rule = policies.MIGRATIONS_ALL_PROJECTS

    def get_object(self):
        named = uuids.parse(self.kwargs["pk"])
        if named is None:
            raise Http404
        self.kwargs["pk"] = named
        return super().get_object()

    def _settle(self, request, service):
        body = SettleSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        generation = body.validated_data.get("consumer_generation", ...)
        return _migration_response(service(migration=self.get_object(), generation=generation))

    @extend_schema(request=SettleSerializer, responses={200: MigrationSerializer})
    @action(detail=True, methods=["post"])
    def confirm(self, request, pk=None):
        """Keep the destination; the migration consumer's allocations are freed."""
        return self._settle(request, moves.migration_confirm)

    @extend_schema(request=SettleSerializer, responses={200: MigrationSerializer})
    @action(detail=True, methods=["post"])
    def revert(self, request, pk=None):
        """Back to the source: its allocations return to the server, the destination frees."""
        return self._settle(request, moves.migration_revert)

    @extend_schema(request=None, responses={200: MigrationSerializer})
    @action(detail=True, methods=["post"])
    def finish(self, request, pk=None):
        """The move is done: a live migration frees its source and ends `completed`; any other
        waits for a confirm or a revert."""
        return _migration_response(moves.migration_finish(migration=self.get_object()))

    @extend_schema(request=FailSerializer, responses={200: MigrationSerializer})
    @action(detail=True, methods=["post"])
    def fail(self, request, pk=None):
        """The move failed: reverted, and the migration ends ``error``."""
        body = FailSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        migration = moves.migration_fail(
            migration=self.get_object(), reason=body.validated_data.get("reason", "")
        )
        return _migration_response(migration)
