"""``/api/server-groups/``: Nova's server groups (create, list, show, delete)."""

from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, viewsets
from rest_framework.response import Response

from placementsite.core.rest.serializers import StrictFieldsMixin
from placementsite.core.rest.views import ApiViewMixin, ProjectScopedMixin

from .. import policies
from ..filtersets import ServerGroupFilter
from ..models import ServerGroup
from ..services.server_groups import server_group_create, server_group_delete


class ServerGroupSerializer(StrictFieldsMixin, serializers.ModelSerializer):
    id = serializers.UUIDField(source="uuid", read_only=True)
    rules = serializers.DictField(required=False, default=dict)
    project_id = serializers.CharField(max_length=255, required=False)
    members = serializers.SerializerMethodField()

    class Meta:
        model = ServerGroup
        fields = [
            "id",
            "name",
            "policy",
            "rules",
            "project_id",
            "user_id",
            "members",
            "created_at",
        ]
        read_only_fields = ["id", "user_id", "members", "created_at"]

    def get_members(self, group) -> list[str]:
        """The member servers' ids, in the order they joined."""
        return [str(m.server.uuid) for m in group.members.all()]


class ServerGroupViewSet(
    ProjectScopedMixin,
    ApiViewMixin,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    """Server groups: ``policy`` ``affinity``, ``anti-affinity`` (``rules``:
    ``{"max_server_per_host": N}``), ``soft-affinity`` or ``soft-anti-affinity``. A boot
    joins one with ``scheduler_hints: {"group": id}``; a deleted server leaves it. A group
    belongs to a project (the caller's by default), whose members manage it."""

    queryset = ServerGroup.objects.prefetch_related("members__server")
    serializer_class = ServerGroupSerializer
    filterset_class = ServerGroupFilter
    lookup_field = "uuid"
    lookup_url_kwarg = "pk"
    lookup_value_regex = "[0-9a-fA-F-]{32,36}"
    ordering_fields = ["created_at", "name"]
    policy_prefix = policies.SERVER_GROUPS
    all_projects_rule = policies.SERVER_GROUPS_ALL_PROJECTS

    @extend_schema(request=ServerGroupSerializer, responses={201: ServerGroupSerializer})
    def create(self, request):
        body = ServerGroupSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        project_id = data.get("project_id") or request.auth.project_id
        self.authorize_project(request, project_id, request.auth.user_id)
        group = server_group_create(
            name=data["name"],
            policy=data["policy"],
            rules=data.get("rules"),
            project_id=project_id,
            user_id=request.auth.user_id or "",
        )
        return Response(ServerGroupSerializer(group).data, status=201)

    def destroy(self, request, pk=None):
        server_group_delete(group=self.get_object())
        return Response(status=204)
