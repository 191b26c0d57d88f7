"""The dashboard's provider-side pages that show usage beside capacity: the provider list
(sorted by free, used or utilised capacity of a class), one provider with its tree, consumers
and devices, the resource classes with their providers and usage, one aggregate with its
members, and the hosts whose usage exceeds their capacity (the Hosts page's flags).

Provider-only reads come from :mod:`providers.selectors.dashboard`; usage beside capacity from
:mod:`.usage`. Set-based: a fixed number of queries per page whatever the number of rows.
"""

import uuid as uuidlib
from collections.abc import Iterable
from dataclasses import dataclass, replace

from django.core.paginator import Page, Paginator
from django.db.models import (
    Case,
    Count,
    Expression,
    ExpressionWrapper,
    F,
    FloatField,
    IntegerField,
    Model,
    OuterRef,
    QuerySet,
    Subquery,
    Sum,
    When,
)
from django.db.models.functions import Coalesce, NullIf

from providers.capacity import usable_expression
from providers.models import Aggregate, Inventory, ResourceClass, ResourceProvider
from providers.selectors.compute_nodes import tree_capacities
from providers.selectors.dashboard import (
    ProviderFilters,
    TreeNode,
    filtered_providers,
    sharing_member_count,
    sharing_provider_ids,
    tree_nodes,
    tree_sizes,
    with_link_counts,
)
from providers.selectors.device_units import host_device_units

from ..models import Allocation, ProviderUsage
from .usage import (
    ClassUsage,
    InventoryUsage,
    aggregate_usages,
    inventory_usages_by_provider,
    own_usages_by_provider,
    tree_usages_by_root,
    usage_by_class,
    usage_grouped,
)

PROVIDERS_PER_PAGE = 50


@dataclass(frozen=True)
class ProviderRow:
    id: int
    uuid: uuidlib.UUID
    name: str
    generation: int
    parent_uuid: uuidlib.UUID | None
    parent_name: str | None
    root_uuid: uuidlib.UUID | None
    root_name: str | None
    trait_count: int
    aggregate_count: int
    tree_size: int  # providers in the tree of a root (1 for a flat host); 0 for a child
    is_sharing: bool  # has MISC_SHARES_VIA_AGGREGATE: lends its resources to its aggregates
    inventories: list[ClassUsage]  # per class: a host's whole tree's, else its own

    @property
    def is_root(self) -> bool:
        return self.parent_uuid is None

    @property
    def is_host_of_a_tree(self) -> bool:
        return self.is_root and self.tree_size > 1


# The columns of a ProviderRow read from the database, in its order (the rest are computed).
_ProviderColumns = tuple[
    int,
    uuidlib.UUID,
    str,
    int,
    uuidlib.UUID | None,
    str | None,
    uuidlib.UUID | None,
    str | None,
    int,
    int,
]

# Sort keys of the provider list: plain columns, and per resource class ("free:VCPU").
PROVIDER_SORTS = {
    "name": "name",
    "generation": "generation",
    "traits": "trait_count",
    "aggregates": "aggregate_count",
}
CLASS_SORTS = ("free", "used", "utilisation", "capacity")


def _tree_or_own(model: type[Model], resource_class_id: int, value: str | Expression) -> Case:
    """Per row: ``Sum(value)`` of ``model`` rows of the class over the row's whole tree when
    it is a root (what the row shows for a host), else over the provider alone."""

    def summed(**where: object) -> Subquery:
        return Subquery(
            model.objects.filter(resource_class_id=resource_class_id, **where)
            .order_by()
            .values("resource_class_id")
            .annotate(s=Sum(value))
            .values("s")[:1]
        )

    return Case(
        When(parent__isnull=True, then=summed(resource_provider__root_id=OuterRef("pk"))),
        default=summed(resource_provider_id=OuterRef("pk")),
    )


def parse_provider_sort(*, sort: str) -> tuple[bool, str, str] | None:
    """``"-free:VCPU"`` -> ``(True, "free", "VCPU")``; ``None`` for an unknown sort."""
    descending = sort.startswith("-")
    key, _, class_name = sort.lstrip("-").partition(":")
    if key in PROVIDER_SORTS and not class_name:
        return descending, key, ""
    if key in CLASS_SORTS and class_name:
        return descending, key, class_name
    return None


