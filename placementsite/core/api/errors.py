"""Placement's error format and error codes.

Every error leaves the API as::

    {"errors": [{"status": 409, "title": "Conflict", "detail": "...",
                 "request_id": "req-...", "code": "placement.concurrent_update"}]}

``code`` is present from microversion 1.23. ``detail`` follows the shape
Placement inherits from webob: the status explanation, a blank line, then
the message.

The rules raise domain errors (:mod:`placementsite.core.exceptions`);
:func:`placement_error_for` gives each kind its status here, once for every
edge that answers in this format. The errors of HTTP itself (authentication,
policy, methods, media types, sizes, microversions, body parsing) are the
:class:`PlacementError` classes of this module, named ``HTTP...`` after their status
(``HTTPNotFound``, ``HTTPConflict``) so that they are not mistaken for the domain errors of
the same kind (``exceptions.NotFound``, ``exceptions.Conflict``).
"""

import logging

from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.http import HttpResponse, JsonResponse
from django.utils.html import escape
from rest_framework import exceptions as drf_exceptions

from placementsite.core import exceptions
from placementsite.core.exceptions import DEFAULT

from . import metrics

logger = logging.getLogger("placement.api")

JSON = "application/json"
HTML = "text/html"

TITLES = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    406: "Not Acceptable",
    409: "Conflict",
    413: "Request Entity Too Large",
    415: "Unsupported Media Type",
    500: "Internal Server Error",
    503: "Service Unavailable",
}

EXPLANATIONS = {
    400: "The server could not comply with the request since it is either malformed "
    "or otherwise incorrect.",
    401: "This server could not verify that you are authorized to access the document "
    "you requested. Either you supplied the wrong credentials (e.g., bad password), "
    "or your browser does not understand how to supply the credentials required.",
    403: "Access was denied to this resource.",
    404: "The resource could not be found.",
    405: "The method specified is not allowed for this resource.",
    406: "The resource could not be generated that was acceptable to your browser.",
    409: "There was a conflict when trying to complete your request.",
    413: "The request is larger than the server is willing or able to process.",
    415: "The request media type is not supported by this server.",
    500: "The server has either erred or is incapable of performing the requested operation.",
    503: "The server is currently unavailable. Please try again at a later time.",
}


class PlacementError(Exception):
    """An error the API reports to the client in Placement's format."""

    status = 400
    code = DEFAULT

    def __init__(self, detail="", code=None, headers=None):
        super().__init__(detail)
        self.detail = detail
        if code is not None:
            self.code = code
        self.headers = headers or {}


class HTTPBadRequest(PlacementError):
    status = 400


class HTTPUnauthorized(PlacementError):
    status = 401


class KeystoneUnauthorized(HTTPUnauthorized):
    """A token keystonemiddleware did not validate: the Placement URLs answer with its own
    body, as Placement behind ``auth_token`` does (``detail`` says why, for /api/ and logs)."""

    BODY = {
        "error": {
            "code": 401,
            "title": "Unauthorized",
            "message": "The request you have made requires authentication.",
        }
    }


class HTTPForbidden(PlacementError):
    status = 403


class HTTPNotFound(PlacementError):
    status = 404


class HTTPMethodNotAllowed(PlacementError):
    status = 405


class HTTPNotAcceptable(PlacementError):
    status = 406


class HTTPConflict(PlacementError):
    status = 409


class HTTPRequestTooLarge(PlacementError):
    status = 413


class HTTPServiceUnavailable(PlacementError):
    status = 503


class HTTPUnsupportedMediaType(PlacementError):
    status = 415


# The HTTP error answering each kind of domain error: the first kind the error is wins.
_HTTP_ERROR_OF_KIND = (
    (exceptions.InvalidRequest, HTTPBadRequest),
    (exceptions.NotFound, HTTPNotFound),
    (exceptions.Conflict, HTTPConflict),
    (exceptions.Unavailable, HTTPServiceUnavailable),
    (exceptions.DomainError, HTTPBadRequest),
)


