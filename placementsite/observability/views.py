"""``/healthcheck`` and ``/metrics``: for load balancers, operators and Prometheus.

Neither is a Placement API resource, so they skip the API plumbing (no microversion); when they
refuse a caller they still answer in Placement's error format.
"""

import logging

from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from prometheus_client import CONTENT_TYPE_LATEST

from placementsite import policies
from placementsite.core.api import auth, policy
from placementsite.core.api.errors import PlacementError, error_response
from placementsite.core.replicas import tolerates_replica_lag

from . import health, metrics

logger = logging.getLogger("placement.health")


def _method_not_allowed(request, allowed):
    if request.method in allowed:
        return None
    return error_response(
        request, 405, "Method not allowed.", headers={"Allow": ", ".join(allowed)}
    )


def _authorize(request, rule):
    """None when the caller has a valid token that ``rule`` allows (admins, or the
    ``monitoring`` role, by default); else the refusal."""
    try:
        context = auth.authenticate(request)
    except PlacementError as exc:
        return error_response(request, exc.status, exc.detail, exc.code, exc.headers)
    request.context = context
    if not policy.check(rule, context):
        return error_response(request, 403, f"Policy does not allow {rule} to be performed.")
    return None


@csrf_exempt
def healthcheck(request):
    """200 ``OK`` / 503 with the reason, without a token, as oslo.middleware's healthcheck.

    ``?detailed`` is the operator's form (a token ``placement:healthcheck:detailed`` allows):
    every check, as JSON, 503 when any fails.
    """
    refusal = _method_not_allowed(request, ("GET", "HEAD"))
    if refusal is not None:
        return refusal
    if "detailed" in request.GET:
        refusal = _authorize(request, policies.HEALTHCHECK_DETAILED)
        if refusal is not None:
            return refusal
        healthy, checks = health.health_report(detailed=True)
        return JsonResponse(
            {"status": "OK" if healthy else "FAILED", "checks": checks},
            status=200 if healthy else 503,
        )
    healthy, checks = health.health_report(detailed=False)
    if healthy:
        return HttpResponse("OK", content_type="text/plain", status=200)
    # No token here: the reason names nothing of the deployment (the driver's error gives the
    # database host, port and role); the log and ?detailed say more.
    logger.warning("healthcheck: %s", checks["database"]["detail"])
    return HttpResponse("database unreachable", content_type="text/plain", status=503)


@csrf_exempt
@tolerates_replica_lag("GET")
def metrics_view(request):
    """Prometheus text exposition; who may read it is ``PLACEMENT_METRICS``."""
    refusal = _method_not_allowed(request, ("GET",))
    if refusal is not None:
        return refusal
    mode = settings.PLACEMENT_METRICS
    if mode == "off":
        return error_response(request, 404, "The resource could not be found.")
    if mode != "open":
        refusal = _authorize(request, policies.METRICS)
        if refusal is not None:
            return refusal
    return HttpResponse(metrics.exposition(), content_type=CONTENT_TYPE_LATEST)
