"""Reads behind the operator dashboard's provider pages.

Every number about an inventory (capacity after allocation ratio, free,
utilisation) comes from :class:`providers.capacity.Capacity`; the queries
here only fetch the rows it needs, set-based, a fixed number per page
whatever the number of providers.
"""

import heapq
import uuid as uuidlib
from collections import defaultdict
from dataclasses import dataclass, replace

from django.core.paginator import Paginator
from django.db.models import (
    Case,
    Count,
    Exists,
    ExpressionWrapper,
    F,
    FloatField,
    IntegerField,
    OuterRef,
    Q,
    Subquery,
    Sum,
    When,
)
from django.db.models.functions import Coalesce, NullIf

from allocations.models import Allocation
from allocations.selectors.usage import (
    usage_by_class,
    usage_by_provider_and_class,
    usage_by_root_and_class,
)
from providers.capacity import (
    CAPACITY_FIELDS,
    Capacity,
    usable_expression,
    usable_units,
    utilisation,
)
from providers.models import (
    Aggregate,
    Inventory,
    ResourceClass,
    ResourceProvider,
    ResourceProviderAggregate,
    ResourceProviderTrait,
    Trait,
)

PROVIDERS_PER_PAGE = 50
TREE_ROOT = "root"
TREE_CHILD = "child"


@dataclass(frozen=True)
class ClassUsage:
    """One resource class summed over every inventory of it."""

    resource_class_id: int
    name: str
    inventories: int
    total: int
    reserved: int
    capacity: int
    used: int

    @property
    def free(self):
        return self.capacity - self.used

    @property
    def utilisation(self):
        return utilisation(self.used, self.capacity)


@dataclass(frozen=True)
class InventoryUsage:
    """One inventory of one provider with what is allocated from it."""

    resource_class: str
    capacity_model: Capacity
    used: int

    @property
    def total(self):
        return self.capacity_model.total

    @property
    def reserved(self):
        return self.capacity_model.reserved

    @property
    def min_unit(self):
        return self.capacity_model.min_unit

    @property
    def max_unit(self):
        return self.capacity_model.max_unit

    @property
    def step_size(self):
        return self.capacity_model.step_size

    @property
    def allocation_ratio(self):
        return self.capacity_model.allocation_ratio

    @property
    def capacity(self):
        return self.capacity_model.usable

    @property
    def free(self):
        return self.capacity_model.free(self.used)

    @property
    def utilisation(self):
        return self.capacity_model.utilisation(self.used)


def inventory_usages_by_provider(provider_ids):
    """{provider_id: [InventoryUsage, ...]} in resource class order; two queries."""
    used = usage_by_provider_and_class(provider_ids=provider_ids)
    rows = (
        Inventory.objects.filter(resource_provider_id__in=provider_ids)
        .order_by("resource_provider_id", "resource_class_id")
        .values_list(
            "resource_provider_id", "resource_class_id", "resource_class__name", *CAPACITY_FIELDS
        )
    )
    found = defaultdict(list)
    for rp, rc, rc_name, *fields in rows:
        found[rp].append(InventoryUsage(rc_name, Capacity(*fields), used.get((rp, rc), 0)))
    return found


@dataclass(frozen=True)
class TreeClassUsage:
    """One resource class summed over a whole tree: a host and its NUMA, GPU... children."""

    resource_class: str
    inventories: int  # how many providers of the tree have inventory of the class
    total: int
    reserved: int
    capacity: int
    used: int

    @property
    def free(self):
        return self.capacity - self.used

    @property
    def utilisation(self):
        return utilisation(self.used, self.capacity)


