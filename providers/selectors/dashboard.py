"""The operator dashboard's reads about providers alone: the units of the resource classes,
counts, the provider list's filters and their choices, trees, traits and aggregates with their
counts, search, the hosts of providers and the compute hosts' list.

The pages that also show usage (which lives with allocations) are read by
allocations' selectors by page (:mod:`allocations.selectors.overview`, ``provider_pages``,
``consumer_pages``, ``project_pages``), which build on these. Set-based: a fixed number of
queries per page whatever the number of providers.
"""

import uuid as uuidlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from django.core.paginator import Page, Paginator
from django.db.models import (
    Count,
    Exists,
    IntegerField,
    Model,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
)
from django.db.models.functions import Coalesce
from django.utils import timezone

from ..models import (
    SHARING_TRAIT,
    Aggregate,
    ComputeNode,
    Inventory,
    InventoryChange,
    ResourceClass,
    ResourcePool,
    ResourceProvider,
    ResourceProviderAggregate,
    ResourceProviderTrait,
    Trait,
)
from .compute_nodes import is_stale
from .resource_pools import pool_is_stale, pool_members_by_host

HOSTS_PER_PAGE = 50
TREE_ROOT = "root"
TREE_CHILD = "child"


def class_units() -> dict[str, str]:
    """{class name: unit} for every resource class, for amounts in human units (one query)."""
    return dict(ResourceClass.objects.values_list("name", "unit"))


# --- overview -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProviderCounts:
    """How many providers (and roots among them), aggregates and traits in use there are."""

    providers: int
    root_providers: int
    aggregates: int
    traits_in_use: int


def provider_counts() -> ProviderCounts:
    return ProviderCounts(
        providers=ResourceProvider.objects.count(),
        root_providers=ResourceProvider.objects.filter(parent__isnull=True).count(),
        aggregates=Aggregate.objects.count(),
        traits_in_use=ResourceProviderTrait.objects.values("trait_id").distinct().count(),
    )


# --- providers list -------------------------------------------------------------------------


@dataclass(frozen=True)
class ProviderFilters:
    q: str = ""
    trait: str = ""
    aggregate: uuidlib.UUID | None = None
    resource_class: str = ""
    tree: str = ""  # "", TREE_ROOT or TREE_CHILD


def _count_of(model: type[Model], column: str = "resource_provider_id") -> Coalesce:
    return Coalesce(
        Subquery(
            model.objects.filter(**{column: OuterRef("pk")})
            .order_by()
            .values(column)
            .annotate(n=Count("*"))
            .values("n")[:1],
            output_field=IntegerField(),
        ),
        0,
    )


def filtered_providers(*, filters: ProviderFilters) -> QuerySet:
    """The providers that pass ``filters``, in name order (a queryset)."""
    qs = ResourceProvider.objects.all()
    if filters.q:
        q = filters.q.strip()
        match = Q(name__icontains=q)
        if all(c in "0123456789abcdefABCDEF-" for c in q):
            match |= Q(uuid__icontains=q)
        qs = qs.filter(match)
    # Names resolved to ids first (one small query each): on a name joined inside the
    # EXISTS, PostgreSQL guessed 66 providers with the trait of 25,000 and probed an index per
    # provider (0.4 to 1.3 s at 100,000 providers); on the id it knows the trait's share.
    if filters.trait:
        trait_id = Trait.objects.filter(name=filters.trait).values_list("id", flat=True).first()
        if trait_id is None:
            return qs.none()
        qs = qs.filter(
            Exists(
                ResourceProviderTrait.objects.filter(
                    resource_provider_id=OuterRef("pk"), trait_id=trait_id
                )
            )
        )
    if filters.aggregate:
        aggregate_id = (
            Aggregate.objects.filter(uuid=filters.aggregate).values_list("id", flat=True).first()
        )
        if aggregate_id is None:
            return qs.none()
        qs = qs.filter(
            Exists(
                ResourceProviderAggregate.objects.filter(
                    resource_provider_id=OuterRef("pk"), aggregate_id=aggregate_id
                )
            )
        )
    if filters.resource_class:
        class_id = (
            ResourceClass.objects.filter(name=filters.resource_class)
            .values_list("id", flat=True)
            .first()
        )
        if class_id is None:
            return qs.none()
        qs = qs.filter(
            Exists(
                Inventory.objects.filter(
                    resource_provider_id=OuterRef("pk"), resource_class_id=class_id
                )
            )
        )
    if filters.tree == TREE_ROOT:
        qs = qs.filter(parent__isnull=True)
    elif filters.tree == TREE_CHILD:
        qs = qs.filter(parent__isnull=False)
    return qs.order_by("name")


