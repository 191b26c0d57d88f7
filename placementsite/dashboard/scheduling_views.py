"""Dashboard pages of the scheduler: the flavors, and the Schedule page (the explain funnel of
a server request and, when asked, the real create)."""

from django.core.exceptions import PermissionDenied
from django.http import Http404, JsonResponse, QueryDict
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_safe

from placementsite.core.exceptions import DomainError
from scheduling.selectors import dashboard as flavor_reads
from scheduling.selectors.scheduler import explain
from scheduling.services.servers import NoValidHost, servers_create

from .forms import ScheduleForm
from .rendering import USAGE, render_page, staff_required

FLAVORS = ("scheduling.view_flavor",)
# The funnel shows what fits where and what is free: the usage pages' permissions too.
SCHEDULE = ("scheduling.view_flavor", "scheduling.view_server", *USAGE)
CREATE = ("scheduling.add_server",)
FITS = (*FLAVORS, *USAGE)


@staff_required(*FLAVORS)
def flavor_list(request):
    # "Fits N more" is free capacity: for those who may see providers, inventories and usage.
    # Counting it for every flavor takes a scheduling pass each: the page comes at once and
    # fits.js fills the counts in, one flavor after the other (flavor_fits below).
    show_fits = request.user.has_perms(FITS)
    flavors = list(flavor_reads.flavors_with_counts())
    return render_page(
        request, "flavor_list.html", "flavors", {"flavors": flavors, "show_fits": show_fits}
    )


@staff_required(*FITS)
def flavor_fits(request, pk):
    """``{"flavor", "fits", "complete"}``: how many more instances of the flavor fit now
    (JSON, for the pages' fits.js; ``fits`` is null for a flavor naming an unknown class,
    ``complete`` false when the engine's budget cut the count short: a lower bound)."""
    flavor = flavor_reads.flavor_by_pk(pk=pk)
    if flavor is None:
        raise Http404("No such flavor.")
    found = flavor_reads.fits_of(flavor=flavor)
    return JsonResponse(
        {
            "flavor": flavor.name,
            "fits": None if found is None else found.total,
            "complete": found is None or found.incomplete is None,
        }
    )


@staff_required(*SCHEDULE)
def schedule(request):
    """GET: the form; once submitted (or from a link whose fields are valid, say the Flavors
    page's ``?flavor=NAME``, the rest filled from the defaults; errors show only once the form
    is submitted), the funnel, claiming nothing, loaded after the page from
    :func:`schedule_funnel` (it is a scheduling pass over every host). POST (CSRF-checked, a
    form of its own): really create the servers."""
    if request.method == "POST":
        if not request.user.has_perms(CREATE):
            raise PermissionDenied("You may not create servers.")
        data, submitted = _with_defaults(request.POST), True
    elif request.GET:
        data, submitted = _with_defaults(request.GET), "explain" in request.GET
    else:
        data, submitted = None, False
    form = ScheduleForm(data)
    if data is not None and not submitted and not form.is_valid():
        form = ScheduleForm(initial=data.dict())  # a link prefills; it is not a submission
    funnel = created = funnel_url = None
    if form.is_bound and form.is_valid():
        if request.method == "POST":
            try:
                created = _create(form)
            except NoValidHost as exc:
                funnel = exc.explain
                form.add_error(None, exc.detail)
            except DomainError as exc:
                form.add_error(None, exc.detail)
        else:
            funnel_url = f"{reverse('dashboard:schedule_funnel')}?{data.urlencode()}"
    return render_page(
        request,
        "schedule.html",
        "schedule",
        {
            "form": form,
            "funnel": funnel,
            "funnel_url": funnel_url,
            "created": created,
            "can_create": request.user.has_perms(CREATE),
        },
    )


@require_safe
@staff_required(*SCHEDULE)
def schedule_funnel(request):
    """The Schedule page's funnel for the request its query string names (an HTML fragment
    the page's schedule.js puts in place; the Create form with it)."""
    form = ScheduleForm(_with_defaults(request.GET))
    funnel = error = None
    status = 200
    if not form.is_valid():
        status = 400
        error = "; ".join(
            f"{name}: {' '.join(errors)}" if name != "__all__" else " ".join(errors)
            for name, errors in form.errors.items()
        )
    else:
        try:
            funnel = explain(spec=form.spec())
        except NoValidHost as exc:
            funnel, error = exc.explain, exc.detail
        except DomainError as exc:
            error = exc.detail
    return render(
        request,
        "dashboard/_funnel.html",
        {
            "form": form,
            "funnel": funnel,
            "error": error,
            "can_create": request.user.has_perms(CREATE),
        },
        status=status,
    )


def _with_defaults(query):
    """The Schedule form's defaults with what ``query`` sets put over them."""
    data = QueryDict(mutable=True)
    for name, field in ScheduleForm.base_fields.items():
        if field.initial is not None:
            data[name] = field.initial
    for key in query:
        if key in ScheduleForm.base_fields:
            data.setlist(key, query.getlist(key))
    return data


def _create(form):
    return servers_create(name=form.cleaned_data["name"], **form.request())
