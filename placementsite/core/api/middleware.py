"""The plumbing every Placement API request passes through.

In order: a request id, input sanity (NUL bytes), authentication (all but
``GET /``), the microversion, then the view; on the way out the version and
request-id headers, ``Cache-Control`` from 1.15, and Placement-format bodies
for errors Django itself produced (unknown URLs, unexpected exceptions).
The project's own API under /api/ gets the request ids and the error format,
but authenticates in DRF (placementsite.core.rest) and has no microversions.

Every decision is made on the routed path (``path_info``, what the URL resolver sees), never
on ``path``, which a ``SCRIPT_NAME`` set by a proxy (or a client gunicorn trusts) prefixes: a
request the resolver sends to an API view always passes here. A Placement view that is reached
without this middleware's checks still refuses it (``PlacementView.initial``).
"""

import logging
import time

from django.conf import settings
from django.contrib.messages import middleware as messages_middleware
from django.core.exceptions import TooManyFieldsSent

from placementsite.core.exceptions import DomainError
from placementsite.core.rest.errors import error_response as rest_error_response

from . import auth, microversion, request_id
from .errors import (
    HTTPBadRequest,
    HTTPRequestTooLarge,
    PlacementError,
    error_response,
    placement_error_for,
    response_for,
)

logger = logging.getLogger("placement.api")


def is_api_path(path):
    """Served by an API (Placement's at the root, or the project's own under /api/)."""
    return not path.startswith(settings.PLACEMENT_NON_API_PREFIXES)


def is_rest_api_path(path):
    """The project's own API: DRF authenticates it, no microversion applies."""
    return path.startswith(settings.PLACEMENT_REST_API_PREFIX)


def _check_size(request):
    """Refuse a declared body over DATA_UPLOAD_MAX_MEMORY_SIZE before anything reads it (a
    body without a length is refused by Django when read, see placement_error_for)."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    if limit is not None and length > limit:
        raise HTTPRequestTooLarge(f"The request body is larger than {limit} bytes.")


def _check_content_type_declared(meta):
    """A body must say what it is, on any URL, as Placement's handler checks first."""
    try:
        length = int(meta.get("CONTENT_LENGTH") or 0)
    except ValueError:
        raise HTTPBadRequest("content-length header must be an integer") from None
    if length > 0 and not meta.get("CONTENT_TYPE"):
        raise HTTPBadRequest("content-type header required when content-length > 0")


def _has_nul(request):
    if "\x00" in request.path_info:
        return True
    return any("\x00" in key or "\x00" in value for key, value in request.GET.items())


def _detail_of_django_error(response):
    """What one of Django's own error pages says, for a JSON error body: its error handler's
    ``error_detail`` (a refused Host header), or the 404's message."""
    detail = getattr(response, "error_detail", "")
    return detail or {404: "The resource could not be found."}.get(response.status_code, "")


class PlacementApiMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not is_api_path(request.path_info):
            return self.get_response(request)
        started = time.monotonic()
        request.request_id = request_id.new_request_id()
        request.global_request_id = request_id.global_request_id(request.META)
        tokens = (
            request_id.current_request_id.set(request.request_id),
            request_id.current_global_request_id.set(request.global_request_id or "-"),
        )
        try:
            if is_rest_api_path(request.path_info):
                response = self._handle_rest_api(request)
            else:
                response = self._handle(request)
            response[request_id.RESPONSE_HEADER] = request.request_id
            self._log_request(request, response, time.monotonic() - started)
        finally:
            request_id.current_request_id.reset(tokens[0])
            request_id.current_global_request_id.reset(tokens[1])
        return response

    @staticmethod
    def _log_request(request, response, duration):
        """One line per request, as Placement's request log, with both request ids.

        The fields are also attributes of the record, so ``PLACEMENT_LOG_FORMAT=json`` writes
        them as JSON fields.
        """
        if not logger.isEnabledFor(logging.INFO):
            return  # gathering the fields (the full path, the body's length) would be for nothing
        context = getattr(request, "context", None)
        version = getattr(request, "microversion", None)
        fields = {
            "remote_addr": request.META.get("REMOTE_ADDR", "-"),
            "method": request.method,
            "path": request.get_full_path(),
            "status": response.status_code,
            "length": len(response.content) if not response.streaming else None,
            "microversion": str(version) if version is not None else None,
            "duration_ms": round(duration * 1000, 1),
            "user_id": context.user_id if context else None,
            "project_id": context.project_id if context else None,
        }
        logger.info(
            '%s "%s %s" status: %s len: %s microversion: %s time: %.3f user: %s project: %s',
            fields["remote_addr"],
            fields["method"],
            fields["path"],
            fields["status"],
            "-" if fields["length"] is None else fields["length"],
            fields["microversion"] or "-",
            duration,
            fields["user_id"] or "-",
            fields["project_id"] or "-",
            extra={
                **fields,
                "request_id": request.request_id,
                "global_request_id": request.global_request_id or "-",
            },
        )

    def _handle_rest_api(self, request):
        request.context = None  # set by the DRF authentication class once it has run
        try:
            _check_size(request)
            has_nul = _has_nul(request)
        except TooManyFieldsSent as exc:
            error = placement_error_for(exc)
            return rest_error_response(request, error.status, error.detail)
        except HTTPRequestTooLarge as exc:
            return rest_error_response(request, exc.status, exc.detail)
        if has_nul:
            return rest_error_response(request, 400, "NUL characters are not allowed in URLs.")
        response = self.get_response(request)
        if response.status_code >= 400 and not response.get("Content-Type", "").startswith(
            "application/json"
        ):
            # Django's own 404/405 pages for URLs no view answers.
            detail = _detail_of_django_error(response)
            response = rest_error_response(request, response.status_code, detail)
        return response

    def _handle(self, request):
        try:
            _check_size(request)
            try:
                has_nul = _has_nul(request)  # the first read of the query string
            except TooManyFieldsSent as exc:
                raise placement_error_for(exc) from None
            if has_nul:
                raise PlacementError("NUL characters are not allowed in URLs.")
            if request.path_info != "/":
                request.context = auth.authenticate(request)
            else:
                request.context = None
            request.microversion = microversion.from_headers(
                request.META.get("HTTP_OPENSTACK_API_VERSION", "")
            )
            _check_content_type_declared(request.META)
        except PlacementError as exc:
            return response_for(request, exc)
        try:
            response = self.get_response(request)
        except (PlacementError, DomainError) as exc:  # raised outside DRF, e.g. by a plain view
            response = response_for(request, exc)
        response = self._placement_error_for_django_error(request, response)
        self._add_version_headers(request, response)
        return response

    @staticmethod
    def _placement_error_for_django_error(request, response):
        """Django's own 404/405/500 pages become Placement error bodies."""
        if response.status_code < 400 or getattr(response, "placement_error", False):
            return response
        if response.get("Content-Type", "").startswith("application/json"):
            return response
        status = response.status_code
        replaced = error_response(request, status, _detail_of_django_error(response))
        if response.has_header("Allow"):
            replaced["Allow"] = response["Allow"]
        return replaced

    @staticmethod
    def _add_version_headers(request, response):
        version = request.microversion
        response[microversion.HEADER] = f"{microversion.SERVICE_TYPE} {version}"
        response["Vary"] = microversion.HEADER.lower()  # as Placement sends it
        if request.method == "GET" and version >= (1, 15) and response.status_code == 200:
            response["Cache-Control"] = "no-cache"

    def process_exception(self, request, exception):
        if not is_api_path(request.path_info):
            return None
        exception = placement_error_for(exception) or exception
        if isinstance(exception, PlacementError):
            return response_for(request, exception)
        logger.exception("Unexpected error serving %s %s", request.method, request.path)
        if is_rest_api_path(request.path_info):
            return rest_error_response(
                request, 500, "An unexpected error occurred; see the service log for details."
            )
        return error_response(
            request, 500, "An unexpected error occurred; see the service log for details."
        )


class MessageMiddleware(messages_middleware.MessageMiddleware):
    """Django's messages (the admin's and the dashboard's notices) on every path but the APIs',
    whose views never add or show one: their requests no longer build a message storage (a
    cookie and a session backend) for nothing. Without a storage Django's response step leaves
    the response alone, as it does for a storage nothing used."""

    def process_request(self, request):
        if not is_api_path(request.path_info):
            super().process_request(request)
