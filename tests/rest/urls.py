"""The real URLs plus a small viewset under /api/ that exercises the shared plumbing."""

from django.urls import include, path
from rest_framework import serializers
from rest_framework.response import Response

from placementsite.core.rest.views import ApiReadOnlyViewSet, ApiRouter, ApiViewSet
from placementsite.urls import urlpatterns as real_urlpatterns
from providers.models import Trait


class TraitSerializer(serializers.ModelSerializer):
    class Meta:
        model = Trait
        fields = ["id", "name"]


class TraitViewSet(ApiReadOnlyViewSet):
    queryset = Trait.objects.order_by("id")
    serializer_class = TraitSerializer
    filterset_fields = ["name"]
    ordering_fields = ["name", "id"]
    policy_prefix = "placement:api:test_traits"


class EchoSerializer(serializers.Serializer):
    amount = serializers.IntegerField(min_value=0)
    name = serializers.CharField(max_length=10)


class EchoViewSet(ApiViewSet):
    policy_prefix = "placement:api:test_echo"

    def create(self, request):
        serializer = EchoSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        return Response(serializer.data, status=201)

    def retrieve(self, request, pk=None):
        raise RuntimeError("an unexpected failure")


router = ApiRouter()
router.register("test-traits", TraitViewSet, basename="test-trait")
router.register("test-echo", EchoViewSet, basename="test-echo")

urlpatterns = [path("api/", include(router.urls)), *real_urlpatterns]
