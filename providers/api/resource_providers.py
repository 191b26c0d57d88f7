"""``/resource_providers`` and ``/resource_providers/{uuid}``."""

import orjson
from django.utils import timezone
from django.utils.http import http_date

from placementsite.core import uuids
from placementsite.core.api.errors import HTTPBadRequest, HTTPNotFound
from placementsite.core.api.parsers import require_json
from placementsite.core.api.views import PlacementView, latest
from placementsite.core.gc_pause import cyclic_gc_paused
from placementsite.core.replicas import tolerates_replica_lag

from .. import policies, request_groups
from .. import query_params as qp
from ..selectors import resource_providers as selectors
from ..services import resource_providers as services
from ..services.generations import provider_not_found

NAME = {"type": "string", "minLength": 1, "maxLength": 200}
NULLABLE_UUID = {"anyOf": [qp.UUID, {"type": "null"}]}


def provider_body_schema(version, *, with_uuid):
    properties = {"name": NAME}
    if with_uuid:
        properties["uuid"] = qp.UUID
    if version >= (1, 14):
        properties["parent_provider_uuid"] = NULLABLE_UUID
    return {
        "type": "object",
        "properties": properties,
        "required": ["name"],
        "additionalProperties": False,
    }


# (since, parameter, schema) of GET /resource_providers.
LIST_PARAMETERS = [
    ((1, 0), "name", qp.STRING),
    ((1, 0), "uuid", qp.UUID),
    ((1, 3), "member_of", qp.STRING),
    ((1, 4), "resources", qp.STRING),
    ((1, 14), "in_tree", qp.UUID),
    ((1, 18), "required", qp.STRING),
]


def provider_url(provider):
    return f"/resource_providers/{provider.uuid}"


def provider_relations(version):
    """The links a provider's body names besides ``self``, at a microversion."""
    relations = ["inventories", "usages"]
    if version >= (1, 1):
        relations.append("aggregates")
    if version >= (1, 6):
        relations.append("traits")
    if version >= (1, 11):
        relations.append("allocations")
    return relations


def provider_body(uuid, name, generation, parent, root, *, relations, with_tree):
    """A provider's JSON body; ``uuid``, ``parent`` and ``root`` as text (or None)."""
    url = f"/resource_providers/{uuid}"
    data = {
        "uuid": uuid,
        "name": name,
        "generation": generation,
        "links": [{"rel": "self", "href": url}]
        + [{"rel": rel, "href": f"{url}/{rel}"} for rel in relations],
    }
    if with_tree:
        data["parent_provider_uuid"] = parent
        data["root_provider_uuid"] = root
    return data


def listing_bodies(rows, *, relations, with_tree):
    """:func:`provider_body` of every row (a ProviderRow tuple), for a listing of a whole cloud.

    Each body's links are one orjson Fragment, the links' JSON text joined around the
    provider's uuid (text from the database: hex digits and hyphens, nothing to escape): the
    same bytes as seven dicts per provider, built and encoded several times faster.
    """
    marker = "{uuid}"
    links = provider_body(marker, "", 0, None, None, relations=relations, with_tree=False)["links"]
    pieces = orjson.dumps(links).decode().split(marker)
    fragment = orjson.Fragment
    if not with_tree:
        return [
            {
                "uuid": uuid,
                "name": name,
                "generation": generation,
                "links": fragment(uuid.join(pieces)),
            }
            for uuid, name, generation, _parent, _root, _modified in rows
        ]
    return [
        {
            "uuid": uuid,
            "name": name,
            "generation": generation,
            "links": fragment(uuid.join(pieces)),
            "parent_provider_uuid": parent,
            "root_provider_uuid": root,
        }
        for uuid, name, generation, parent, root, _modified in rows
    ]


def provider_repr(provider, version):
    parent, root = provider.parent_provider_uuid, provider.root_provider_uuid
    return provider_body(
        str(provider.uuid),
        provider.name,
        provider.generation,
        str(parent) if parent else None,
        str(root) if root else None,
        relations=provider_relations(version),
        with_tree=version >= (1, 14),
    )


