"""Allocations, usages and the reshaper: the Placement endpoints of this app.

Views parse the body for the request's microversion, build the service's
input, call one service or selector and render the shape of that
microversion. The rules live in :mod:`allocations.services.allocations` and
:mod:`allocations.selectors.allocations`.
"""

from placementsite.core import json_schema, uuids
from placementsite.core.api.errors import HTTPBadRequest, HTTPNotFound
from placementsite.core.api.microversion import since
from placementsite.core.api.views import PlacementView, latest
from placementsite.core.replicas import tolerates_replica_lag
from providers.services.inventories import ProviderInventories, inventory_fields

from .. import policies
from ..selectors import allocations as selectors
from ..services import allocations as services
from ..services.allocations import GENERATION_UNCHECKED, ConsumerAllocationWrite
from . import schemas


def _canonical(uuid):
    """A uuid in its canonical form; text that is no uuid stays as it is."""
    return uuids.parse(uuid) or uuid


def _allocations_by_provider(data, version):
    """The ``allocations`` of a body as ``{provider uuid: {class: amount}}``."""
    if version < (1, 12):
        # A list of {"resource_provider": {"uuid": ...}, "resources": {...}}; the
        # last entry for a provider wins.
        return {
            _canonical(item["resource_provider"]["uuid"]): {
                name: int(amount) for name, amount in item["resources"].items()
            }
            for item in data
        }
    return {
        _canonical(rp_uuid): {name: int(amount) for name, amount in entry["resources"].items()}
        for rp_uuid, entry in data.items()
    }


def consumer_allocations(consumer_uuid, data, version):
    """The service input for one consumer's part of a body."""
    return ConsumerAllocationWrite(
        consumer_uuid=consumer_uuid,
        allocations=_allocations_by_provider(data["allocations"], version),
        project_id=data.get("project_id", services.INCOMPLETE_CONSUMER_PROJECT_ID),
        user_id=data.get("user_id", services.INCOMPLETE_CONSUMER_USER_ID),
        generation=(
            data.get("consumer_generation") if version >= (1, 28) else GENERATION_UNCHECKED
        ),
        consumer_type=data.get("consumer_type") if version >= (1, 38) else None,
    )


def _consumer_uuid_or_400(text):
    canonical = uuids.parse(text)
    if canonical is None:
        raise HTTPBadRequest(f"Malformed consumer_uuid: {text}")
    return canonical


def _consumers(body, version):
    return [
        consumer_allocations(_consumer_uuid_or_400(uuid), data, version)
        for uuid, data in body.items()
    ]


def _last_modified(allocations):
    return latest(*((a.updated_at or a.created_at) for a in allocations))


def _provider_or_404(uuid, message):
    provider = selectors.provider_by_uuid(uuid=uuid)
    if provider is None:
        raise HTTPNotFound(message)
    return provider


def query_params(request, schema):
    """The query string as a dict, checked against ``schema`` (last value wins)."""
    params = {key: request.GET.get(key) for key in request.GET}
    json_schema.check(params, schema, format_checker=None, refusal=json_schema.QUERY_REFUSAL)
    return params


# --- /allocations/{consumer_uuid} ------------------------------------------------


def consumer_allocations_repr(allocations, version):
    by_provider = {}
    for allocation in allocations:
        provider = allocation.resource_provider
        entry = by_provider.setdefault(
            str(provider.uuid), {"generation": provider.generation, "resources": {}}
        )
        entry["resources"][allocation.resource_class.name] = allocation.used
    body = {"allocations": by_provider}
    if allocations and version >= (1, 12):
        consumer = allocations[0].consumer
        body["project_id"] = consumer.project.external_id
        body["user_id"] = consumer.user.external_id
        if version >= (1, 28):
            body["consumer_generation"] = consumer.generation
        if version >= (1, 38):
            consumer_type = consumer.consumer_type
            body["consumer_type"] = (
                consumer_type.name if consumer_type else selectors.UNKNOWN_CONSUMER_TYPE
            )
    return body