def tree_usages_by_root(root_ids):
    """{root id: [TreeClassUsage, ...]} in resource class order, for whole trees (two queries).

    Capacity is summed inventory by inventory (each by the capacity model's rule), so a
    host whose VCPU sits on two NUMA children has the VCPU of both.
    """
    used = usage_by_root_and_class(root_ids)
    rows = (
        Inventory.objects.filter(resource_provider__root_id__in=root_ids)
        .order_by("resource_provider__root_id", "resource_class_id")
        .values_list(
            "resource_provider__root_id",
            "resource_class_id",
            "resource_class__name",
            "total",
            "reserved",
            "allocation_ratio",
        )
    )
    sums = {}
    for root, rc, rc_name, total, reserved, ratio in rows:
        acc = sums.setdefault((root, rc), [rc_name, 0, 0, 0, 0])
        acc[1] += 1
        acc[2] += total
        acc[3] += reserved
        acc[4] += usable_units(total, reserved, ratio)
    found = defaultdict(list)
    for (root, rc), (rc_name, n, total, reserved, capacity) in sums.items():
        found[root].append(
            TreeClassUsage(rc_name, n, total, reserved, capacity, used.get((root, rc), 0))
        )
    return found


# --- overview -------------------------------------------------------------------------------


def class_usage_summary():
    """A :class:`ClassUsage` for every resource class that some provider has inventory of.

    Inventories are fetched grouped by their shape (class, total, reserved,
    ratio) with a count, so identical inventories cost one row.
    """
    shapes = (
        Inventory.objects.values(
            "resource_class_id", "resource_class__name", "total", "reserved", "allocation_ratio"
        )
        .annotate(n=Count("id"))
        .order_by()
    )
    used = usage_by_class()
    sums = {}
    for row in shapes:
        rc = row["resource_class_id"]
        usable = usable_units(row["total"], row["reserved"], row["allocation_ratio"])
        acc = sums.setdefault(rc, [row["resource_class__name"], 0, 0, 0, 0])
        acc[1] += row["n"]
        acc[2] += row["total"] * row["n"]
        acc[3] += row["reserved"] * row["n"]
        acc[4] += usable * row["n"]
    return [
        ClassUsage(rc, name, n, total, reserved, capacity, used.get(rc, 0))
        for rc, (name, n, total, reserved, capacity) in sorted(sums.items())
    ]


@dataclass(frozen=True)
class Counts:
    providers: int
    root_providers: int
    aggregates: int
    traits_in_use: int


def provider_counts():
    return Counts(
        providers=ResourceProvider.objects.count(),
        root_providers=ResourceProvider.objects.filter(parent__isnull=True).count(),
        aggregates=Aggregate.objects.count(),
        traits_in_use=ResourceProviderTrait.objects.values("trait_id").distinct().count(),
    )


@dataclass(frozen=True)
class ProviderPeak:
    """A provider and its fullest inventory."""

    id: int
    uuid: uuidlib.UUID
    name: str
    peak: InventoryUsage
    inventories: list


def fullest_providers(limit=10):
    """The ``limit`` providers whose fullest inventory is the most used, fullest first.

    Two set-based reads (usage per provider and class; inventory rows), each
    inventory judged by the capacity model (memoised per distinct shape), then
    the inventories of the chosen few (two more queries). Ranking in SQL with a
    correlated usable-capacity subquery measured several times slower here.
    """
    used = usage_by_provider_and_class()
    if not used:
        return []
    usable_of = {}
    peaks = {}
    rows = Inventory.objects.order_by().values_list(
        "resource_provider_id", "resource_class_id", "total", "reserved", "allocation_ratio"
    )
    for rp, rc, total, reserved, ratio in rows:
        amount = used.get((rp, rc))
        if not amount:
            continue
        shape = (total, reserved, ratio)
        usable = usable_of.get(shape)
        if usable is None:
            usable = usable_of[shape] = usable_units(total, reserved, ratio)
        percent = utilisation(amount, usable)
        if rp not in peaks or percent > peaks[rp]:
            peaks[rp] = percent
    chosen = heapq.nsmallest(limit, peaks, key=lambda rp: (-peaks[rp], rp))
    providers = ResourceProvider.objects.in_bulk(chosen)
    inventories = inventory_usages_by_provider(chosen)
    found = []
    for rp in chosen:
        invs = inventories[rp]
        peak = max(invs, key=lambda inv: inv.utilisation)
        found.append(ProviderPeak(rp, providers[rp].uuid, providers[rp].name, peak, invs))
    return found


