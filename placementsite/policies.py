"""The policy rules the site collects (every app's ``policies.rules``) and its own: those of
``/metrics`` and ``/healthcheck?detailed``.

``/metrics`` and the detailed health check say how full the cloud is and which parts of the
service are down: admins read them, or a dedicated ``monitoring`` role for a Prometheus
scraper (a project-scoped token, as everywhere).
"""

from allocations import policies as allocations_policies
from placementsite.core.api.policy import ADMIN, rule
from providers import policies as providers_policies
from scheduling import policies as scheduling_policies

METRICS = "placement:metrics"
HEALTHCHECK_DETAILED = "placement:healthcheck:detailed"
MONITORING = f"{ADMIN} or role:monitoring"

rules = [
    rule(METRICS, MONITORING, "GET /metrics (with PLACEMENT_METRICS=token)."),
    rule(HEALTHCHECK_DETAILED, MONITORING, "GET /healthcheck?detailed: every check."),
]


def collected():
    """Every app's rules and the site's, for the policy engine (``register_rules``)."""
    return [
        *providers_policies.rules,
        *allocations_policies.rules,
        *scheduling_policies.rules,
        *rules,
    ]
