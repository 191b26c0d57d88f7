"""Usage: the units of a resource class allocated on a provider, the sum of its allocations.

The one home of the rule, in its three forms:

* :func:`usage_subquery`: a correlated expression on any row that has a
  provider id and a class id (an inventory row, typically), 0 when nothing is
  allocated;
* :func:`usage_joined_rows`: the same usage LEFT JOINed on each row of an Inventory
  queryset (read once, where a correlated subquery used both as a column and in a
  condition is evaluated twice);
* :func:`usage_by_provider_and_class` / :func:`usage_rows`: the bulk form,
  one grouped query for many providers and classes.

``scheduling.queries`` keeps a raw-SQL copy for speed; a test checks it
against :func:`usage_by_provider_and_class`. The providers app reads usage
through :mod:`providers.usage`, over the one seam between the two apps
(:mod:`providers.allocations_port`, implemented by :mod:`allocations.port`).

Last, usage beside capacity (each inventory judged by :mod:`providers.capacity`): per
inventory (:class:`InventoryUsage`), and summed per class (:class:`ClassUsage`) over a tree, an
aggregate's members or the whole cloud, as the dashboard and ``/metrics`` show them.
"""

import uuid as uuidlib
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from django.db import connection
from django.db.models import (
    BigIntegerField,
    Count,
    F,
    OuterRef,
    QuerySet,
    Subquery,
    Sum,
    Value,
)
from django.db.models.functions import Cast, Coalesce

from providers.capacity import CAPACITY_FIELDS, Capacity, usable_units, utilisation
from providers.models import Inventory, ResourceClass, ResourceProvider, ResourceProviderAggregate

from ..models import Allocation, ProviderUsage


def _in_use() -> QuerySet:
    """The maintained usage rows that count: a row left at 0 by freed allocations is as no
    row (see :class:`~allocations.models.ProviderUsage`)."""
    return ProviderUsage.objects.filter(used__gt=0)


def usage_subquery(
    *, provider: str = "resource_provider_id", resource_class: str = "resource_class_id"
) -> Coalesce:
    """Units allocated of the outer row's class on its provider (0 if none): its usage row.

    ``provider`` and ``resource_class`` name the outer row's columns.
    """
    used = ProviderUsage.objects.filter(
        resource_provider_id=OuterRef(provider), resource_class_id=OuterRef(resource_class)
    ).values("used")[:1]
    return Coalesce(Subquery(used, output_field=BigIntegerField()), Value(0))


def usage_joined_rows(*, inventories: QuerySet, name: str = "used") -> QuerySet:
    """``inventories`` (an Inventory queryset) each annotated with ``name``, its usage, from
    the usage row of its provider and class LEFT JOINed on both columns (one at most, through
    ``ProviderUsage.inventory``), without grouping: for a query that groups the rows otherwise
    (per provider), with no filter on providers."""
    return inventories.annotate(
        **{name: Coalesce(F("usage_row__used"), Value(0), output_field=BigIntegerField())}
    )


def usage_grouped(*, group_by: Sequence[str], **filters: object) -> QuerySet:
    """``(*keys, used)`` rows: usage summed per ``group_by`` (ProviderUsage columns or paths,
    e.g. ``"resource_provider__root_id"``) over the usage rows matching ``filters`` (on the
    provider and class, named as on an Allocation), pairs in use only."""
    return (
        _in_use()
        .filter(**filters)
        .order_by()
        .values(*group_by)
        # PostgreSQL sums a bigint into a numeric (a Decimal in Python): back to a bigint.
        .annotate(used=Cast(Sum("used"), output_field=BigIntegerField()))
        .values_list(*group_by, "used")
    )


def usage_rows(
    *, provider_ids: Iterable[int] | None = None, class_ids: Iterable[int] | None = None
) -> QuerySet:
    """``(provider id, class id, used)`` rows, one per pair with allocations (a queryset)."""
    rows = _in_use()
    if provider_ids is not None:
        rows = rows.filter(resource_provider_id__in=provider_ids)
    if class_ids is not None:
        rows = rows.filter(resource_class_id__in=class_ids)
    return rows.order_by().values_list("resource_provider_id", "resource_class_id", "used")


def usage_by_provider_and_class(
    *, provider_ids: Iterable[int] | None = None, class_ids: Iterable[int] | None = None
) -> dict[tuple[int, int], int]:
    """``{(provider id, class id): used}`` for the pairs with allocations (others: 0)."""
    return {
        (provider_id, class_id): used
        for provider_id, class_id, used in usage_rows(
            provider_ids=provider_ids, class_ids=class_ids
        )
    }


def classes_in_use(
    *, provider_id: int | None = None, class_ids: Iterable[int] | None = None
) -> list[str]:
    """The names of the classes allocated (any amount) on ``provider_id`` (or any provider),
    among ``class_ids`` (or every class), in class id order."""
    allocated = _in_use()
    if provider_id is not None:
        allocated = allocated.filter(resource_provider_id=provider_id)
    if class_ids is not None:
        allocated = allocated.filter(resource_class_id__in=list(class_ids))
    return list(
        allocated.order_by("resource_class_id")
        .values_list("resource_class__name", flat=True)
        .distinct()
    )