# --- providers list -------------------------------------------------------------------------


@dataclass(frozen=True)
class ProviderFilters:
    q: str = ""
    trait: str = ""
    aggregate: uuidlib.UUID | None = None
    resource_class: str = ""
    tree: str = ""  # "", TREE_ROOT or TREE_CHILD


def _count_of(model, column="resource_provider_id"):
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


def filtered_providers(filters):
    """The providers that pass ``filters``, in name order (a queryset)."""
    qs = ResourceProvider.objects.all()
    if filters.q:
        q = filters.q.strip()
        match = Q(name__icontains=q)
        if all(c in "0123456789abcdefABCDEF-" for c in q):
            match |= Q(uuid__icontains=q)
        qs = qs.filter(match)
    if filters.trait:
        qs = qs.filter(
            Exists(
                ResourceProviderTrait.objects.filter(
                    resource_provider_id=OuterRef("pk"), trait__name=filters.trait
                )
            )
        )
    if filters.aggregate:
        qs = qs.filter(
            Exists(
                ResourceProviderAggregate.objects.filter(
                    resource_provider_id=OuterRef("pk"), aggregate__uuid=filters.aggregate
                )
            )
        )
    if filters.resource_class:
        qs = qs.filter(
            Exists(
                Inventory.objects.filter(
                    resource_provider_id=OuterRef("pk"),
                    resource_class__name=filters.resource_class,
                )
            )
        )
    if filters.tree == TREE_ROOT:
        qs = qs.filter(parent__isnull=True)
    elif filters.tree == TREE_CHILD:
        qs = qs.filter(parent__isnull=False)
    return qs.order_by("name")


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
    inventories: list  # a host's: its whole tree's, per class (TreeClassUsage)

    @property
    def is_root(self):
        return self.parent_uuid is None

    @property
    def is_host_of_a_tree(self):
        return self.is_root and self.tree_size > 1


# Sort keys of the provider list: plain columns, and per resource class ("free:VCPU").
PROVIDER_SORTS = {
    "name": "name",
    "generation": "generation",
    "traits": "trait_count",
    "aggregates": "aggregate_count",
}
CLASS_SORTS = ("free", "used", "utilisation", "capacity")


def _tree_or_own(model, resource_class_id, value):
    """Per row: ``Sum(value)`` of ``model`` rows of the class over the row's whole tree when
    it is a root (what the row shows for a host), else over the provider alone."""

    def summed(**where):
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


SHARING_TRAIT = "MISC_SHARES_VIA_AGGREGATE"


def _is_sharing():
    return Exists(
        ResourceProviderTrait.objects.filter(
            resource_provider_id=OuterRef("pk"), trait__name=SHARING_TRAIT
        )
    )


def parse_provider_sort(sort):
    """``"-free:VCPU"`` -> ``(True, "free", "VCPU")``; ``None`` for an unknown sort."""
    descending = sort.startswith("-")
    key, _, class_name = sort.lstrip("-").partition(":")
    if key in PROVIDER_SORTS and not class_name:
        return descending, key, ""
    if key in CLASS_SORTS and class_name:
        return descending, key, class_name
    return None


def _sorted(qs, sort):
    """``qs`` in the order ``sort`` names, name breaking ties; name order if it is unknown.

    Per class, rows without inventory of the class come last whatever the direction.
    """
    parsed = parse_provider_sort(sort or "")
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
            _used=Coalesce(_tree_or_own(Allocation, rc_id, "used"), 0),
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


