"""The pool sync: each resource pool's provider made what its plugin describes, and its
aggregate made to hold exactly its members' roots, in one transaction, or nothing.

The same machinery as the host sync (:func:`providers.services.host_sync.record_sync`: the
desired tree, :func:`~providers.tree_diff.tree_diff`, one transaction applying the plan, the
statuses ``ok``/``partial``/``blocked``/``failed`` and their retries, operator overrides of
reserved and ratio kept). A pool's tree is one provider named for the pool, with the trait
``MISC_SHARES_VIA_AGGREGATE`` (it shares its inventories with the providers of its aggregates)
and the pool's own traits. After its tree, the pool's aggregate (one per pool) is set to hold
the pool's provider and its members' root providers: hosts joining are added, hosts leaving
removed, each host's other aggregates untouched. A pool shrunk below what is allocated on it
is ``blocked`` and nothing is applied.

A pool needs a sync when its report or its plugin changed, when a retry is due, or when its
aggregate does not hold exactly its members (a host joined, left, or got its provider).
"""

import logging
from datetime import datetime

from django.db.models import F
from django.utils import timezone

from placementsite.core.exceptions import InvalidRequest

from ..host_reports import DesiredTree, apply_defaults, contribution_checked
from ..models import (
    SHARING_TRAIT,
    ResourcePool,
    ResourceProvider,
    ResourceProviderAggregate,
)
from ..plugins import HostTree, PluginLoadError
from ..plugins.pools import PoolReport, pool_plugin, pool_plugin_signature
from ..selectors.compute_nodes import needs_sync
from ..selectors.resource_pools import pool_aggregate_member_ids, pool_member_root_ids
from .aggregates import aggregate_ids
from .generations import bump_generation
from .host_sync import (
    KnownClassesAndTraits,
    SyncOutcome,
    SyncSubject,
    record_failure,
    record_sync,
)

logger = logging.getLogger("placement.pools")


def pool_desired_tree(*, pool: ResourcePool) -> DesiredTree:
    """The pool's one provider as its plugin describes it; a plugin that raises gives no
    inventory (its error kept, and what it gave last time left as it is)."""
    report = PoolReport.of(pool)
    tree = HostTree(pool.name)
    tree.root.traits |= {SHARING_TRAIT, *pool.traits}
    owners: dict[tuple[str, str], str] = {}  # {(provider key, class): plugin name}
    errors: dict[str, str] = {}
    try:
        plugin = pool_plugin(pool.kind)
        before = tree.copy()
        plugin.contribute(report, tree)
        owners = dict.fromkeys(contribution_checked(before, tree), plugin.name)
    except Exception as exc:  # a plugin is third-party code: contain whatever it raises
        logger.warning("pool plugin %s failed on pool %s: %s", pool.kind, pool.name, exc)
        errors[pool.kind] = f"{type(exc).__name__}: {getattr(exc, 'detail', None) or exc}"
        tree.root.inventories.clear()
    apply_defaults(tree)
    return DesiredTree(tree=tree, owners=owners, plugin_errors=errors)


def _signature(pool: ResourcePool) -> str:
    try:
        return pool_plugin_signature(pool_plugin(pool.kind))
    except PluginLoadError:
        return pool.kind


def _root_of(pool: ResourcePool) -> ResourceProvider | None:
    """The pool's provider, or None before its first sync; a provider of its name that no
    sync made (through the Placement API, or a host's) is never taken over: the new tree's
    write collides on its name (``_name_taken`` then says who holds it)."""
    if pool.provider_id is None:
        return None
    return ResourceProvider.objects.filter(pk=pool.provider_id, parent__isnull=True).first()


def _name_taken(pool: ResourcePool) -> None:
    taken = ResourceProvider.objects.filter(name=pool.name).first()
    if taken is not None:
        raise InvalidRequest(
            f"The name {pool.name} is taken by provider {taken.uuid}, which the pool sync "
            "did not create."
        )


def _members_differ(pool: ResourcePool) -> bool:
    wanted = pool_member_root_ids(pool=pool)
    if pool.provider_id is not None:
        wanted.add(pool.provider_id)
    return wanted != pool_aggregate_member_ids(pool=pool)


def _lock_members(pool: ResourcePool) -> None:
    """Lock the pool's provider and every provider its aggregate holds or will hold, in id
    order (the allocation service's), before the tree is read: a claim on a member and the
    pool queues behind the sync instead of deadlocking with it."""
    ids = pool_member_root_ids(pool=pool) | pool_aggregate_member_ids(pool=pool)
    if pool.provider_id is not None:
        ids.add(pool.provider_id)
    list(
        ResourceProvider.objects.select_for_update()
        .filter(id__in=ids)
        .order_by("id")
        .values_list("id", flat=True)
    )


