"""``/resource_providers/{uuid}/traits`` (1.6+)."""

from placementsite.core import uuids
from placementsite.core.api.microversion import since
from placementsite.core.api.views import PlacementView, latest

from .. import policies
from ..selectors import traits as selectors
from ..services import traits as services
from ..services.generations import provider_not_found
from .traits import cache_headers

TRAIT_NAME = {"type": "string", "minLength": 1, "maxLength": 255}

PROVIDER_TRAITS_BODY = {
    "type": "object",
    "properties": {
        "traits": {"type": "array", "items": TRAIT_NAME, "uniqueItems": True},
        "resource_provider_generation": {"type": "integer"},
    },
    "required": ["traits", "resource_provider_generation"],
    "additionalProperties": False,
}


def provider_uuid_from_path(text):
    """The provider uuid in a URL; anything but a dashed uuid names no provider (404)."""
    found = uuids.parse_strict(text)
    if found is None:
        raise provider_not_found(uuid=text)
    return found


def provider_traits_repr(provider, traits):
    return {
        "traits": [trait.name for trait in traits],
        "resource_provider_generation": provider.generation,
    }


def traits_last_modified(traits):
    return latest(*(trait.last_modified for trait in traits))


class ProviderTraitsView(PlacementView):
    @since("1.6")
    def get(self, request, uuid):
        self.authorize(request, policies.PROVIDER_TRAITS_LIST)
        provider, traits = selectors.provider_traits(provider_uuid=provider_uuid_from_path(uuid))
        return self.respond(
            request,
            provider_traits_repr(provider, traits),
            last_modified=traits_last_modified(traits),
        )

    @since("1.6")
    def put(self, request, uuid):
        self.authorize(request, policies.PROVIDER_TRAITS_UPDATE)
        data = self.json_body(request, PROVIDER_TRAITS_BODY)
        provider, traits = services.provider_traits_set(
            provider_uuid=provider_uuid_from_path(uuid),
            traits=data["traits"],
            generation=data["resource_provider_generation"],
        )
        return self.respond(
            request,
            provider_traits_repr(provider, traits),
            headers=cache_headers(request, traits_last_modified(traits)),
        )

    @since("1.6")
    def delete(self, request, uuid):
        self.authorize(request, policies.PROVIDER_TRAITS_DELETE)
        services.provider_traits_delete(provider_uuid=provider_uuid_from_path(uuid))
        return self.respond(request, status=204)
