"""Resource pools: their reports, taking them out of scheduling, deleting them.

``resource_pool_report`` stores what the entity behind a pool (a storage cluster, a network
service) says about it; a report whose content changed asks for that pool's sync at commit
(a Celery task; beat's periodic sync is the backstop). The sync itself is
:mod:`providers.services.pool_sync`. ``resource_pool_delete`` removes a pool and its
provider, refused while anything is allocated on it.
"""

import hashlib
import json
import logging
from collections.abc import Mapping
from datetime import datetime
from typing import NamedTuple

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from placementsite.core.exceptions import Conflict, InvalidRequest, NotFound

from ..models import ResourcePool, ResourceProvider
from ..plugins.pools import POOL_FIELDS
from ..usage import usage_by_provider_and_class
from .pool_sync import pool_aggregate_forget
from .resource_providers import resource_provider_delete

logger = logging.getLogger("placement.pools")

RESOURCE_POOL_IN_USE = "resource_pool.in_use"
RESOURCE_POOL_NOT_FOUND = "resource_pool.not_found"
SYNC_TASK_EXPIRES = 300


class PoolReported(NamedTuple):
    pool: ResourcePool
    created: bool
    changed: bool


def pool_report_digest(*, report: Mapping[str, object]) -> str:
    canonical = json.dumps({k: report.get(k) for k in POOL_FIELDS if k != "name"}, sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def resource_pool_report(
    *, name: str, report: Mapping, now: datetime | None = None
) -> PoolReported:
    """Create or replace pool ``name``'s report (already validated by its edge). The same
    report again only refreshes ``reported_at`` (the pool is alive)."""
    fields = {key: report[key] for key in POOL_FIELDS if key != "name" and key in report}
    fields["report_hash"] = pool_report_digest(report=fields)
    fields["reported_at"] = now or timezone.now()
    with transaction.atomic():
        current = ResourcePool.objects.select_for_update().filter(name=name).first()
        previous = current.report_hash if current is not None else None
        pool, created = ResourcePool.objects.update_or_create(name=name, defaults=fields)
        changed = previous != fields["report_hash"]
        if changed and settings.PLACEMENT_SYNC_ON_REPORT:
            transaction.on_commit(lambda: _sync_soon(name))
    return PoolReported(pool, created, changed)


def _sync_soon(name: str) -> None:
    from ..tasks import sync_resource_pool  # the task calls this app's services

    try:
        sync_resource_pool.apply_async(args=[name], retry=False, expires=SYNC_TASK_EXPIRES)
    except Exception:  # the broker is down: beat's periodic sync picks the pool up
        logger.warning("could not ask for the sync of pool %s now; beat will", name)


def _pool_for_update(name: str) -> ResourcePool:
    pool = ResourcePool.objects.select_for_update().filter(name=name).first()
    if pool is None:
        raise NotFound(f"No resource pool {name}", code=RESOURCE_POOL_NOT_FOUND)
    return pool


def resource_pool_set_enabled(*, name: str, enabled: bool, reason: str = "") -> ResourcePool:
    """Put a pool into scheduling, or take it out saying why (its provider stays)."""
    if enabled and reason:
        raise InvalidRequest("disabled_reason: only a disabled pool has one")
    with transaction.atomic():
        pool = _pool_for_update(name)
        pool.enabled = enabled
        pool.disabled_reason = "" if enabled else reason
        pool.save(update_fields=["enabled", "disabled_reason", "updated_at"])
        return pool


def resource_pool_delete(*, name: str) -> None:
    """Remove a pool, its aggregate's memberships and its provider, in one transaction;
    refused (Conflict ``resource_pool.in_use``) while its provider holds allocations."""
    with transaction.atomic():
        pool = _pool_for_update(name)
        provider = None
        if pool.provider_id is not None:
            provider = ResourceProvider.objects.select_for_update().get(pk=pool.provider_id)
            used = {
                key: n
                for key, n in usage_by_provider_and_class(provider_ids=[provider.id]).items()
                if n
            }
            if used:
                raise Conflict(
                    f"Resource pool {name} cannot be deleted: allocations are held on its "
                    f"provider {provider.uuid}; delete or move them first.",
                    code=RESOURCE_POOL_IN_USE,
                )
        pool_aggregate_forget(pool=pool)
        pool.delete()
        if provider is not None:
            resource_provider_delete(uuid=provider.uuid)
