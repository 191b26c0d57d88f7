"""``/traits`` and ``/traits/{name}`` (1.6+)."""

from django.utils import timezone
from django.utils.http import http_date

from placementsite.core import json_schema
from placementsite.core.api.errors import HTTPBadRequest
from placementsite.core.api.microversion import since
from placementsite.core.api.views import PlacementView, latest

from .. import policies
from ..selectors import traits as selectors
from ..services import traits as services

LIST_QUERY = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "associated": {"type": "string"}},
    "additionalProperties": False,
}
BAD_NAME_FILTER = (
    "Badly formatted name parameter. Expected name query string parameter in form: "
    '?name=[in|startswith]:[name1,name2|prefix]. Got: "{value}"'
)
BAD_ASSOCIATED = 'The query parameter "associated" only accepts "true" or "false"'


def cache_headers(request, last_modified=None):
    """Last-Modified and Cache-Control from 1.15, for answers ``respond`` leaves bare."""
    if request.microversion < (1, 15):
        return {}
    moment = last_modified or timezone.now()
    return {"Last-Modified": http_date(moment.timestamp()), "Cache-Control": "no-cache"}


def validate_query(request, schema):
    """Placement's check of query parameters (the last value of a repeated key counts)."""
    params = {key: request.GET[key] for key in request.GET}
    json_schema.check(params, schema, format_checker=None, refusal=json_schema.QUERY_REFUSAL)
    return params


def list_filters(params):
    """Keyword arguments of ``traits_list`` from the query parameters of ``GET /traits``."""
    filters = {}
    if "name" in params:
        value = params["name"]
        operator, sep, operand = value.partition(":")
        if not sep or operator not in ("in", "startswith"):
            raise HTTPBadRequest(BAD_NAME_FILTER.format(value=value))
        if operator == "in":
            filters["names_in"] = operand.split(",")
        else:
            filters["prefix"] = operand
    if "associated" in params:
        value = params["associated"].lower()
        if value not in ("true", "false"):
            raise HTTPBadRequest(BAD_ASSOCIATED)
        filters["associated"] = value == "true"
    return filters


class TraitListView(PlacementView):
    @since("1.6")
    def get(self, request):
        self.authorize(request, policies.TRAITS_LIST)
        filters = list_filters(validate_query(request, LIST_QUERY))
        traits = selectors.traits_list(**filters)
        return self.respond(
            request,
            {"traits": [trait.name for trait in traits]},
            last_modified=latest(*(trait.last_modified for trait in traits)),
        )


class TraitDetailView(PlacementView):
    @since("1.6")
    def get(self, request, name):
        self.authorize(request, policies.TRAITS_SHOW)
        trait = selectors.trait_get(name=name)
        return self.respond(
            request,
            status=204,
            last_modified=trait.created_at,
            headers=cache_headers(request, trait.created_at),
        )

    @since("1.6")
    def put(self, request, name):
        self.authorize(request, policies.TRAITS_UPDATE)
        trait, created = services.trait_ensure(name=name)
        headers = {"Location": f"/traits/{trait.name}", **cache_headers(request, trait.created_at)}
        return self.respond(request, status=201 if created else 204, headers=headers)

    @since("1.6")
    def delete(self, request, name):
        self.authorize(request, policies.TRAITS_DELETE)
        services.trait_delete(name=name)
        return self.respond(request, status=204)
