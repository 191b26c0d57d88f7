"""The real URLs plus views that raise a refusal by name, under every kind of edge.

``/test-refusals/<kind>`` is a Placement view, ``/test-refusals-plain/<kind>`` a plain Django
view (the middleware answers what it raises) and ``/api/test-refusals/<kind>/`` an ``/api/``
viewset. ``?as=http`` raises the HTTP error of the kind's status instead, with the same detail
and code: what the services raised before they raised domain errors.
"""

from django.urls import include, path

from placementsite.core import exceptions
from placementsite.core.api import errors as http
from placementsite.core.api.views import PlacementView
from placementsite.core.rest.views import ApiRouter, ApiViewSet
from placementsite.urls import urlpatterns as real_urlpatterns
from scheduling.services.servers import NoValidHost

# kind -> (the domain error, its status, its code)
REFUSALS = {
    "invalid-request": (
        lambda: exceptions.InvalidRequest("Badly formed resources parameter."),
        400,
        "placement.undefined_code",
    ),
    "invalid-request-with-code": (
        lambda: exceptions.InvalidRequest(
            "Conflicting traits.", code=exceptions.QUERYPARAM_BAD_VALUE
        ),
        400,
        "placement.query.bad_value",
    ),
    "not-found": (
        lambda: exceptions.NotFound("No such resource class CUSTOM_X."),
        404,
        "placement.undefined_code",
    ),
    "conflict": (
        lambda: exceptions.Conflict("The trait CUSTOM_X is in use by a resource provider."),
        409,
        "placement.undefined_code",
    ),
    "concurrent-update": (
        lambda: exceptions.ConcurrentUpdate("resource provider generation conflict"),
        409,
        "placement.concurrent_update",
    ),
    "inventory-in-use": (
        lambda: exceptions.InventoryInUse("Inventory for 'VCPU' in use."),
        409,
        "placement.inventory.inuse",
    ),
    "duplicate-name": (
        lambda: exceptions.DuplicateName("Conflicting resource provider name: a already exists."),
        409,
        "placement.duplicate_name",
    ),
    "provider-in-use": (
        lambda: exceptions.ProviderInUse("Resource provider has allocations."),
        409,
        "placement.resource_provider.inuse",
    ),
    "cannot-delete-parent": (
        lambda: exceptions.CannotDeleteParent("It has child resource providers."),
        409,
        "placement.resource_provider.cannot_delete_parent",
    ),
    "no-valid-host": (
        lambda: NoValidHost("No valid host was found for s (flavor f)."),
        409,
        "scheduler.no_valid_host",
    ),
}

HTTP_ERRORS = {400: http.HTTPBadRequest, 404: http.HTTPNotFound, 409: http.HTTPConflict}


def refusal(request, kind):
    make, status, code = REFUSALS[kind]
    error = make()
    if request.GET.get("as") == "http":
        raise HTTP_ERRORS[status](error.detail, code=code)
    raise error


class PlacementRefusalView(PlacementView):
    def get(self, request, kind):
        refusal(request, kind)


def plain_refusal_view(request, kind):
    refusal(request, kind)


class ApiRefusalViewSet(ApiViewSet):
    policy_prefix = "placement:api:test_refusals"

    def retrieve(self, request, pk=None):
        refusal(request._request, pk)


router = ApiRouter()
router.register("test-refusals", ApiRefusalViewSet, basename="test-refusal")

urlpatterns = [
    path("api/", include(router.urls)),
    path("test-refusals/<str:kind>", PlacementRefusalView.as_view()),
    path("test-refusals-plain/<str:kind>", plain_refusal_view),
    *real_urlpatterns,
]