def _sorted(qs: QuerySet, sort: str | None) -> QuerySet:
    """``qs`` in the order ``sort`` names, name breaking ties; name order if it is unknown.

    Per class, rows without inventory of the class come last whatever the direction.
    """
    parsed = parse_provider_sort(sort=sort or "")
    if parsed is None:
        return qs.order_by("name")
    descending, key, class_name = parsed
    if key in PROVIDER_SORTS:
        column = F(PROVIDER_SORTS[key])
    else:
        rc_id = ResourceClass.objects.filter(name=class_name).values_list("id", flat=True).first()
        if rc_id is None:
            return qs.order_by("name")
        qs = qs.annotate(
            _usable=_tree_or_own(Inventory, rc_id, usable_expression()),
            _used=Coalesce(_tree_or_own(ProviderUsage, rc_id, "used"), 0),
        )
        column = {
            "capacity": F("_usable"),
            "used": ExpressionWrapper(
                Case(When(_usable__isnull=False, then=F("_used"))), output_field=IntegerField()
            ),
            "free": ExpressionWrapper(F("_usable") - F("_used"), output_field=IntegerField()),
            "utilisation": ExpressionWrapper(
                F("_used") * 100.0 / NullIf(F("_usable"), 0), output_field=FloatField()
            ),
        }[key]
    order = column.desc(nulls_last=True) if descending else column.asc(nulls_last=True)
    return qs.order_by(order, "name", "id")


def provider_list_page(
    *,
    filters: ProviderFilters,
    page_number: int | str = 1,
    per_page: int = PROVIDERS_PER_PAGE,
    sort: str | None = "",
) -> Page:
    """One page of :class:`ProviderRow` for the providers passing ``filters``, in the order
    ``sort`` names (see :func:`parse_provider_sort`), name order by default.

    A host (a root) shows its whole tree's inventories and usage per class, and sorts by
    them; a child shows its own. Eight queries: the count, the page (with parent, root and
    link counts), tree sizes, sharing marks, the inventories and usage of the flat providers
    and of the trees.
    """
    qs = with_link_counts(providers=filtered_providers(filters=filters))
    page = Paginator(
        _sorted(qs, sort).values_list(
            "id",
            "uuid",
            "name",
            "generation",
            "parent__uuid",
            "parent__name",
            "root__uuid",
            "root__name",
            "trait_count",
            "aggregate_count",
        ),
        per_page,
    ).get_page(page_number)
    rows: list[_ProviderColumns] = list(page.object_list)
    # Tree sizes and sharing marks for the page's rows only (not for the rows an OFFSET
    # skips, as annotations would be).
    ids = [row[0] for row in rows]
    roots = [row[0] for row in rows if row[4] is None]
    sizes = tree_sizes(root_ids=roots)
    sharing = sharing_provider_ids(provider_ids=ids)
    trees = {pk for pk in roots if sizes.get(pk, 1) > 1}
    single = [pk for pk in ids if pk not in trees]
    inventories = own_usages_by_provider(provider_ids=single) if single else {}
    if trees:
        inventories.update(tree_usages_by_root(root_ids=trees))
    page.object_list = [
        ProviderRow(
            *row,
            sizes.get(row[0], 1) if row[4] is None else 0,
            row[0] in sharing,
            inventories.get(row[0], []),
        )
        for row in rows
    ]
    return page


# --- one provider ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ProviderConsumer:
    """What one consumer holds from one provider."""

    consumer_id: int
    uuid: uuidlib.UUID
    project: str
    user: str
    consumer_type: str | None
    generation: int
    resources: list[tuple[str, int]]  # (class name, used)


@dataclass(frozen=True)
class ProviderDetail:
    provider: ResourceProvider
    parent: ResourceProvider | None
    root: ResourceProvider | None
    tree: list[TreeNode]  # depth first, each with its own inventories
    inventories: list[InventoryUsage]
    tree_totals: list[ClassUsage]  # for a host with children: over the whole tree
    traits: list[str]
    aggregates: list[uuidlib.UUID]
    consumers: list[ProviderConsumer]
    devices: list[
        dict[str, str | None]
    ]  # the device units of the tree (a root) or of the provider, with holders