def error_body(status, detail, code=DEFAULT, request=None):
    explanation = EXPLANATIONS.get(status, "")
    text = f"{explanation}\n\n {detail}  " if detail else f"{explanation}\n\n   "
    error = {"status": status, "title": TITLES.get(status, "Error"), "detail": text}
    version = getattr(request, "microversion", None)
    if version is not None and version >= (1, 23):
        error["code"] = code
    request_id = getattr(request, "request_id", None)
    if request_id:
        error["request_id"] = request_id
    return {"errors": [error]}


def wants_html(request):
    """True when the client's Accept prefers HTML to JSON, as webob's error pages honour.

    No Accept header means JSON (Placement's request log middleware defaults it so), and so
    does a tie (``*/*``), which keeps JSON for clients that accept anything.
    """
    if request is None or not request.META.get("HTTP_ACCEPT"):
        return False
    return request.get_preferred_type([JSON, HTML]) == HTML


def html_error_page(status, detail):
    title = f"{status} {TITLES.get(status, 'Error')}"
    return (
        f"<html>\n <head>\n  <title>{title}</title>\n </head>\n <body>\n"
        f"  <h1>{title}</h1>\n  {escape(EXPLANATIONS.get(status, ''))}<br /><br />\n"
        f"{escape(detail)}\n\n </body>\n</html>"
    )


def error_response(request, status, detail, code=DEFAULT, headers=None):
    if wants_html(request):
        response = HttpResponse(
            html_error_page(status, detail), status=status, content_type=f"{HTML}; charset=UTF-8"
        )
    else:
        response = JsonResponse(error_body(status, detail, code, request), status=status)
    response.placement_error = True  # already in Placement's format: the middleware keeps it
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def response_for(request, exc):
    """The HTTP response for a PlacementError or a domain error raised while serving
    ``request``."""
    exc = placement_error_for(exc) or exc
    metrics.count_allocation_conflict(getattr(request, "path", ""), exc.status, exc.code)
    if isinstance(exc, KeystoneUnauthorized):
        # keystonemiddleware adds WWW-Authenticate to every 401 on its way out.
        response = JsonResponse(KeystoneUnauthorized.BODY, status=401)
        response.placement_error = True
        return response
    return error_response(request, exc.status, exc.detail, exc.code, exc.headers)


def placement_error_for(exc):
    """The PlacementError answering ``exc``, else None.

    A domain error becomes the HTTP error of its kind with its own ``detail`` and ``code``;
    Django's own refusals of an oversized request become a 413 or a 400.
    """
    if isinstance(exc, exceptions.DomainError):
        return next(
            http_error(exc.detail, code=exc.code)
            for kind, http_error in _HTTP_ERROR_OF_KIND
            if isinstance(exc, kind)
        )
    if isinstance(exc, RequestDataTooBig):
        return HTTPRequestTooLarge("The request body is larger than the service accepts.")
    if isinstance(exc, TooManyFieldsSent):
        return HTTPBadRequest("The request has more query parameters than the service accepts.")
    return None


def exception_handler(exc, context):
    """DRF exception handler: every error leaves in Placement's format."""
    request = context.get("request")
    # DRF wraps the Django request; the plumbing's attributes live on the original.
    django_request = getattr(request, "_request", request)
    exc = placement_error_for(exc) or exc
    if isinstance(exc, PlacementError):
        return response_for(django_request, exc)
    if isinstance(exc, drf_exceptions.MethodNotAllowed):
        view = context.get("view")
        return error_response(
            django_request,
            405,
            f"The method {django_request.method} is not allowed for this resource.",
            headers={"Allow": ", ".join(view.allowed_methods) if view else ""},
        )
    if isinstance(exc, drf_exceptions.APIException):
        detail = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
        return error_response(django_request, exc.status_code, detail)
    return None