def provider_list_page(filters, page_number=1, per_page=PROVIDERS_PER_PAGE, sort=""):
    """One page of :class:`ProviderRow` for the providers passing ``filters``, in the order
    ``sort`` names (see :func:`parse_provider_sort`), name order by default.

    A host (a root) shows its whole tree's inventories and usage per class, and sorts by
    them; a child shows its own. Eight queries: the count, the page (with parent, root and
    link counts), tree sizes, sharing marks, the inventories and usage of the flat providers
    and of the trees.
    """
    qs = filtered_providers(filters).annotate(
        trait_count=_count_of(ResourceProviderTrait),
        aggregate_count=_count_of(ResourceProviderAggregate),
    )
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
    rows = list(page.object_list)
    # Tree sizes and sharing marks for the page's rows only (not for the rows an OFFSET
    # skips, as annotations would be).
    ids = [row[0] for row in rows]
    roots = [row[0] for row in rows if row[4] is None]
    tree_sizes = dict(
        ResourceProvider.objects.filter(root_id__in=roots)
        .values("root_id")
        .annotate(n=Count("id"))
        .order_by()
        .values_list("root_id", "n")
    )
    sharing = set(
        ResourceProviderTrait.objects.filter(
            resource_provider_id__in=ids, trait__name=SHARING_TRAIT
        ).values_list("resource_provider_id", flat=True)
    )
    trees = {pk for pk in roots if tree_sizes.get(pk, 1) > 1}
    single = [pk for pk in ids if pk not in trees]
    inventories = inventory_usages_by_provider(single) if single else {}
    if trees:
        inventories.update(tree_usages_by_root(trees))
    page.object_list = [
        ProviderRow(
            *row,
            tree_sizes.get(row[0], 1) if row[4] is None else 0,
            row[0] in sharing,
            inventories.get(row[0], []),
        )
        for row in rows
    ]
    return page


@dataclass(frozen=True)
class FilterChoices:
    traits: list
    aggregates: list
    resource_classes: list


def provider_filter_choices():
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
    inventories: list = ()  # InventoryUsage of this provider alone


@dataclass(frozen=True)
class ConsumerAllocations:
    """What one consumer holds from one provider."""

    consumer_id: int
    uuid: uuidlib.UUID
    project: str
    user: str
    consumer_type: str | None
    generation: int
    resources: list  # (class name, used)


@dataclass(frozen=True)
class ProviderDetail:
    provider: ResourceProvider
    parent: ResourceProvider | None
    root: ResourceProvider | None
    tree: list  # TreeNode, depth first, each with its own inventories
    inventories: list
    tree_totals: list  # for a host with children: TreeClassUsage over the whole tree
    traits: list
    aggregates: list
    consumers: list


def _tree_nodes(root_id, current_id):
    """The whole tree of ``root_id``, depth first, children in name order (one query)."""
    rows = list(
        ResourceProvider.objects.filter(root_id=root_id)
        .order_by("name")
        .values_list("id", "uuid", "name", "parent_id")
    )
    children = defaultdict(list)
    for row in rows:
        children[row[3]].append(row)
    nodes = []
    stack = [(row, 0) for row in reversed([r for r in rows if r[0] == root_id])]
    seen = set()
    while stack:
        (pk, uuid, name, _parent), depth = stack.pop()
        if pk in seen:  # a broken tree must not loop forever
            continue
        seen.add(pk)
        nodes.append(TreeNode(pk, uuid, name, depth, pk == current_id))
        stack.extend((child, depth + 1) for child in reversed(children.get(pk, [])))
    return nodes