def provider_detail(*, uuid: uuidlib.UUID | str) -> ProviderDetail | None:
    """Everything the provider page shows, or None when there is no such provider."""
    provider = ResourceProvider.objects.select_related("parent", "root").filter(uuid=uuid).first()
    if provider is None:
        return None
    root_id = provider.root_id or provider.id
    tree = tree_nodes(root_id=root_id, current_id=provider.id)
    usages = inventory_usages_by_provider(provider_ids=[node.id for node in tree] or [provider.id])
    tree = [replace(node, inventories=usages.get(node.id, [])) for node in tree]
    tree_totals = []
    if provider.parent_id is None and len(tree) > 1:
        tree_totals = tree_usages_by_root(root_ids=[provider.id]).get(provider.id, [])
    allocations = (
        Allocation.objects.filter(resource_provider=provider)
        .order_by("consumer__uuid", "resource_class_id")
        .values_list(
            "consumer_id",
            "consumer__uuid",
            "consumer__project__external_id",
            "consumer__user__external_id",
            "consumer__consumer_type__name",
            "consumer__generation",
            "resource_class__name",
            "used",
        )
    )
    consumers: dict[int, ProviderConsumer] = {}
    for cid, cuuid, project, user, ctype, generation, rc_name, used in allocations:
        entry = consumers.get(cid)
        if entry is None:
            entry = consumers[cid] = ProviderConsumer(
                cid, cuuid, project, user, ctype, generation, []
            )
        entry.resources.append((rc_name, used))
    return ProviderDetail(
        provider=provider,
        parent=provider.parent,
        root=provider.root,
        tree=tree,
        inventories=usages.get(provider.id, []),
        tree_totals=tree_totals,
        traits=list(provider.traits.order_by("id").values_list("name", flat=True)),
        aggregates=list(provider.aggregates.order_by("uuid").values_list("uuid", flat=True)),
        consumers=list(consumers.values()),
        devices=_device_units(provider, root_id),
    )


def _device_units(provider: ResourceProvider, root_id: int) -> list[dict[str, str | None]]:
    """A host's page lists every unit of its tree; a device's page its own units."""
    units = host_device_units(root_provider_id=root_id)
    if provider.parent_id is not None:
        units = [u for u in units if u["provider"] == str(provider.uuid)]
    return units


# --- resource classes, aggregates -----------------------------------------------------------


def resource_classes_with_counts() -> list[ResourceClass]:
    """Every resource class with how many providers have inventory of it and how much is used.

    Three queries, each counting or summing a whole table in one pass grouped by class (a
    subquery per class scans the inventories and allocations once per class).
    """
    providers = dict(
        Inventory.objects.order_by()
        .values_list("resource_class_id")
        .annotate(n=Count("id"))  # one inventory per provider and class
    )
    used = usage_by_class()
    classes = list(ResourceClass.objects.order_by("id"))
    for rc in classes:
        rc.provider_count = providers.get(rc.id, 0)
        rc.used = used.get(rc.id, 0)
    return classes


@dataclass(frozen=True)
class AggregateDetail:
    aggregate: Aggregate
    members: Page  # of ProviderRow
    totals: list[ClassUsage]  # per class over the members' own inventories
    sharing_members: int


def aggregate_detail(
    *, uuid: uuidlib.UUID | str, page_number: int | str = 1
) -> AggregateDetail | None:
    aggregate = Aggregate.objects.filter(uuid=uuid).first()
    if aggregate is None:
        return None
    members = provider_list_page(
        filters=ProviderFilters(aggregate=aggregate.uuid), page_number=page_number
    )
    sharing = sharing_member_count(aggregate=aggregate)
    return AggregateDetail(aggregate, members, aggregate_usages(aggregate_id=aggregate.id), sharing)


# --- compute hosts --------------------------------------------------------------------------


def over_capacity(*, root_ids: Iterable[int]) -> dict[int, list[str]]:
    """``{root_id: ["VCPU: 40 used of 32", ...]}``, one entry per inventory of the tree whose
    usage exceeds its capacity (an inventory lowered below its usage, as Placement allows)."""
    capacities = tree_capacities(root_ids=root_ids)
    provider_ids = sorted({provider_id for _, provider_id, _, _ in capacities})
    usage = {
        (provider_id, name): used
        for provider_id, name, used in usage_grouped(
            group_by=("resource_provider_id", "resource_class__name"),
            resource_provider_id__in=provider_ids,
        )
    }
    found: dict[int, list[str]] = {}
    for root_id, provider_id, name, usable in capacities:
        used = usage.get((provider_id, name), 0)
        if used > usable:
            found.setdefault(root_id, []).append(f"{name}: {used} used of {usable}")
    return found
