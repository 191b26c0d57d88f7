"""Dashboard pages of the scheduler: the flavors, and the Schedule page (the explain funnel of
a server request and, when asked, the real create). Kept apart from views.py so that the pages
of providers and consumers and these can change independently."""

from django.contrib import messages
from django.shortcuts import redirect

from placementsite.core.exceptions import DomainError
from scheduling.selectors import dashboard as flavor_reads
from scheduling.selectors.scheduler import explain
from scheduling.services.servers import NoValidHost, servers_create

from .forms import ScheduleForm
from .views import USAGE, _render, staff_required

FLAVORS = ("scheduling.view_flavor",)
# The funnel shows what fits where and what is free: the usage pages' permissions too.
SCHEDULE = ("scheduling.view_flavor", "scheduling.view_server", *USAGE)
CREATE = ("scheduling.add_server",)


@staff_required(*FLAVORS)
def flavor_list(request):
    # "Fits N more" is free capacity: for those who may see providers, inventories and usage.
    show_fits = request.user.has_perms(USAGE)
    fits = {flavor.pk: n for flavor, n in flavor_reads.flavor_fits()} if show_fits else {}
    rows = [(flavor, fits.get(flavor.pk)) for flavor in flavor_reads.flavors_with_counts()]
    return _render(request, "flavor_list.html", "flavors", {"rows": rows, "show_fits": show_fits})


@staff_required(*SCHEDULE)
def schedule(request):
    """GET with a flavor: the funnel, claiming nothing. POST: really create the servers."""
    data = request.POST if request.method == "POST" else (request.GET if request.GET else None)
    form = ScheduleForm(data)
    funnel = created = None
    if data is not None and form.is_valid():
        try:
            if request.method == "POST":
                if not request.user.has_perms(CREATE):
                    messages.error(request, "You may not create servers.")
                    return redirect(request.get_full_path())
                created = _create(form)
            else:
                funnel = explain(form.spec())
        except NoValidHost as exc:
            funnel = exc.explain
            form.add_error(None, exc.detail)
        except DomainError as exc:
            form.add_error(None, exc.detail)
    return _render(
        request,
        "schedule.html",
        "schedule",
        {
            "form": form,
            "funnel": funnel,
            "created": created,
            "can_create": request.user.has_perms(CREATE),
        },
    )


def _create(form):
    return servers_create(name=form.cleaned_data["name"], **form.request())