def provider_detail(uuid):
    """Everything the provider page shows, or None when there is no such provider."""
    provider = ResourceProvider.objects.select_related("parent", "root").filter(uuid=uuid).first()
    if provider is None:
        return None
    root_id = provider.root_id or provider.id
    tree = _tree_nodes(root_id, provider.id)
    usages = inventory_usages_by_provider([node.id for node in tree] or [provider.id])
    tree = [replace(node, inventories=usages.get(node.id, [])) for node in tree]
    tree_totals = []
    if provider.parent_id is None and len(tree) > 1:
        tree_totals = tree_usages_by_root([provider.id]).get(provider.id, [])
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
    consumers = {}
    for cid, cuuid, project, user, ctype, generation, rc_name, used in allocations:
        entry = consumers.get(cid)
        if entry is None:
            entry = consumers[cid] = ConsumerAllocations(
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
    )


# --- traits, resource classes, aggregates ----------------------------------------------------


def resource_classes_with_counts():
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


def traits_with_counts(*, in_use_only=True, q="", page_number=1, per_page=100):
    """A page of traits, each with how many providers have it."""
    qs = Trait.objects.annotate(provider_count=_count_of(ResourceProviderTrait, "trait_id"))
    if in_use_only:
        qs = qs.filter(Exists(ResourceProviderTrait.objects.filter(trait_id=OuterRef("pk"))))
    if q:
        qs = qs.filter(name__icontains=q.strip())
    return Paginator(qs.order_by("id"), per_page).get_page(page_number)


def aggregates_with_counts(*, page_number=1, per_page=100):
    """A page of aggregates, each with how many providers are members."""
    qs = Aggregate.objects.annotate(
        member_count=_count_of(ResourceProviderAggregate, "aggregate_id")
    ).order_by("uuid")
    return Paginator(qs, per_page).get_page(page_number)


@dataclass(frozen=True)
class AggregateDetail:
    aggregate: Aggregate
    members: object  # a page of ProviderRow
    totals: list  # TreeClassUsage per class over the members' own inventories
    sharing_members: int


def _member_totals(aggregate_id):
    """Capacity and usage per class summed over an aggregate's members (two queries)."""
    members = ResourceProviderAggregate.objects.filter(aggregate_id=aggregate_id).values(
        "resource_provider_id"
    )
    used = usage_by_class(resource_provider_id__in=members)
    rows = (
        Inventory.objects.filter(resource_provider_id__in=members)
        .order_by("resource_class_id")
        .values_list(
            "resource_class_id", "resource_class__name", "total", "reserved", "allocation_ratio"
        )
    )
    sums = {}
    for rc, rc_name, total, reserved, ratio in rows:
        acc = sums.setdefault(rc, [rc_name, 0, 0, 0, 0])
        acc[1] += 1
        acc[2] += total
        acc[3] += reserved
        acc[4] += usable_units(total, reserved, ratio)
    return [
        TreeClassUsage(name, n, total, reserved, capacity, used.get(rc, 0))
        for rc, (name, n, total, reserved, capacity) in sums.items()
    ]


def aggregate_detail(uuid, page_number=1):
    aggregate = Aggregate.objects.filter(uuid=uuid).first()
    if aggregate is None:
        return None
    members = provider_list_page(ProviderFilters(aggregate=aggregate.uuid), page_number)
    sharing = (
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
    return AggregateDetail(aggregate, members, _member_totals(aggregate.id), sharing)


# --- search ---------------------------------------------------------------------------------


def providers_matching(q, limit=20):
    """Providers whose name (or uuid) contains ``q``, in name order, with their root's name."""
    if not q.strip():
        return []
    return list(
        filtered_providers(ProviderFilters(q=q)).values_list(
            "uuid", "name", "parent_id", "root__name"
        )[:limit]
    )


def hosts_of(uuids):
    """{provider uuid (str): (host uuid, host name, is sharing)} for ``uuids`` (one query)."""
    rows = (
        ResourceProvider.objects.filter(uuid__in=list(uuids))
        .annotate(is_sharing=_is_sharing())
        .values_list("uuid", "root__uuid", "root__name", "is_sharing")
    )
    return {
        str(uuid): (root_uuid, root_name, sharing) for uuid, root_uuid, root_name, sharing in rows
    }