class ConsumerAllocationsView(PlacementView):
    def get(self, request, consumer_uuid):
        self.authorize(request, policies.ALLOCATIONS_LIST)
        allocations = selectors.allocations_for_consumer(consumer_uuid=consumer_uuid)
        return self.respond(
            request,
            consumer_allocations_repr(allocations, request.microversion),
            last_modified=_last_modified(allocations),
        )

    def put(self, request, consumer_uuid):
        self.authorize(request, policies.ALLOCATIONS_UPDATE)
        canonical = _consumer_uuid_or_400(consumer_uuid)
        version = request.microversion
        data = self.json_body(request, schemas.put_allocations_schema(version))
        services.allocation_replace(consumer=consumer_allocations(canonical, data, version))
        return self.respond(request, status=204)

    def delete(self, request, consumer_uuid):
        self.authorize(request, policies.ALLOCATIONS_DELETE)
        services.allocation_delete(consumer_uuid=consumer_uuid)
        return self.respond(request, status=204)


# --- /allocations (1.13) ------------------------------------------------------------


class AllocationsView(PlacementView):
    http_method_names = ["post"]

    @since("1.13")
    def post(self, request):
        self.authorize(request, policies.ALLOCATIONS_MANAGE)
        version = request.microversion
        body = self.json_body(request, schemas.post_allocations_schema(version))
        services.allocations_replace(consumers=_consumers(body, version))
        return self.respond(request, status=204)


# --- /resource_providers/{uuid}/allocations and /usages --------------------------


class ProviderAllocationsView(PlacementView):
    http_method_names = ["get"]

    def get(self, request, uuid):
        self.authorize(request, policies.PROVIDER_ALLOCATIONS_LIST)
        provider = _provider_or_404(
            uuid,
            f"Resource provider '{uuid}' not found: No resource provider with uuid {uuid} found",
        )
        allocations = selectors.allocations_for_provider(provider=provider)
        with_generation = request.microversion >= (1, 28)
        by_consumer = {}
        for allocation in allocations:
            consumer = allocation.consumer
            entry = by_consumer.setdefault(str(consumer.uuid), {"resources": {}})
            entry["resources"][allocation.resource_class.name] = allocation.used
            if with_generation:
                entry["consumer_generation"] = consumer.generation
        body = {"allocations": by_consumer, "resource_provider_generation": provider.generation}
        return self.respond(request, body, last_modified=_last_modified(allocations))


@tolerates_replica_lag()
class ProviderUsagesView(PlacementView):
    http_method_names = ["get"]

    def get(self, request, uuid):
        self.authorize(request, policies.PROVIDER_USAGES)
        provider = _provider_or_404(
            uuid,
            f"No resource provider with uuid {uuid} found: "
            f"No resource provider with uuid {uuid} found",
        )
        body = {
            "resource_provider_generation": provider.generation,
            "usages": selectors.usages_for_provider(provider=provider),
        }
        return self.respond(request, body)


@tolerates_replica_lag()
class UsagesView(PlacementView):
    http_method_names = ["get"]

    @since("1.9")
    def get(self, request):
        version = request.microversion
        project_id = request.GET.get("project_id")
        self.authorize(request, policies.USAGES, {"project_id": project_id})
        params = query_params(request, schemas.usages_query_schema(version))
        if version >= (1, 38):
            usages = selectors.usages_for_project_by_consumer_type(
                project_id=params["project_id"],
                user_id=params.get("user_id"),
                consumer_type=params.get("consumer_type"),
            )
        else:
            usages = selectors.usages_for_project(
                project_id=params["project_id"], user_id=params.get("user_id")
            )
        return self.respond(request, {"usages": usages})


# --- /reshaper (1.30) ----------------------------------------------------------------


class ReshaperView(PlacementView):
    http_method_names = ["post"]

    @since("1.30")
    def post(self, request):
        self.authorize(request, policies.RESHAPE)
        version = request.microversion
        body = self.json_body(request, schemas.reshaper_schema(version))
        inventories = {
            _canonical(rp_uuid): ProviderInventories(
                generation=entry["resource_provider_generation"],
                inventories={
                    name: inventory_fields(record=record)
                    for name, record in entry["inventories"].items()
                },
            )
            for rp_uuid, entry in body["inventories"].items()
        }
        services.allocations_reshape(
            inventories=inventories,
            consumers=_consumers(body["allocations"], version),
            # Placement's capacity rule from 1.26: the reshaper (1.30+) always has it.
            allow_reserved_equal_total=True,
        )
        return self.respond(request, status=204)
