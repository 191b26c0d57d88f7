"""The scheduler's Prometheus series: how long ``GET /allocation_candidates`` takes and how many
candidates it returns. Recorded by the endpoint (``api/views.py``); the site's ``/metrics``
exposes them (``placementsite/observability/metrics.py`` imports this module, which registers
them). No scrape-time collector."""

from prometheus_client import Histogram

CANDIDATES_LATENCY = Histogram(
    "placement_allocation_candidates_seconds",
    "Time to answer GET /allocation_candidates",
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
CANDIDATES_RETURNED = Histogram(
    "placement_allocation_candidates_returned",
    "Allocation requests returned by one GET /allocation_candidates",
    buckets=(0, 1, 5, 10, 50, 100, 500, 1000, 5000, 10000),
)

# Collectors read at scrape time, which the site registers: none here.
COLLECTORS = ()


def observe_candidates(seconds, returned):
    CANDIDATES_LATENCY.observe(seconds)
    CANDIDATES_RETURNED.observe(returned)
