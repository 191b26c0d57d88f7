"""Reads about resource pools: which are stale or unavailable, who their members are, what
their providers hold.

A pool is *stale* when it has not reported for ``PLACEMENT_POOL_STALE_SECONDS``; stale and
disabled pools are *unavailable*: the scheduler takes nothing from their providers. A pool's
*members* are the hosts it names, the providers of the aggregates it names (by uuid or by
name), and the hosts whose report names it as their ``disk_pool``: their root providers
share the pool's aggregate.
"""

from collections.abc import Collection, Iterable
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import OuterRef, Q, Subquery
from django.utils import timezone

from ..models import (
    SHARING_TRAIT,
    ComputeNode,
    ResourcePool,
    ResourceProvider,
    ResourceProviderAggregate,
)
from ..usage import usage_by_provider_and_class
from .pool_members import pool_members


def pool_stale_after() -> timedelta:
    return timedelta(seconds=settings.PLACEMENT_POOL_STALE_SECONDS)


def pool_stale_q(*, now: datetime | None = None) -> Q:
    cutoff = (now or timezone.now()) - pool_stale_after()
    return Q(reported_at__lt=cutoff) | Q(reported_at__isnull=True)


def pool_is_stale(*, reported_at: datetime | None, now: datetime | None = None) -> bool:
    """:func:`pool_stale_q` for a pool already read."""
    return reported_at is None or reported_at < (now or timezone.now()) - pool_stale_after()


def unavailable_pool_provider_ids(*, now: datetime | None = None) -> set[int]:
    """Provider ids of pools the scheduler must not take from: disabled or stale."""
    return set(
        ResourcePool.objects.filter(provider__isnull=False)
        .filter(Q(enabled=False) | pool_stale_q(now=now))
        .values_list("provider_id", flat=True)
    )


def unavailable_pools(
    *, provider_ids: Iterable[int], now: datetime | None = None
) -> dict[int, str]:
    """``{provider id: why}`` for the pools among ``provider_ids`` that are unavailable."""
    rows = ResourcePool.objects.filter(provider_id__in=list(provider_ids)).values_list(
        "provider_id", "name", "enabled", "disabled_reason", "reported_at"
    )
    found: dict[int, str] = {}
    for provider_id, name, enabled, reason, reported_at in rows:
        if not enabled:
            found[provider_id] = f"pool {name} is disabled" + (f": {reason}" if reason else "")
        elif pool_is_stale(reported_at=reported_at, now=now):
            found[provider_id] = f"pool {name} is stale (no report for too long)"
    return found


def pool_member_root_ids(*, pool: ResourcePool) -> set[int]:
    """Root provider ids of the pool's members (see the module docstring and
    :mod:`providers.selectors.pool_members`). Hosts named that have no provider yet (not
    reported, not synced) are not members yet."""
    members = pool_members(members=pool.members or ())
    hosts = ComputeNode.objects.filter(provider__isnull=False).filter(
        Q(hostname__in=members.hostnames) | Q(disk_pool=pool.name)
    )
    roots = {root for root in hosts.values_list("provider__root_id", flat=True) if root}
    if members.aggregates:
        roots |= set(
            ResourceProviderAggregate.objects.filter(aggregate__uuid__in=members.aggregates)
            .exclude(aggregate__uuid=pool.aggregate_uuid)
            .values_list("resource_provider__root_id", flat=True)
        )
    roots.discard(pool.provider_id)
    roots.discard(None)
    return roots


def pool_aggregate_member_ids(*, pool: ResourcePool) -> set[int]:
    """Provider ids now in the pool's aggregate."""
    return set(
        ResourceProviderAggregate.objects.filter(aggregate__uuid=pool.aggregate_uuid).values_list(
            "resource_provider_id", flat=True
        )
    )


def pool_usage(*, provider_ids: Iterable[int]) -> dict[int, dict[str, int]]:
    """``{provider id: {class name: used}}`` of pools' providers, in one read."""
    from ..models import ResourceClass

    used = usage_by_provider_and_class(provider_ids=list(provider_ids))
    names = dict(
        ResourceClass.objects.filter(id__in={c for _p, c in used}).values_list("id", "name")
    )
    found: dict[int, dict[str, int]] = {}
    for (provider_id, class_id), amount in used.items():
        found.setdefault(provider_id, {})[names[class_id]] = amount
    return found


def pool_members_by_host(*, root_ids: Iterable[int]) -> dict[int, list[str]]:
    """``{host root provider id: [pool names]}``: the pools each host is a member of (one
    query)."""
    pool_name = ResourcePool.objects.filter(aggregate_uuid=OuterRef("aggregate__uuid")).values(
        "name"
    )[:1]
    rows = (
        ResourceProviderAggregate.objects.filter(resource_provider_id__in=list(root_ids))
        .annotate(pool=Subquery(pool_name))
        .filter(pool__isnull=False)
        .values_list("resource_provider_id", "pool")
    )
    found: dict[int, list[str]] = {}
    for provider_id, name in rows:
        found.setdefault(provider_id, []).append(name)
    return {k: sorted(v) for k, v in found.items()}


def pools_of_providers(*, uuids: Collection[str]) -> list[dict[str, str]]:
    """``[{"name", "uuid", "kind"}]`` of the pools whose providers are among ``uuids``."""
    if not uuids:
        return []
    rows = ResourcePool.objects.filter(provider__uuid__in=list(uuids)).values_list(
        "name", "provider__uuid", "kind"
    )
    return [{"name": n, "uuid": str(u), "kind": k} for n, u, k in sorted(rows)]


def sharing_provider_uuids(*, uuids: Collection[str]) -> set[str]:
    """The sharing providers (trait ``MISC_SHARES_VIA_AGGREGATE``: pools, and any other
    provider sharing through an aggregate) among ``uuids``."""
    if not uuids:
        return set()
    return {
        str(u)
        for u in ResourceProvider.objects.filter(
            uuid__in=list(uuids), traits__name=SHARING_TRAIT
        ).values_list("uuid", flat=True)
    }


def provider_aggregate_uuids(*, uuid: str) -> list[str]:
    """The aggregates a provider (by uuid) is a member of."""
    return [
        str(a)
        for a in ResourceProviderAggregate.objects.filter(resource_provider__uuid=uuid)
        .order_by("aggregate__uuid")
        .values_list("aggregate__uuid", flat=True)
    ]
