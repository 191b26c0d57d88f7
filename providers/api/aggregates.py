"""``/resource_providers/{uuid}/aggregates`` (1.1+).

Before 1.19 the body is a bare list of aggregate uuids and the provider
generation is neither shown, checked nor bumped; from 1.19 the body is an
object with ``aggregates`` and ``resource_provider_generation``.
"""

from placementsite.core.api.microversion import since
from placementsite.core.api.parsers import require_json
from placementsite.core.api.views import PlacementView

from .. import policies
from ..selectors import aggregates as selectors
from ..selectors import resource_providers as provider_selectors
from ..services import aggregates as services
from .provider_traits import provider_uuid_from_path
from .traits import cache_headers

AGGREGATE_UUIDS = {
    "type": "array",
    "items": {"type": "string", "format": "uuid"},
    "uniqueItems": True,
}

AGGREGATES_BODY_1_1 = AGGREGATE_UUIDS

AGGREGATES_BODY_1_19 = {
    "type": "object",
    "properties": {
        "aggregates": AGGREGATE_UUIDS,
        "resource_provider_generation": {"type": "integer"},
    },
    "required": ["aggregates", "resource_provider_generation"],
    "additionalProperties": False,
}


def with_generation(request):
    return request.microversion >= (1, 19)


def aggregates_repr(request, provider, aggregate_uuids):
    data = {"aggregates": aggregate_uuids}
    if with_generation(request):
        data["resource_provider_generation"] = provider.generation
    return data


class ProviderAggregatesView(PlacementView):
    @since("1.1")
    def get(self, request, uuid):
        self.authorize(request, policies.AGGREGATES_LIST)
        provider, aggregate_uuids = selectors.provider_aggregates(
            provider_uuid=provider_uuid_from_path(uuid)
        )
        # Placement records no time for memberships: Last-Modified is now.
        return self.respond(request, aggregates_repr(request, provider, aggregate_uuids))

    @since("1.1")
    def put(self, request, uuid):
        require_json(request)
        self.authorize(request, policies.AGGREGATES_UPDATE)
        provider_uuid = provider_uuid_from_path(uuid)
        # As in Placement: an unknown provider is a 404 before its body is read.
        provider_selectors.resource_provider_get(uuid=provider_uuid)
        if with_generation(request):
            data = self.json_body(request, AGGREGATES_BODY_1_19)
            aggregates, generation = data["aggregates"], data["resource_provider_generation"]
        else:
            aggregates, generation = self.json_body(request, AGGREGATES_BODY_1_1), None
        provider, aggregate_uuids = services.provider_aggregates_set(
            provider_uuid=provider_uuid, aggregates=aggregates, generation=generation
        )
        return self.respond(
            request,
            aggregates_repr(request, provider, aggregate_uuids),
            headers=cache_headers(request),
        )