def with_link_counts(*, providers: QuerySet) -> QuerySet:
    """``providers`` (a queryset) annotated with ``trait_count`` and ``aggregate_count``."""
    return providers.annotate(
        trait_count=_count_of(ResourceProviderTrait),
        aggregate_count=_count_of(ResourceProviderAggregate),
    )


def tree_sizes(*, root_ids: Iterable[int]) -> dict[int, int]:
    """{root id: providers in its tree} for ``root_ids`` (one query)."""
    return dict(
        ResourceProvider.objects.filter(root_id__in=root_ids)
        .values("root_id")
        .annotate(n=Count("id"))
        .order_by()
        .values_list("root_id", "n")
    )


def sharing_provider_ids(*, provider_ids: Iterable[int]) -> set[int]:
    """The ids among ``provider_ids`` of sharing providers (one query)."""
    return set(
        ResourceProviderTrait.objects.filter(
            resource_provider_id__in=provider_ids, trait__name=SHARING_TRAIT
        ).values_list("resource_provider_id", flat=True)
    )


@dataclass(frozen=True)
class FilterChoices:
    traits: list[str]
    aggregates: list[str]
    resource_classes: list[str]


def provider_filter_choices() -> FilterChoices:
    """The traits, aggregates and classes that some provider has, for the filter form."""
    return FilterChoices(
        traits=list(
            Trait.objects.filter(
                Exists(ResourceProviderTrait.objects.filter(trait_id=OuterRef("pk")))
            ).values_list("name", flat=True)
        ),
        aggregates=[
            str(u) for u in Aggregate.objects.order_by("uuid").values_list("uuid", flat=True)
        ],
        resource_classes=list(
            ResourceClass.objects.filter(
                Exists(Inventory.objects.filter(resource_class_id=OuterRef("pk")))
            ).values_list("name", flat=True)
        ),
    )


# --- one provider ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TreeNode:
    id: int
    uuid: uuidlib.UUID
    name: str
    depth: int
    is_current: bool
    # This provider's own, with their usage (filled in by allocations, whose type it is).
    inventories: Sequence[object] = ()


class _TreeRow(NamedTuple):
    id: int
    uuid: uuidlib.UUID
    name: str
    parent_id: int | None


def tree_nodes(*, root_id: int, current_id: int) -> list[TreeNode]:
    """The whole tree of ``root_id``, depth first, children in name order (one query)."""
    rows = [
        _TreeRow._make(row)
        for row in ResourceProvider.objects.filter(root_id=root_id)
        .order_by("name")
        .values_list("id", "uuid", "name", "parent_id")
    ]
    children: defaultdict[int | None, list[_TreeRow]] = defaultdict(list)
    for row in rows:
        children[row.parent_id].append(row)
    nodes = []
    stack = [(row, 0) for row in reversed([r for r in rows if r.id == root_id])]
    seen: set[int] = set()
    while stack:
        (pk, uuid, name, _parent), depth = stack.pop()
        if pk in seen:  # a broken tree must not loop forever
            continue
        seen.add(pk)
        nodes.append(TreeNode(pk, uuid, name, depth, pk == current_id))
        stack.extend((child, depth + 1) for child in reversed(children.get(pk, [])))
    return nodes


# --- traits, aggregates ---------------------------------------------------------------------


def traits_with_counts(
    *,
    in_use_only: bool = True,
    q: str = "",
    page_number: int | str | None = 1,
    per_page: int = 100,
) -> Page:
    """A page of traits, each with how many providers have it."""
    qs = Trait.objects.annotate(provider_count=_count_of(ResourceProviderTrait, "trait_id"))
    if in_use_only:
        qs = qs.filter(Exists(ResourceProviderTrait.objects.filter(trait_id=OuterRef("pk"))))
    if q:
        qs = qs.filter(name__icontains=q.strip())
    return Paginator(qs.order_by("id"), per_page).get_page(page_number)


def aggregates_with_counts(*, page_number: int | str | None = 1, per_page: int = 100) -> Page:
    """A page of aggregates, each with how many providers are members."""
    qs = Aggregate.objects.annotate(
        member_count=_count_of(ResourceProviderAggregate, "aggregate_id")
    ).order_by("uuid")
    return Paginator(qs, per_page).get_page(page_number)


def sharing_member_count(*, aggregate: Aggregate) -> int:
    """How many members of ``aggregate`` are sharing providers (one query)."""
    return (
        ResourceProviderAggregate.objects.filter(aggregate=aggregate)
        .filter(
            Exists(
                ResourceProviderTrait.objects.filter(
                    resource_provider_id=OuterRef("resource_provider_id"),
                    trait__name=SHARING_TRAIT,
                )
            )
        )
        .count()
    )


# --- search, hosts --------------------------------------------------------------------------


class ProviderSearchHit(NamedTuple):
    uuid: uuidlib.UUID
    name: str
    parent_id: int | None
    root_name: str | None


