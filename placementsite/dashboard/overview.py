"""Dashboard: the Overview page (usage by class and by project, the periodic tasks' health,
counts, the fullest providers, what each flavor still fits) and Search (one box across
providers, consumers and projects).

Every page needs a logged-in staff user holding the view permissions of what the page shows
(as the admin would ask): anonymous visitors are sent to the Django admin login, other users
get a 403 (see rendering.py).
"""

from urllib.parse import urlencode

from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone

from allocations.selectors import consumer_pages, project_pages
from allocations.selectors import overview as overview_reads
from allocations.selectors.usage import class_usage_summary
from placementsite import selectors as service_health
from providers.selectors import dashboard as provider_reads
from scheduling.selectors import dashboard as flavor_reads

from .rendering import CONSUMERS, PROJECT_SHARES, PROVIDERS, USAGE, render_page, staff_required

# --- overview -------------------------------------------------------------------------------

# Colours of the projects in the usage-share bars (the rest is grey), by rank.
SHARE_COLOURS = 5


@staff_required(*USAGE)
def overview(request):
    now = timezone.now()
    beat_started = service_health.beat_started_at()
    tasks = [(task, task.state(now, beat_started)) for task in service_health.task_health()]
    return render_page(
        request,
        "overview.html",
        "overview",
        {
            "class_usages": class_usage_summary(),
            # Shares by project, for those who may see projects.
            "project_shares": (
                overview_reads.usage_share_by_project(top=SHARE_COLOURS)
                if request.user.has_perms(PROJECT_SHARES)
                else None
            ),
            "tasks": tasks,
            "beat_started": beat_started,
            "provider_counts": provider_reads.provider_counts(),
            "allocation_counts": overview_reads.allocation_counts(),
            "fullest": overview_reads.fullest_providers(limit=10),
            # "Fits N more" per flavor, for those who may see flavors: counted after the
            # page by fits.js, as on the Flavors page.
            "flavor_fits": (
                [(flavor, None) for flavor in flavor_reads.flavors_to_count()]
                if request.user.has_perm("scheduling.view_flavor")
                else None
            ),
        },
    )


# --- search ---------------------------------------------------------------------------------

SEARCH_ROWS = 20


@staff_required(*PROVIDERS, *CONSUMERS, "allocations.view_project")
def search(request):
    """One box across providers (name or uuid), consumers (uuid) and projects (id)."""
    q = request.GET.get("q", "").strip()[:255]
    providers = provider_reads.search_providers(q=q, limit=SEARCH_ROWS)
    consumers = consumer_pages.consumers_matching(q=q, limit=SEARCH_ROWS)
    projects = project_pages.projects_matching(q=q, limit=SEARCH_ROWS)
    found = len(providers) + len(consumers) + len(projects)
    if found == 1:  # one answer: go straight to it
        if providers:
            [(provider_uuid, _name, _parent_id, _root_name)] = providers
            return redirect("dashboard:provider", provider_uuid)
        if consumers:
            [(consumer_uuid, _project, _user)] = consumers
            return redirect("dashboard:consumer", consumer_uuid)
        [(project_id, _consumer_count)] = projects
        return redirect(f"{reverse('dashboard:consumers')}?{urlencode({'project': project_id})}")
    return render_page(
        request,
        "search.html",
        "search",
        {
            "search_q": q,
            "providers": providers,
            "consumers": consumers,
            "projects": projects,
            "found": found,
            "rows_shown": SEARCH_ROWS,
        },
    )
