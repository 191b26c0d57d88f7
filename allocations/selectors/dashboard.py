"""The operator dashboard's reads that need allocations: capacity beside usage on the overview
and the provider, resource class and aggregate pages (sorting by free or used capacity), the
hosts over capacity, and the consumer and project pages.

Provider-only reads come from :mod:`providers.selectors.dashboard`, usage beside capacity from
:mod:`.usage`. Set-based: a fixed number of queries per page whatever the number of rows.
"""

import uuid as uuidlib
from collections import defaultdict
from dataclasses import dataclass, replace

from django.core.paginator import Paginator
from django.db.models import (
    Case,
    Count,
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

from placementsite.core.db import reading_connection
from providers.capacity import usable_expression
from providers.models import Aggregate, Inventory, ResourceClass, ResourceProvider
from providers.selectors.compute_nodes import tree_capacities
from providers.selectors.dashboard import (
    ProviderFilters,
    filtered_providers,
    sharing_member_count,
    sharing_provider_ids,
    tree_nodes,
    tree_sizes,
    with_link_counts,
)
from providers.selectors.device_units import host_device_units

from ..models import Allocation, Consumer, ConsumerType, Project, User
from .devices import devices_of_consumers
from .usage import (
    InventoryUsage,
    aggregate_usages,
    inventory_usages_by_provider,
    own_usages_by_provider,
    tree_usages_by_root,
    usage_by_class,
    usage_by_class_of,
    usage_grouped,
)

PROVIDERS_PER_PAGE = 50
CONSUMERS_PER_PAGE = 50
PROJECTS_PER_PAGE = 50


# --- overview -------------------------------------------------------------------------------


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

    Ranked in one query: usage per provider and class (one pass over the allocations)
    joined to each inventory's usable capacity (the capacity model's SQL form), the
    provider's peak its largest percentage (:func:`providers.capacity.utilisation`: an
    inventory with nothing usable but something used counts as 100%); then the
    inventories of the chosen few (two more queries).
    """
    chosen = _fullest_ids(limit)
    if not chosen:
        return []
    providers = ResourceProvider.objects.in_bulk(chosen)
    inventories = inventory_usages_by_provider(chosen)
    found = []
    for rp in chosen:
        invs = inventories[rp]
        peak = max(invs, key=lambda inv: inv.utilisation)
        found.append(ProviderPeak(rp, providers[rp].uuid, providers[rp].name, peak, invs))
    return found


def _fullest_ids(limit):
    usable_sql, usable_params = (
        Inventory.objects.order_by()
        .annotate(usable=usable_expression())
        .values("resource_provider_id", "resource_class_id", "usable")
        .query.sql_with_params()
    )
    used_sql, used_params = (
        Allocation.objects.order_by()
        .values("resource_provider_id", "resource_class_id")
        .annotate(used=Sum("used"))
        .values("resource_provider_id", "resource_class_id", "used")
        .query.sql_with_params()
    )
    sql = (
        "SELECT inv.resource_provider_id,"
        " MAX(CASE WHEN inv.usable <= 0 THEN 100.0"
        " ELSE CAST(u.used AS DOUBLE PRECISION) * 100.0 / inv.usable END) AS peak"
        f" FROM ({usable_sql}) inv INNER JOIN ({used_sql}) u"
        " ON u.resource_provider_id = inv.resource_provider_id"
        " AND u.resource_class_id = inv.resource_class_id"
        " WHERE u.used > 0"
        " GROUP BY inv.resource_provider_id"
        " ORDER BY peak DESC, inv.resource_provider_id LIMIT %s"
    )
    with reading_connection().cursor() as cursor:
        cursor.execute(sql, (*usable_params, *used_params, limit))
        return [row[0] for row in cursor.fetchall()]


@dataclass(frozen=True)
class Counts:
    consumers: int
    projects: int
    users: int
    allocations: int


def allocation_counts():
    return Counts(
        consumers=Consumer.objects.count(),
        projects=Project.objects.count(),
        users=User.objects.count(),
        allocations=Allocation.objects.count(),
    )


@dataclass(frozen=True)
class ProjectShare:
    project: str  # "" for the rest, summed
    used: int
    percent: float


@dataclass(frozen=True)
class ClassShares:
    resource_class: str
    used: int
    shares: list  # ProjectShare, largest first, the rest summed last


def usage_share_by_project(*, top=5):
    """Per resource class in use, the ``top`` projects' share of what is used (three queries:
    the sums by class and project id, then the names of the classes and projects in them)."""
    sums = list(
        Allocation.objects.values("resource_class_id", "consumer__project_id")
        .annotate(used=Sum("used"))
        .order_by()
        .values_list("resource_class_id", "consumer__project_id", "used")
    )
    class_names = dict(
        ResourceClass.objects.filter(id__in={rc for rc, _p, _u in sums}).values_list("id", "name")
    )
    projects = dict(
        Project.objects.filter(id__in={p for _rc, p, _u in sums}).values_list("id", "external_id")
    )
    rows = [(rc, class_names[rc], projects.get(p), used) for rc, p, used in sums]
    per_class = defaultdict(list)
    names = {}
    for rc, rc_name, project, used in rows:
        names[rc] = rc_name
        per_class[rc].append((used, project))
    found = []
    for rc in sorted(per_class):
        amounts = sorted(per_class[rc], key=lambda item: (-item[0], item[1]))
        total = sum(used for used, _ in amounts)
        if total <= 0:
            continue
        shares = [ProjectShare(p, u, u * 100.0 / total) for u, p in amounts[:top]]
        rest = sum(u for u, _ in amounts[top:])
        if rest:
            shares.append(ProjectShare("", rest, rest * 100.0 / total))
        found.append(ClassShares(names[rc], total, shares))
    return found


# --- providers list -------------------------------------------------------------------------


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
    inventories: list  # ClassUsage per class: a host's whole tree's, else its own

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
    qs = with_link_counts(filtered_providers(filters))
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
    sizes = tree_sizes(roots)
    sharing = sharing_provider_ids(ids)
    trees = {pk for pk in roots if sizes.get(pk, 1) > 1}
    single = [pk for pk in ids if pk not in trees]
    inventories = own_usages_by_provider(single) if single else {}
    if trees:
        inventories.update(tree_usages_by_root(trees))
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
    tree_totals: list  # for a host with children: ClassUsage over the whole tree
    traits: list
    aggregates: list
    consumers: list
    devices: list  # the device units of the tree (a root) or of the provider, with holders


def provider_detail(uuid):
    """Everything the provider page shows, or None when there is no such provider."""
    provider = ResourceProvider.objects.select_related("parent", "root").filter(uuid=uuid).first()
    if provider is None:
        return None
    root_id = provider.root_id or provider.id
    tree = tree_nodes(root_id, provider.id)
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
        devices=_device_units(provider, root_id),
    )


def _device_units(provider, root_id):
    """A host's page lists every unit of its tree; a device's page its own units."""
    units = host_device_units(root_provider_id=root_id)
    if provider.parent_id is not None:
        units = [u for u in units if u["provider"] == str(provider.uuid)]
    return units


# --- resource classes, aggregates -----------------------------------------------------------


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


@dataclass(frozen=True)
class AggregateDetail:
    aggregate: Aggregate
    members: object  # a page of ProviderRow
    totals: list  # ClassUsage per class over the members' own inventories
    sharing_members: int


def aggregate_detail(uuid, page_number=1):
    aggregate = Aggregate.objects.filter(uuid=uuid).first()
    if aggregate is None:
        return None
    members = provider_list_page(ProviderFilters(aggregate=aggregate.uuid), page_number)
    sharing = sharing_member_count(aggregate)
    return AggregateDetail(aggregate, members, aggregate_usages(aggregate.id), sharing)


# --- compute hosts --------------------------------------------------------------------------


def over_capacity(root_ids):
    """``{root_id: ["VCPU: 40 used of 32", ...]}``, one entry per inventory of the tree whose
    usage exceeds its capacity (an inventory lowered below its usage, as Placement allows)."""
    capacities = tree_capacities(root_ids=root_ids)
    provider_ids = sorted({provider_id for _, provider_id, _, _ in capacities})
    usage = {
        (provider_id, name): used
        for provider_id, name, used in usage_grouped(
            "resource_provider_id", "resource_class__name", resource_provider_id__in=provider_ids
        )
    }
    found = {}
    for root_id, provider_id, name, usable in capacities:
        used = usage.get((provider_id, name), 0)
        if used > usable:
            found.setdefault(root_id, []).append(f"{name}: {used} used of {usable}")
    return found


# --- consumers and projects -----------------------------------------------------------------


@dataclass(frozen=True)
class ConsumerFilters:
    q: str = ""
    project: str = ""
    user: str = ""
    consumer_type: str = ""


@dataclass(frozen=True)
class ConsumerRow:
    id: int
    uuid: uuidlib.UUID
    project: str
    user: str
    consumer_type: str | None
    generation: int
    created_at: object
    updated_at: object
    provider_count: int
    resources: list  # (class name, used) summed over providers
    hosts: list  # (uuid, name) of the root providers (hosts) it has allocations in


def _hosts_of(consumer_ids):
    """{consumer id: [(host uuid, host name), ...]}: the trees a consumer takes from."""
    rows = (
        Allocation.objects.filter(consumer_id__in=consumer_ids)
        .values_list(
            "consumer_id", "resource_provider__root__uuid", "resource_provider__root__name"
        )
        .distinct()
        .order_by("consumer_id", "resource_provider__root__name")
    )
    found = defaultdict(list)
    for consumer_id, uuid, name in rows:
        found[consumer_id].append((uuid, name))
    return found


def consumer_list_page(filters, page_number=1, per_page=CONSUMERS_PER_PAGE):
    """A page of :class:`ConsumerRow`, newest first; four queries (count, page, usage, hosts)."""
    qs = Consumer.objects.all()
    if filters.q:
        q = filters.q.strip()
        if all(c in "0123456789abcdefABCDEF-" for c in q):
            qs = qs.filter(uuid__icontains=q)
        else:
            qs = qs.filter(Q(project__external_id__icontains=q) | Q(user__external_id__icontains=q))
    if filters.project:
        qs = qs.filter(project__external_id=filters.project)
    if filters.user:
        qs = qs.filter(user__external_id=filters.user)
    if filters.consumer_type:
        qs = qs.filter(consumer_type__name=filters.consumer_type)
    qs = qs.annotate(
        provider_count=Coalesce(
            Subquery(
                Allocation.objects.filter(consumer_id=OuterRef("pk"))
                .order_by()
                .values("consumer_id")
                .annotate(n=Count("resource_provider_id", distinct=True))
                .values("n")[:1],
                output_field=IntegerField(),
            ),
            0,
        )
    ).order_by("-created_at", "-id")
    page = Paginator(
        qs.values_list(
            "id",
            "uuid",
            "project__external_id",
            "user__external_id",
            "consumer_type__name",
            "generation",
            "created_at",
            "updated_at",
            "provider_count",
        ),
        per_page,
    ).get_page(page_number)
    rows = list(page.object_list)
    ids = [row[0] for row in rows]
    usage = usage_by_class_of("consumer_id", ids)
    hosts = _hosts_of(ids)
    page.object_list = [
        ConsumerRow(*row, usage.get(row[0], []), hosts.get(row[0], [])) for row in rows
    ]
    return page


def consumer_type_names():
    return list(ConsumerType.objects.order_by("name").values_list("name", flat=True))


@dataclass(frozen=True)
class ProviderAllocations:
    provider_id: int
    uuid: uuidlib.UUID
    name: str
    resources: list  # (class name, used)


@dataclass(frozen=True)
class ConsumerDetail:
    consumer: Consumer
    providers: list  # ProviderAllocations
    totals: list  # (class name, used) over every provider
    devices: list  # the device units assigned to it (devices_of_consumers' entries)


def consumer_detail(uuid):
    """The consumer page's data, or None when there is no such consumer (two queries)."""
    consumer = (
        Consumer.objects.select_related("project", "user", "consumer_type")
        .filter(uuid=uuid)
        .first()
    )
    if consumer is None:
        return None
    rows = (
        Allocation.objects.filter(consumer=consumer)
        .order_by("resource_provider__name", "resource_class_id")
        .values_list(
            "resource_provider_id",
            "resource_provider__uuid",
            "resource_provider__name",
            "resource_class__name",
            "used",
        )
    )
    providers = {}
    totals = {}
    for rp, rp_uuid, rp_name, rc_name, used in rows:
        entry = providers.get(rp)
        if entry is None:
            entry = providers[rp] = ProviderAllocations(rp, rp_uuid, rp_name, [])
        entry.resources.append((rc_name, used))
        totals[rc_name] = totals.get(rc_name, 0) + used
    devices = devices_of_consumers([consumer.uuid]).get(str(consumer.uuid), [])
    return ConsumerDetail(consumer, list(providers.values()), list(totals.items()), devices)


