"""Allocations' Prometheus series: capacity, usage and free units per resource class, read from
the database at scrape time (every API server answers the same) by the usage selector, which
asks the capacity model. The site's ``/metrics`` registers ``COLLECTORS``
(``placementsite/observability/metrics.py``)."""

from django.db import DatabaseError
from prometheus_client.core import GaugeMetricFamily


class ResourceClassCollector:
    """placement_resource_{capacity,used,free,total,reserved} per resource class at scrape."""

    def describe(self):
        # Names only: registering must not query the database (or import models too early:
        # the site imports this module with the Celery app, before Django is set up).
        return list(self._families().values())

    def collect(self):
        from .selectors.usage import class_usage_summary

        families = self._families()
        try:
            rows = class_usage_summary()
        except DatabaseError:
            rows = []  # the scrape still answers; /healthcheck says the database is down
        for row in rows:
            labels = [row.resource_class]
            families["capacity"].add_metric(labels, row.capacity)
            families["used"].add_metric(labels, row.used)
            families["free"].add_metric(labels, row.free)
            families["total"].add_metric(labels, row.total)
            families["inventories"].add_metric(labels, row.inventories)
        yield from families.values()

    @staticmethod
    def _families():
        return {
            "capacity": GaugeMetricFamily(
                "placement_resource_capacity",
                "Usable units per resource class: (total - reserved) * allocation_ratio, summed",
                labels=["resource_class"],
            ),
            "used": GaugeMetricFamily(
                "placement_resource_used",
                "Allocated units per resource class",
                labels=["resource_class"],
            ),
            "free": GaugeMetricFamily(
                "placement_resource_free",
                "Capacity less usage per resource class (negative when over-allocated)",
                labels=["resource_class"],
            ),
            "total": GaugeMetricFamily(
                "placement_resource_total",
                "Inventory totals per resource class, before reserved and allocation ratio",
                labels=["resource_class"],
            ),
            "inventories": GaugeMetricFamily(
                "placement_resource_inventories",
                "Inventories (providers) of each resource class",
                labels=["resource_class"],
            ),
        }


# Collectors read at scrape time, which the site registers.
COLLECTORS = (ResourceClassCollector(),)