def uuid_in_url(uuid):
    """The provider uuid of a URL; a malformed one names no provider (404)."""
    found = uuids.parse(uuid)
    if found is None:
        raise provider_not_found(uuid=uuid)
    return found


@tolerates_replica_lag("GET", "HEAD")
class ResourceProviderListView(PlacementView):
    def get(self, request):
        # A whole cloud's listing allocates a row, a body and their strings per provider, none
        # in a reference cycle: at 100,000 providers the cyclic collector walked the worker's
        # objects for a third of the Python time.
        with cyclic_gc_paused():
            return self._list(request)

    def _list(self, request):
        self.authorize(request, policies.RESOURCE_PROVIDERS_LIST)
        version = request.microversion
        query = request.GET
        qp.validate_query(query, qp.schema_for(version, LIST_PARAMETERS))
        group = request_groups.parse_group(query, version)
        uuid = uuids.parse(query["uuid"]) if "uuid" in query else None
        try:
            listing = selectors.provider_listing(group=group, name=query.get("name"), uuid=uuid)
        except request_groups.UnknownResourceClass as exc:
            raise HTTPBadRequest(f"Invalid resource class in resources parameter: {exc}") from None
        except request_groups.UnknownTrait as exc:
            raise HTTPBadRequest(f'Invalid trait(s) in "required" parameter: {exc}') from None
        bodies = listing_bodies(
            listing.rows, relations=provider_relations(version), with_tree=version >= (1, 14)
        )
        return self.respond_encoded(
            request, {"resource_providers": bodies}, last_modified=latest(listing.last_modified)
        )

    def post(self, request):
        self.authorize(request, policies.RESOURCE_PROVIDERS_CREATE)
        version = request.microversion
        data = self.json_body(request)
        qp.validate_body(data, provider_body_schema(version, with_uuid=True))
        provider = services.resource_provider_create(
            name=data["name"],
            uuid=uuids.parse(data["uuid"]) if data.get("uuid") else None,
            parent_uuid=uuids.parse(data.get("parent_provider_uuid") or ""),
        )
        headers = {"Location": provider_url(provider)}
        if version < (1, 20):
            return self.respond(request, status=201, headers=headers)
        # From 1.20 the new provider is the body, with a 200 (not a 201).
        headers["Last-Modified"] = http_date(provider.last_modified.timestamp())
        headers["Cache-Control"] = "no-cache"
        return self.respond(request, provider_repr(provider, version), headers=headers)


class ResourceProviderDetailView(PlacementView):
    def get(self, request, uuid):
        self.authorize(request, policies.RESOURCE_PROVIDERS_SHOW)
        provider = selectors.resource_provider_get(uuid=uuid_in_url(uuid))
        return self.respond(
            request,
            provider_repr(provider, request.microversion),
            last_modified=provider.last_modified,
        )

    def put(self, request, uuid):
        require_json(request)  # the content type first, as Placement's require_content
        self.authorize(request, policies.RESOURCE_PROVIDERS_UPDATE)
        version = request.microversion
        selectors.resource_provider_get(uuid=uuid_in_url(uuid))  # 404 before the body
        data = self.json_body(request)
        qp.validate_body(data, provider_body_schema(version, with_uuid=False))
        changes = {}
        if "parent_provider_uuid" in data:
            parent = data["parent_provider_uuid"]
            changes["parent_uuid"] = uuids.parse(parent) if parent is not None else None
        provider = services.resource_provider_update(
            uuid=uuid_in_url(uuid),
            name=data["name"],
            allow_reparenting=version >= (1, 37),
            **changes,
        )
        headers = {}
        if version >= (1, 15):
            modified = provider.updated_at or timezone.now()
            headers = {
                "Last-Modified": http_date(modified.timestamp()),
                "Cache-Control": "no-cache",
            }
        return self.respond(request, provider_repr(provider, version), headers=headers)

    def delete(self, request, uuid):
        self.authorize(request, policies.RESOURCE_PROVIDERS_DELETE)
        found = uuids.parse(uuid)
        if found is None:
            raise HTTPNotFound(f"No resource provider with uuid {uuid} found for delete")
        services.resource_provider_delete(uuid=found)
        return self.respond(request, status=204)
