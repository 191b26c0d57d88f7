"""Errors under /api/ leave in Placement's error format, always with a ``code``.

``{"errors": [{"status": 400, "title": "Bad Request", "detail": "vcpus: ...",
"code": "api.invalid", "request_id": "req-..."}]}``. A serializer's field errors
are also given by field in ``fields``, for clients that show them beside inputs.
Domain errors (:mod:`placementsite.core.exceptions`) take the status of their kind
from :func:`~placementsite.core.api.errors.placement_error_for` and keep their own
code (``scheduler.no_valid_host``).
"""

from django.core.exceptions import PermissionDenied
from django.http import Http404, JsonResponse
from rest_framework import exceptions

from placementsite.core.api.errors import TITLES, PlacementError, placement_error_for
from placementsite.core.exceptions import DomainError


def error_json(request, status, detail, code, fields=None):
    error = {"status": status, "title": TITLES.get(status, "Error"), "detail": detail, "code": code}
    request_id = getattr(request, "request_id", None)
    if request_id:
        error["request_id"] = request_id
    if fields:
        error["fields"] = fields
    return {"errors": [error]}


def error_response(request, status, detail, code=None):
    """An error that no view raised (unknown URL, unexpected exception) in the same format."""
    code = code or {404: "api.not_found", 405: "api.method_not_allowed"}.get(status, "api.error")
    return JsonResponse(error_json(request, status, detail, code), status=status)


def _flatten(detail, prefix=""):
    """Field errors as ``{"flavor.extra_specs": ["..."]}`` from DRF's nested detail."""
    if isinstance(detail, dict):
        found = {}
        for key, value in detail.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            found.update(_flatten(value, "" if key == "non_field_errors" else name))
        return found
    if isinstance(detail, list) and detail and all(isinstance(d, str) for d in detail):
        return {prefix or "request": [str(d) for d in detail]}
    if isinstance(detail, list):
        found = {}
        for index, value in enumerate(detail):
            found.update(_flatten(value, f"{prefix}[{index}]" if prefix else f"[{index}]"))
        return found
    return {prefix or "request": [str(detail)]}


def exception_handler(exc, context):
    request = context.get("request")
    django_request = getattr(request, "_request", request)
    headers = {}
    if isinstance(exc, DomainError):
        exc = placement_error_for(exc)
    if isinstance(exc, PlacementError):
        status, detail, code, fields = exc.status, exc.detail, exc.code, None
        headers = exc.headers
    else:
        if isinstance(exc, Http404):
            exc = exceptions.NotFound()
        elif isinstance(exc, PermissionDenied):
            exc = exceptions.PermissionDenied()
        if not isinstance(exc, exceptions.APIException):
            return None  # unexpected: the middleware logs it and answers 500
        status = exc.status_code
        fields = None
        if isinstance(exc.detail, (dict, list)):
            fields = _flatten(exc.detail)
            detail = "; ".join(f"{name}: {' '.join(msgs)}" for name, msgs in fields.items())
            code = "api.invalid"
        else:
            detail = str(exc.detail)
            code = f"api.{exc.get_codes()}"
        if getattr(exc, "auth_header", None):
            headers["WWW-Authenticate"] = exc.auth_header
        if getattr(exc, "wait", None):
            headers["Retry-After"] = str(int(exc.wait))
    response = JsonResponse(error_json(django_request, status, detail, code, fields), status=status)
    for name, value in headers.items():
        response[name] = value
    return response
