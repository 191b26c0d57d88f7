"""The Prometheus series the Placement plumbing records for every endpoint it answers.

Allocation write conflicts are counted where every error response is built (``errors.py``), so
no endpoint has to remember to; the site's ``/metrics`` exposes them with the apps' series.
"""

from prometheus_client import Counter

ALLOCATION_CONFLICTS = Counter(
    "placement_allocation_write_conflicts",
    "Allocation writes refused with 409 Conflict, by Placement error code; the client retries "
    "placement.concurrent_update with fresh generations",
    ["code"],
)

# Paths whose 409s are allocation write conflicts.
ALLOCATION_WRITE_PATHS = ("/allocations", "/reshaper")


def count_allocation_conflict(path, status, code):
    if status == 409 and path.startswith(ALLOCATION_WRITE_PATHS):
        ALLOCATION_CONFLICTS.labels(code=code or "placement.undefined_code").inc()