def pool_members_converge(*, pool: ResourcePool, provider_id: int) -> int:
    """Make the pool's aggregate hold exactly its provider and its members' roots (each
    provider's other aggregates untouched, its generation bumped as an aggregate write
    through the API does). Returns how many memberships changed. Needs a transaction."""
    (aggregate_id,) = aggregate_ids(uuids=[pool.aggregate_uuid]).values()
    wanted = pool_member_root_ids(pool=pool) | {provider_id}
    current = pool_aggregate_member_ids(pool=pool)
    joining, leaving = wanted - current, current - wanted
    changed = joining | leaving
    if not changed:
        return 0
    # Locked in id order (already, by _lock_members), then written in bulk: the rows are
    # ours until the commit, so a plain increment is the compare-and-swap.
    list(
        ResourceProvider.objects.select_for_update()
        .filter(id__in=changed)
        .order_by("id")
        .values_list("id", flat=True)
    )
    ResourceProviderAggregate.objects.bulk_create(
        [
            ResourceProviderAggregate(resource_provider_id=pk, aggregate_id=aggregate_id)
            for pk in sorted(joining)
        ]
    )
    ResourceProviderAggregate.objects.filter(
        aggregate_id=aggregate_id, resource_provider_id__in=leaving
    ).delete()
    ResourceProvider.objects.filter(id__in=changed).update(generation=F("generation") + 1)
    return len(joining) + len(leaving)


def resource_pools_sync(
    *,
    names: list[str] | None = None,
    force: bool = False,
    due_only: bool = True,
    now: datetime | None = None,
) -> list[SyncOutcome]:
    """Sync every pool that needs it (or those of ``names``; ``force``: whether they need it
    or not; ``due_only=False``: blocked and failed pools without waiting for their retry).
    One pool's error never stops the others; pools another worker holds are skipped."""
    pools = ResourcePool.objects.filter(reported_at__isnull=False)
    if names is not None:
        pools = pools.filter(name__in=names)
    outcomes: list[SyncOutcome] = []
    for pool_id in pools.order_by("id").values_list("id", flat=True):
        try:
            outcome = resource_pool_sync(pool_id=pool_id, force=force, due_only=due_only, now=now)
        except Exception as exc:  # isolation: whatever one pool raises, the next is synced
            outcome = record_failure(
                pk=pool_id,
                exc=exc,
                now=now,
                model=ResourcePool,
                label="pool",
                name_of=lambda p: p.name,
            )
        if outcome is not None:
            outcomes.append(outcome)
    return outcomes


def resource_pool_sync(
    *, pool_id: int, force: bool = False, due_only: bool = True, now: datetime | None = None
) -> SyncOutcome | None:
    """Sync one pool in one transaction; None when it needs none, or another worker holds
    it (or did it)."""
    now = now or timezone.now()
    pool = ResourcePool.objects.filter(pk=pool_id).first()
    if pool is None:
        return None
    signature = _signature(pool)

    def needs(record: ResourcePool) -> bool:
        return needs_sync(
            node=record, signature=signature, now=now, due_only=due_only
        ) or _members_differ(record)

    subject = SyncSubject(
        model=ResourcePool,
        label="pool",
        name_of=lambda record: record.name,
        desired_of=lambda record: pool_desired_tree(pool=record),
        root_of=_root_of,
        needs=needs,
        history_field="resource_pool",
        prepare=_lock_members,
        after=lambda record, root_id: pool_members_converge(pool=record, provider_id=root_id),
        name_taken=_name_taken,
    )
    if not force and not needs(pool):
        return None
    try:
        names = KnownClassesAndTraits([pool_plugin(pool.kind)])  # its classes' metadata
    except PluginLoadError:  # the sync records the plugin's error
        names = KnownClassesAndTraits([])
    return record_sync(
        subject=subject, pk=pool_id, signature=signature, force=force, names=names, now=now
    )


def pool_aggregate_forget(*, pool: ResourcePool) -> None:
    """Take the pool's aggregate off every provider (a pool deleted). The aggregate itself
    stays, as Placement's aggregates do (another app may describe it). Needs a
    transaction."""
    links = ResourceProviderAggregate.objects.filter(aggregate__uuid=pool.aggregate_uuid)
    providers = ResourceProvider.objects.select_for_update().filter(
        id__in=links.values("resource_provider_id")
    )
    for provider in providers.order_by("id"):
        links.filter(resource_provider=provider).delete()
        bump_generation(provider=provider)
