"""``POST /api/compute-nodes/{hostname}/drain/``: served by the scheduler, which moves the
servers; the host record itself is the providers app's."""

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.response import Response

from placementsite.core.rest.serializers import StrictSerializer
from placementsite.core.rest.views import ApiViewSet
from providers.models import ComputeNode

from .. import policies
from ..services.drain import host_drain


class DrainSerializer(StrictSerializer):
    unknown_field_message = "unknown field"

    reason = serializers.CharField(max_length=255, required=False, allow_blank=True)


class HostDrainViewSet(ApiViewSet):
    """Drain a host: it is disabled with ``reason`` (default "drained"), then every server on it
    is moved by the scheduler (live-migrated, or cold-migrated when it holds devices); the
    answer says per server what happened. A server that cannot move stays, reported."""

    policy_prefix = policies.COMPUTE_NODES
    lookup_field = "hostname"
    lookup_value_regex = "[^/]+"

    @extend_schema(request=DrainSerializer, responses={200: dict})
    @action(detail=True, methods=["post"])
    def drain(self, request, hostname=None):
        body = DrainSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        node = ComputeNode.objects.select_related("provider").filter(hostname=hostname).first()
        if node is None:
            raise Http404
        result = host_drain(node=node, reason=body.validated_data.get("reason", ""))
        return Response(
            {
                "host": result.hostname,
                "enabled": False,
                "disabled_reason": result.disabled_reason,
                "moved": result.moved,
                "failed": result.failed,
                "servers": result.servers,
            }
        )