@dataclass(frozen=True)
class ProjectRow:
    id: int
    external_id: str
    consumer_count: int
    user_count: int
    usage: dict  # class name -> used
    amounts: list  # used per class, in the order of ProjectUsagePage.resource_classes


@dataclass(frozen=True)
class ProjectUsagePage:
    page: object  # a Page of ProjectRow
    resource_classes: list  # the column order: classes used by the projects shown


def project_usage_page(*, q="", page_number=1, per_page=PROJECTS_PER_PAGE):
    """A page of projects with their consumers, users and usage per class (three queries)."""
    consumers = Consumer.objects.filter(project_id=OuterRef("pk")).order_by().values("project_id")
    qs = Project.objects.annotate(
        consumer_count=Coalesce(Subquery(consumers.annotate(n=Count("*")).values("n")[:1]), 0),
        user_count=Coalesce(
            Subquery(consumers.annotate(n=Count("user_id", distinct=True)).values("n")[:1]), 0
        ),
    ).order_by("external_id")
    if q:
        qs = qs.filter(external_id__icontains=q.strip())
    page = Paginator(
        qs.values_list("id", "external_id", "consumer_count", "user_count"), per_page
    ).get_page(page_number)
    rows = list(page.object_list)
    usage = usage_by_class_of("consumer__project_id", [row[0] for row in rows])
    classes = []
    for entries in usage.values():
        for rc_name, _used in entries:
            if rc_name not in classes:
                classes.append(rc_name)
    page.object_list = []
    for row in rows:
        used = dict(usage.get(row[0], []))
        page.object_list.append(ProjectRow(*row, used, [used.get(rc, 0) for rc in classes]))
    return ProjectUsagePage(page, classes)


# --- search ---------------------------------------------------------------------------------


def _looks_like_uuid_part(text):
    return all(c in "0123456789abcdefABCDEF-" for c in text)


def consumers_matching(q, limit=20):
    """Consumers whose uuid contains ``q`` (which must look like part of a uuid), newest first."""
    q = q.strip()
    if not q or not _looks_like_uuid_part(q):
        return []
    return list(
        Consumer.objects.filter(uuid__icontains=q)
        .order_by("-created_at", "-id")
        .values_list("uuid", "project__external_id", "user__external_id")[:limit]
    )


def projects_matching(q, limit=20):
    """Projects whose external id contains ``q``, with how many consumers each has."""
    q = q.strip()
    if not q:
        return []
    consumers = Consumer.objects.filter(project_id=OuterRef("pk")).order_by().values("project_id")
    return list(
        Project.objects.filter(external_id__icontains=q)
        .annotate(
            consumer_count=Coalesce(Subquery(consumers.annotate(n=Count("*")).values("n")[:1]), 0)
        )
        .order_by("external_id")
        .values_list("external_id", "consumer_count")[:limit]
    )