@dataclass(frozen=True)
class UsageDrift:
    """A provider and class whose maintained usage row (``used``, 0 when there is none) is
    not the sum of its allocations (``summed``)."""

    provider_id: int
    provider_uuid: str
    class_id: int
    class_name: str
    used: int
    summed: int


_DRIFT = """
    SELECT d.provider_id, p.uuid, d.class_id, c.name, d.used, d.summed
    FROM (
        -- PostgreSQL sums a bigint into a numeric (a Decimal in Python): back to bigints.
        SELECT provider_id, class_id,
               CAST(SUM(used) AS BIGINT) AS used, CAST(SUM(summed) AS BIGINT) AS summed
        FROM (
            SELECT resource_provider_id AS provider_id, resource_class_id AS class_id,
                   used, 0 AS summed
            FROM {usage} {usage_where}
            UNION ALL
            SELECT resource_provider_id, resource_class_id, 0, used
            FROM {allocations} {allocation_where}
        ) both_sides
        GROUP BY provider_id, class_id
        HAVING SUM(used) <> SUM(summed)
    ) d
    JOIN {providers} p ON p.id = d.provider_id
    JOIN {classes} c ON c.id = d.class_id
    ORDER BY d.provider_id, d.class_id
"""


def usage_drift(*, provider_ids: Iterable[int] | None = None) -> list[UsageDrift]:
    """Every provider (of ``provider_ids``, or any) and class whose usage row is not the sum
    of its allocations, in provider and class id order: one query, comparing both sides
    grouped together (a row at 0 and no row are the same)."""
    ids = None if provider_ids is None else sorted(set(provider_ids))
    if ids is not None and not ids:
        return []
    where, params = "", []
    if ids is not None:
        where = f"WHERE resource_provider_id IN ({', '.join(['%s'] * len(ids))})"
        params = [*ids, *ids]
    sql = _DRIFT.format(
        usage=ProviderUsage._meta.db_table,
        allocations=Allocation._meta.db_table,
        providers=ResourceProvider._meta.db_table,
        classes=ResourceClass._meta.db_table,
        usage_where=where,
        allocation_where=where,
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return [
        UsageDrift(provider_id, str(uuidlib.UUID(str(uuid))), class_id, name, used, summed)
        for provider_id, uuid, class_id, name, used, summed in rows
    ]


def usage_by_class(**filters: object) -> dict[int, int]:
    """``{class id: used}`` summed over the providers of the allocations matching ``filters``
    (every provider by default)."""
    return dict(usage_grouped(group_by=("resource_class_id",), **filters))


def usage_by_root_and_class(*, root_ids: Iterable[int]) -> dict[tuple[int, int], int]:
    """``{(root id, class id): used}`` summed over each whole tree."""
    return {
        (root, class_id): used
        for root, class_id, used in usage_grouped(
            group_by=("resource_provider__root_id", "resource_class_id"),
            resource_provider__root_id__in=root_ids,
        )
    }


def usage_by_class_of(*, group_column: str, ids: Iterable[int]) -> dict[int, list[tuple[str, int]]]:
    """``{id: [(class name, used), ...]}`` summed per class, in class order, for each value
    ``ids`` holds of ``group_column`` (an Allocation column or path: ``"consumer__project_id"``)."""
    rows = (
        Allocation.objects.filter(**{f"{group_column}__in": ids})
        .values(group_column, "resource_class_id", "resource_class__name")
        .annotate(used=Sum("used"))
        .order_by(group_column, "resource_class_id")
        .values_list(group_column, "resource_class__name", "used")
    )
    found: dict[int, list[tuple[str, int]]] = defaultdict(list)
    for key, rc_name, used in rows:
        found[key].append((rc_name, used))
    return found


# --- usage beside capacity ------------------------------------------------------------------


@dataclass(frozen=True)
class ClassUsage:
    """One resource class summed over some inventories, each judged by the capacity model's
    rule: the whole cloud's, a tree's (a host and its NUMA, GPU... children), an aggregate's
    members' or, so that a list shows trees and single providers alike, one provider's own."""

    resource_class: str
    inventories: int  # how many were summed (a provider has one inventory per class)
    total: int
    reserved: int
    capacity: int
    used: int

    @property
    def free(self) -> int:
        return self.capacity - self.used

    @property
    def utilisation(self) -> float:
        return utilisation(self.used, self.capacity)


@dataclass
class _ClassSum:
    """Inventories of one resource class being summed into a :class:`ClassUsage`."""

    resource_class: str
    inventories: int = 0
    total: int = 0
    reserved: int = 0
    capacity: int = 0

    def add(self, total: int, reserved: int, ratio: float, count: int = 1) -> None:
        """``count`` inventories of this shape, each judged by the capacity model's rule."""
        self.inventories += count
        self.total += total * count
        self.reserved += reserved * count
        self.capacity += usable_units(total, reserved, ratio) * count

    def with_used(self, used: int) -> ClassUsage:
        return ClassUsage(
            self.resource_class, self.inventories, self.total, self.reserved, self.capacity, used
        )


def class_usage_summary() -> list[ClassUsage]:
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
    sums: dict[int, _ClassSum] = {}
    for row in shapes:
        acc = sums.setdefault(row["resource_class_id"], _ClassSum(row["resource_class__name"]))
        acc.add(row["total"], row["reserved"], row["allocation_ratio"], count=row["n"])
    return [sums[rc].with_used(used.get(rc, 0)) for rc in sorted(sums)]


@dataclass(frozen=True)
class InventoryUsage:
    """One inventory of one provider: its capacity model and what is allocated from it."""

    resource_class: str
    capacity: Capacity
    used: int

    @property
    def free(self) -> int:
        return self.capacity.free(self.used)

    @property
    def utilisation(self) -> float:
        return self.capacity.utilisation(self.used)


def inventory_usages_by_provider(
    *, provider_ids: Collection[int]
) -> dict[int, list[InventoryUsage]]:
    """{provider_id: [InventoryUsage, ...]} in resource class order; two queries."""
    used = usage_by_provider_and_class(provider_ids=provider_ids)
    rows = (
        Inventory.objects.filter(resource_provider_id__in=provider_ids)
        .order_by("resource_provider_id", "resource_class_id")
        .values_list(
            "resource_provider_id", "resource_class_id", "resource_class__name", *CAPACITY_FIELDS
        )
    )
    found: dict[int, list[InventoryUsage]] = defaultdict(list)
    for rp, rc, rc_name, *fields in rows:
        found[rp].append(InventoryUsage(rc_name, Capacity(*fields), used.get((rp, rc), 0)))
    return found


def _class_totals(
    key: str, ids: Collection[int], used: Mapping[tuple[int, int], int]
) -> dict[int, list[ClassUsage]]:
    """``{id: [ClassUsage, ...]}`` in class order: the inventories whose ``key`` (a path
    from Inventory to a provider id) is in ``ids``, summed per id and class, with ``used``
    (``{(id, class id): used}``) beside them."""
    rows = (
        Inventory.objects.filter(**{f"{key}__in": ids})
        .order_by(key, "resource_class_id")
        .values_list(
            key,
            "resource_class_id",
            "resource_class__name",
            "total",
            "reserved",
            "allocation_ratio",
        )
    )
    sums: dict[tuple[int, int], _ClassSum] = {}
    for owner, rc, rc_name, total, reserved, ratio in rows:
        sums.setdefault((owner, rc), _ClassSum(rc_name)).add(total, reserved, ratio)
    found: dict[int, list[ClassUsage]] = defaultdict(list)
    for (owner, rc), acc in sums.items():
        found[owner].append(acc.with_used(used.get((owner, rc), 0)))
    return found


def tree_usages_by_root(*, root_ids: Collection[int]) -> dict[int, list[ClassUsage]]:
    """{root id: [ClassUsage, ...]} in resource class order, for whole trees (two queries).

    Capacity is summed inventory by inventory (each by the capacity model's rule), so a
    host whose VCPU sits on two NUMA children has the VCPU of both.
    """
    return _class_totals(
        "resource_provider__root_id", root_ids, usage_by_root_and_class(root_ids=root_ids)
    )


def own_usages_by_provider(*, provider_ids: Collection[int]) -> dict[int, list[ClassUsage]]:
    """{provider id: [ClassUsage, ...]}: each provider's own inventories, one per class, as
    :func:`tree_usages_by_root` gives a tree's (two queries)."""
    used = usage_by_provider_and_class(provider_ids=provider_ids)
    return _class_totals("resource_provider_id", provider_ids, used)


def aggregate_usages(*, aggregate_id: int) -> list[ClassUsage]:
    """A :class:`ClassUsage` per class summed over an aggregate's members' own inventories
    (two queries)."""
    members = ResourceProviderAggregate.objects.filter(aggregate_id=aggregate_id).values(
        "resource_provider_id"
    )
    used = usage_by_class(resource_provider_id__in=members)
    # Grouped by shape with a count, as class_usage_summary reads them: identical inventories
    # cost one row (an aggregate of 25,000 hosts: a few rows instead of 75,000).
    rows = (
        Inventory.objects.filter(resource_provider_id__in=members)
        .values(
            "resource_class_id", "resource_class__name", "total", "reserved", "allocation_ratio"
        )
        .annotate(n=Count("id"))
        .order_by("resource_class_id")
        .values_list(
            "resource_class_id",
            "resource_class__name",
            "total",
            "reserved",
            "allocation_ratio",
            "n",
        )
    )
    sums: dict[int, _ClassSum] = {}
    for rc, rc_name, total, reserved, ratio, count in rows:
        sums.setdefault(rc, _ClassSum(rc_name)).add(total, reserved, ratio, count=count)
    return [acc.with_used(used.get(rc, 0)) for rc, acc in sums.items()]
