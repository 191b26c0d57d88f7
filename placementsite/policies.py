"""The policy rules of the site's own endpoints: ``/metrics`` and ``/healthcheck?detailed``.

``/metrics`` and the detailed health check say how full the cloud is and which parts of the
service are down: admins read them, or a dedicated ``monitoring`` role for a Prometheus
scraper (a project-scoped token, as everywhere).
"""

from placementsite.api.policy import ADMIN, rule

METRICS = "placement:metrics"
HEALTHCHECK_DETAILED = "placement:healthcheck:detailed"
MONITORING = f"{ADMIN} or role:monitoring"

rules = [
    rule(METRICS, MONITORING, "GET /metrics (with PLACEMENT_METRICS=token)."),
    rule(HEALTHCHECK_DETAILED, MONITORING, "GET /healthcheck?detailed: every check."),
]