def search_providers(*, q: str, limit: int = 20) -> list[ProviderSearchHit]:
    """The dashboard's search box: providers whose name (or uuid) contains ``q``, in name
    order, with their root's name."""
    if not q.strip():
        return []
    rows = filtered_providers(filters=ProviderFilters(q=q)).values_list(
        "uuid", "name", "parent_id", "root__name"
    )[:limit]
    return [ProviderSearchHit._make(row) for row in rows]


def _is_sharing() -> Exists:
    return Exists(
        ResourceProviderTrait.objects.filter(
            resource_provider_id=OuterRef("pk"), trait__name=SHARING_TRAIT
        )
    )


class ProviderHost(NamedTuple):
    """The host (root provider) a provider belongs to, and whether the provider is sharing."""

    host_uuid: uuidlib.UUID
    host_name: str
    is_sharing: bool


def hosts_of(*, uuids: Iterable[str]) -> dict[str, ProviderHost]:
    """{provider uuid (str): ProviderHost} for ``uuids`` (one query)."""
    rows = (
        ResourceProvider.objects.filter(uuid__in=list(uuids))
        .annotate(is_sharing=_is_sharing())
        .values_list("uuid", "root__uuid", "root__name", "is_sharing")
    )
    return {
        str(uuid): ProviderHost(root_uuid, root_name, sharing)
        for uuid, root_uuid, root_name, sharing in rows
    }


# --- compute hosts --------------------------------------------------------------------------


@dataclass(frozen=True)
class HostRow:
    node: ComputeNode
    stale: bool  # silent for longer than PLACEMENT_HOST_STALE_SECONDS
    in_sync: bool  # its providers show its last report
    over: Sequence[str] = ()  # "VCPU: 40 used of 32" per class over capacity (filled in)
    pools: Sequence[str] = ()  # names of the resource pools the host is a member of


def host_list_page(
    *, hosts: QuerySet, page_number: int | str | None = 1, per_page: int = HOSTS_PER_PAGE
) -> Page:
    """A page of :class:`HostRow` of ``hosts``: :func:`host_rows` (annotated ``in_sync``),
    filtered."""
    page = Paginator(hosts, per_page).get_page(page_number)
    now = timezone.now()
    pools = pool_members_by_host(
        root_ids=[host.provider_id for host in page.object_list if host.provider_id]
    )
    page.object_list = [
        HostRow(
            node=host,
            stale=is_stale(reported_at=host.reported_at, now=now),
            in_sync=host.in_sync,
            pools=pools.get(host.provider_id, []),
        )
        for host in page.object_list
    ]
    return page


# --- resource pools -----------------------------------------------------------------------------

POOL_CHANGES_SHOWN = 10


@dataclass
class PoolRow:
    """A pool as the Pools page shows it: its record, staleness, the hosts its aggregate
    holds and the last changes the sync made to its inventories."""

    pool: ResourcePool
    stale: bool
    members: list[tuple[str, uuidlib.UUID]]  # (name, uuid) of the member hosts' root providers
    changes: list[InventoryChange]  # newest first


def pool_rows(*, pools: QuerySet | None = None) -> list[PoolRow]:
    """The pools of ``pools`` (a queryset of ResourcePool; every pool by default: a cloud has
    few), by name, with their members and recent changes: four queries."""
    chosen = ResourcePool.objects.all() if pools is None else pools
    pools = list(chosen.select_related("provider").order_by("name"))
    by_aggregate = {p.aggregate_uuid: p for p in pools}
    members: dict[int, list[tuple[str, uuidlib.UUID]]] = {p.pk: [] for p in pools}
    links = (
        ResourceProviderAggregate.objects.filter(aggregate__uuid__in=list(by_aggregate))
        .order_by("resource_provider__name")
        .values_list(
            "aggregate__uuid",
            "resource_provider_id",
            "resource_provider__name",
            "resource_provider__uuid",
        )
    )
    for aggregate, provider_id, name, uuid in links:
        pool = by_aggregate[aggregate]
        if provider_id != pool.provider_id:
            members[pool.pk].append((name, uuid))
    changes: dict[int, list[InventoryChange]] = {p.pk: [] for p in pools}
    recent = (
        InventoryChange.objects.filter(resource_pool__in=pools)
        .select_related("resource_class")
        .order_by("-changed_at", "-id")
    )
    for change in recent[: POOL_CHANGES_SHOWN * max(len(pools), 1)]:
        if len(changes[change.resource_pool_id]) < POOL_CHANGES_SHOWN:
            changes[change.resource_pool_id].append(change)
    now = timezone.now()
    return [
        PoolRow(
            pool=p,
            stale=pool_is_stale(reported_at=p.reported_at, now=now),
            members=members[p.pk],
            changes=changes[p.pk],
        )
        for p in pools
    ]
