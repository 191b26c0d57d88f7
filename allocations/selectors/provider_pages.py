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
    FilteredRelation,
    FloatField,
    IntegerField,
    Model,
    OuterRef,
    Q,
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


def _with_class_values(qs: QuerySet, resource_class_id: int) -> QuerySet:
    """``qs`` (providers) annotated with ``_usable`` and ``_used`` of one class: over the
    row's whole tree when it is a root with children (what the row shows for a host), else
    the provider's own (a flat host's tree is itself). ``_usable`` is None without inventory
    of the class.

    A provider's own inventory and usage rows (one each at most, unique per provider and
    class) are LEFT JOINed, one pass over the class's rows for the whole list; only the roots
    that have children (one hashed set, read once) sum their tree's rows in a subquery. A
    subquery per provider, as before, ran 200,000 of them at 100,000 providers (1.1 s).
    """

    def tree_sum(model: type[Model], value: str | Expression) -> Subquery:
        return Subquery(
            model.objects.filter(
                resource_class_id=resource_class_id, resource_provider__root_id=OuterRef("pk")
            )
            .order_by()
            .values("resource_class_id")
            .annotate(s=Sum(value))
            .values("s")[:1]
        )

    has_children = Q(parent__isnull=True) & Q(
        pk__in=ResourceProvider.objects.filter(parent__isnull=False).values("root_id")
    )
    qs = qs.annotate(
        _own_inventory=FilteredRelation(
            "inventories", condition=Q(inventories__resource_class_id=resource_class_id)
        ),
        _own_usage=FilteredRelation(
            "usage_rows", condition=Q(usage_rows__resource_class_id=resource_class_id)
        ),
    )
    return qs.annotate(
        _usable=Case(
            When(has_children, then=tree_sum(Inventory, usable_expression())),
            default=usable_expression("_own_inventory__"),
        ),
        _used=Coalesce(
            Case(
                When(has_children, then=tree_sum(ProviderUsage, "used")),
                default=F("_own_usage__used"),
            ),
            0,
        ),
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
        qs = _with_class_values(qs, rc_id)
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
    them; a child shows its own. Nine queries: the count, the page's ids in order, their
    columns (parent, root and link counts), tree sizes, sharing marks, the inventories and usage of the flat providers
    and of the trees.
    """
    # The page's ids first, sorted over the filtered providers with only what the order
    # needs; then the page's columns for those ids alone. Joined to every provider the
    # columns (parent, root, link counts) went through the sort, 0.5 s at 100,000 providers.
    # (The link counts are computed for the sort only when it names them.)
    providers = with_link_counts(providers=filtered_providers(filters=filters))
    ids_in_order = _sorted(providers, sort).values_list("id", flat=True)
    page = Paginator(ids_in_order, per_page).get_page(page_number)
    columns = {
        row[0]: row
        for row in with_link_counts(
            providers=ResourceProvider.objects.filter(id__in=list(page.object_list))
        ).values_list(
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
        )
    }
    rows: list[_ProviderColumns] = [columns[pk] for pk in page.object_list if pk in columns]
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
