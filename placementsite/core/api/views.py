"""The base class of every Placement API view, and ``GET /``."""

import datetime as dt
import logging

import orjson
from django.http import HttpResponse
from django.utils import timezone
from django.utils.http import http_date
from rest_framework.response import Response
from rest_framework.views import APIView

from placementsite.core import json_schema

from . import microversion, policy
from .errors import HTTPUnauthorized
from .parsers import parse_json, require_json

logger = logging.getLogger("placement.api")


class PlacementView(APIView):
    """A DRF view with Placement's conventions.

    Subclasses parse input with :meth:`json_body` and :func:`query`, check
    policy with :meth:`authorize`, call one service or selector and answer
    with :meth:`respond`.
    """

    http_method_names = ["get", "put", "post", "delete", "head"]

    @property
    def allowed_methods(self):
        """The methods for ``Allow``: those Placement routes; HEAD, answered by GET, is not one."""
        return [m for m in super().allowed_methods if m not in ("HEAD", "OPTIONS")]

    def dispatch(self, request, *args, **kwargs):
        response = super().dispatch(request, *args, **kwargs)
        # DRF keeps the response on the view, and the view is in a reference cycle with its
        # request (the request's parser_context names the view): the response, body and all,
        # would stay in memory until the cyclic garbage collector next runs, megabytes for a
        # large allocation candidates answer. Dropping the reference frees it with the request.
        self.response = None
        return response

    def initial(self, request, *args, **kwargs):
        # Fail closed, and say why: a request that reached a Placement view without the
        # middleware's authentication (a URL it did not recognise as the API's) is refused.
        if getattr(request._request, "microversion", None) is None:
            logger.error(
                "%s %s reached a Placement view without passing PlacementApiMiddleware "
                "(SCRIPT_NAME %r); refused",
                request.method,
                request.path_info,
                request.META.get("SCRIPT_NAME", ""),
            )
            raise HTTPUnauthorized("Authentication required")
        super().initial(request, *args, **kwargs)

    def authorize(self, request, rule, target=None):
        policy.authorize(request, rule, target)

    def json_body(self, request, schema=None):
        require_json(request)
        data = parse_json(request.body)
        if schema is not None:
            json_schema.check(data, schema)
        return data

    def respond(self, request, data=None, status=200, last_modified=None, headers=None):
        """Render ``data`` (or no body), with Last-Modified from 1.15."""
        if data is None:
            response = HttpResponse(status=status)
            del response["Content-Type"]
        else:
            response = Response(data, status=status)
        if request.method == "GET" and request.microversion >= (1, 15):
            response["Last-Modified"] = http_date((last_modified or timezone.now()).timestamp())
        for name, value in (headers or {}).items():
            response[name] = value
        if response.get("Location", "").startswith("/"):
            # Placement's Location is absolute (webob completes the path with the host).
            response["Location"] = request.build_absolute_uri(response["Location"])
        return response

    def respond_encoded(self, request, data, last_modified=None):
        """:meth:`respond` for a large answer: ``data`` encoded by orjson (compact, UTF-8: the
        same JSON as the default renderer's, several times faster) into the response."""
        response = self.respond(request, last_modified=last_modified)
        response["Content-Type"] = "application/json"
        response.content = orjson.dumps(data)
        return response


def latest(*timestamps):
    """The newest of some timestamps (None ignored); now if there are none."""
    found = [t for t in timestamps if t is not None]
    return max(found) if found else timezone.now()


class RootView(PlacementView):
    """``GET /``: the version document, no token required."""

    def get(self, request):
        version = {
            "id": f"v{microversion.MINIMUM[0]}.{microversion.MINIMUM[1]}",
            "max_version": str(microversion.MAXIMUM),
            "min_version": str(microversion.MINIMUM),
            "status": "CURRENT",
            "links": [{"rel": "self", "href": ""}],
        }
        return self.respond(request, {"versions": [version]}, last_modified=dt.datetime.now(dt.UTC))
