"""Error pages of the HTML side (dashboard and admin) and the site's favicon.

The Placement API and /api/ never show these: their middleware turns every
HTML error body into Placement's JSON error format. A staff user gets the
dashboard's navigation on an error page, so no error is a dead end.
"""

import logging
from pathlib import Path

from django.core.exceptions import DisallowedHost
from django.http import FileResponse, Http404, HttpResponseServerError
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_safe

from .rendering import no_store

logger = logging.getLogger("placement.dashboard")
FAVICON = Path(__file__).resolve().parent.parent / "static" / "dashboard" / "favicon.ico"


def _error_page(request, status, title, message):
    user = getattr(request, "user", None)
    context = {
        "status": status,
        "error_title": title,
        "message": message,
        "admin": reverse("admin:index"),
        "show_nav": bool(user is not None and user.is_active and user.is_staff),
    }
    return no_store(render(request, "dashboard/error.html", context, status=status))


def page_not_found(request, exception=None):
    message = "There is nothing at this address."
    if exception is not None and isinstance(exception, Http404) and exception.args:
        # Our views say what was looked for ("No such resource provider.").
        message = str(exception.args[0])
    return _error_page(request, 404, "Not found", message)


def permission_denied(request, exception=None):
    message = "You are not allowed to see this page."
    if exception is not None and exception.args:
        message = str(exception.args[0])
    return _error_page(request, 403, "Forbidden", message)


def bad_request(request, exception=None):
    message = "The request could not be understood."
    if isinstance(exception, DisallowedHost):
        # The commonest 400 of a new deployment: say which setting lets the name in.
        host = request.META.get("HTTP_HOST", "")
        message = (
            f"This service does not answer for the host {host!r}: add it to DJANGO_ALLOWED_HOSTS."
        )
    response = _error_page(request, 400, "Bad request", message)
    # The APIs' middleware puts this in their JSON error body instead of the page.
    response.error_detail = message if isinstance(exception, DisallowedHost) else ""
    return response


def server_error(request):
    try:
        return _error_page(
            request, 500, "Server error", "Something went wrong on our side; it has been logged."
        )
    except Exception:  # the page itself failed (say, the database is down): say it plainly
        logger.exception("Rendering the 500 page failed")
        return HttpResponseServerError(
            b"<!doctype html><title>Server error</title><h1>Server error</h1>",
            content_type="text/html",
        )


@require_safe
@cache_control(max_age=86400, public=True)
def favicon(request):
    """Browsers ask for /favicon.ico on their own; answer with the dashboard's icon."""
    return FileResponse(FAVICON.open("rb"), content_type="image/x-icon")
