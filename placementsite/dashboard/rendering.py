"""The one way a dashboard page is answered: who may see it (``staff_required`` and the view
permissions each kind of page asks for: ``PROVIDERS``, ``USAGE``, ``CONSUMERS``,
``PROJECT_SHARES``) and how it is rendered (``render_page``, with the context every page's
navigation, footer and units need; ``page_number``, the page a list asks for; ``searched``,
the query a list's filter set takes).

Every dashboard answer (page, export, redirect, action result) carries
``Cache-Control: no-store``: it shows or changes a cloud's state, which neither a browser's
history nor a shared proxy should keep.
"""

from functools import wraps

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import add_never_cache_headers

from placementsite.core.replicas import tolerates_replica_lag
from providers.selectors import dashboard as provider_reads

# Auto-refresh periods a page accepts (?refresh=60), in seconds: a short list, so that a
# shared link cannot make every open browser hammer the server.
REFRESH_PERIODS = (30, 60, 300)

# The view permissions of what each kind of page shows.
PROVIDERS = ("providers.view_resourceprovider", "providers.view_inventory")
USAGE = (*PROVIDERS, "allocations.view_allocation")
CONSUMERS = ("allocations.view_consumer", "allocations.view_allocation")
# Usage by project names the projects.
PROJECT_SHARES = (*USAGE, "allocations.view_project")


def no_store(response):
    """``response`` with the headers that keep it out of every cache."""
    add_never_cache_headers(response)
    return response


def staff_required(*permissions, denied="You do not have permission to view this page."):
    """A staff user with every one of ``permissions`` (a superuser has them all; else a 403
    saying ``denied``); the answer is never cached."""

    def decorator(view):
        @wraps(view)
        def wrapper(request, *args, **kwargs):
            if not request.user.is_authenticated:
                return no_store(redirect_to_login(request.get_full_path(), settings.LOGIN_URL))
            if not (request.user.is_active and request.user.is_staff):
                raise PermissionDenied("The dashboard is for staff users.")
            if not request.user.has_perms(permissions):
                raise PermissionDenied(denied)
            return no_store(view(request, *args, **kwargs))

        # The dashboard's pages read (GET); a replica serves them when one is current.
        return tolerates_replica_lag()(wrapper)

    return decorator


def refresh_period(request):
    try:
        period = int(request.GET.get("refresh", ""))
    except ValueError:
        return None
    return period if period in REFRESH_PERIODS else None


def page_number(request):
    """The page of a paginated list the query string asks for (the first by default)."""
    return request.GET.get("page") or 1


def searched(query, *, max_length):
    """A copy of ``query`` (a QueryDict) for a list's filter set, its search box ``q`` (always
    there, ``""`` when empty) cut to ``max_length`` characters, as the pages always took it."""
    query = query.copy()
    query["q"] = query.get("q", "")[:max_length]
    return query


def render_page(request, template, section, context, status=None):
    """``dashboard/<template>`` with the shared context: the navigation (``section`` marks
    the current entry), the admin link, the footer's time and refresh, the classes' units."""
    context = {
        "section": section,
        "admin": reverse("admin:index"),
        "show_nav": True,
        "now": timezone.now(),
        "refresh": refresh_period(request),
        "units": provider_reads.class_units(),
        **context,
    }
    return render(request, f"dashboard/{template}", context, status=status)
