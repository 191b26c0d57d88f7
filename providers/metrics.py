"""Providers' Prometheus series: per resource pool, its capacity, usage and free units per
class, whether it is stale or disabled, and its sync status, read from the database at scrape
time. The site's ``/metrics`` registers ``COLLECTORS``
(``placementsite/observability/metrics.py``)."""

from django.db import DatabaseError
from prometheus_client.core import GaugeMetricFamily

POOL_LABELS = ["pool", "kind", "resource_class"]


class ResourcePoolCollector:
    """placement_pool_{capacity,used,free} per pool and class; placement_pool_{stale,enabled}
    and placement_pool_sync_ok per pool."""

    def describe(self):
        # Names only: registering must not query the database.
        return list(self._families().values())

    def collect(self):
        families = self._families()
        try:
            rows, pools = self._read()
        except DatabaseError:
            rows, pools = [], []  # the scrape still answers; /healthcheck says why
        for name, kind, resource_class, capacity, used in rows:
            labels = [name, kind, resource_class]
            families["capacity"].add_metric(labels, capacity)
            families["used"].add_metric(labels, used)
            families["free"].add_metric(labels, capacity - used)
        for name, kind, stale, enabled, sync_ok in pools:
            families["stale"].add_metric([name, kind], 1 if stale else 0)
            families["enabled"].add_metric([name, kind], 1 if enabled else 0)
            families["sync_ok"].add_metric([name, kind], 1 if sync_ok else 0)
        yield from families.values()

    @staticmethod
    def _read():
        """``([(pool, kind, class, capacity, used)], [(pool, kind, stale, enabled, ok)])``:
        three queries whatever the number of pools."""
        from .capacity import CAPACITY_FIELDS, Capacity
        from .models import Inventory, ResourcePool
        from .selectors.resource_pools import pool_is_stale
        from .usage import usage_by_provider_and_class

        pools = list(
            ResourcePool.objects.values_list(
                "name", "kind", "provider_id", "reported_at", "enabled", "sync_status"
            )
        )
        by_provider = {p[2]: p for p in pools if p[2] is not None}
        used = usage_by_provider_and_class(provider_ids=list(by_provider))
        rows = []
        inventories = (
            Inventory.objects.filter(resource_provider_id__in=list(by_provider))
            .order_by("resource_provider_id", "resource_class_id")
            .values_list(
                "resource_provider_id",
                "resource_class_id",
                "resource_class__name",
                *CAPACITY_FIELDS,
            )
        )
        for provider_id, class_id, class_name, *fields in inventories:
            name, kind = by_provider[provider_id][:2]
            capacity = Capacity(*fields).usable
            rows.append((name, kind, class_name, capacity, used.get((provider_id, class_id), 0)))
        states = [
            (
                name,
                kind,
                pool_is_stale(reported_at=reported_at),
                enabled,
                status in ("ok", "partial"),
            )
            for name, kind, _p, reported_at, enabled, status in pools
        ]
        return rows, states

    @staticmethod
    def _families():
        def gauge(name, text, labels=POOL_LABELS):
            return GaugeMetricFamily(name, text, labels=labels)

        return {
            "capacity": gauge(
                "placement_pool_capacity", "Usable units of a resource pool per resource class"
            ),
            "used": gauge("placement_pool_used", "Allocated units of a resource pool per class"),
            "free": gauge(
                "placement_pool_free", "Capacity less usage of a resource pool per class"
            ),
            "stale": gauge(
                "placement_pool_stale",
                "1 when the pool has not reported for PLACEMENT_POOL_STALE_SECONDS",
                ["pool", "kind"],
            ),
            "enabled": gauge(
                "placement_pool_enabled", "1 unless an operator disabled the pool", ["pool", "kind"]
            ),
            "sync_ok": gauge(
                "placement_pool_sync_ok",
                "1 when the pool's last sync applied its report (ok or partial)",
                ["pool", "kind"],
            ),
        }


# Collectors read at scrape time, which the site registers.
COLLECTORS = (ResourcePoolCollector(),)
