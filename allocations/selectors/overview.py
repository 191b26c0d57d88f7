"""The overview page's fleet-wide summaries that need allocations: the fullest providers,
the counts of consumers, projects, users and allocations, and each project's share of what is
used per resource class.

Apart from the per-page reads (providers, consumers, projects) because it reads the whole
fleet at once, ranked and summed in the database: a fixed number of queries whatever the
number of providers or consumers.
"""

import uuid as uuidlib
from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Sum

from placementsite.core.db import reading_connection
from providers.capacity import usable_expression
from providers.models import Inventory, ResourceClass, ResourceProvider

from ..models import Allocation, Consumer, Project, ProviderUsage, User
from .usage import InventoryUsage, inventory_usages_by_provider


@dataclass(frozen=True)
class ProviderPeak:
    """A provider and its fullest inventory."""

    id: int
    uuid: uuidlib.UUID
    name: str
    peak: InventoryUsage
    inventories: list[InventoryUsage]


def fullest_providers(*, limit: int = 10) -> list[ProviderPeak]:
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
    inventories = inventory_usages_by_provider(provider_ids=chosen)
    found = []
    for rp in chosen:
        invs = inventories[rp]
        peak = max(invs, key=lambda inv: inv.utilisation)
        found.append(ProviderPeak(rp, providers[rp].uuid, providers[rp].name, peak, invs))
    return found


def _fullest_ids(limit: int) -> list[int]:
    usable_sql, usable_params = (
        Inventory.objects.order_by()
        .annotate(usable=usable_expression())
        .values("resource_provider_id", "resource_class_id", "usable")
        .query.sql_with_params()
    )
    used_sql, used_params = (
        ProviderUsage.objects.filter(used__gt=0)
        .order_by()
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
class AllocationCounts:
    """How many rows the allocations app holds of each kind, fleet-wide."""

    consumers: int
    projects: int
    users: int
    allocations: int


def allocation_counts() -> AllocationCounts:
    return AllocationCounts(
        consumers=Consumer.objects.count(),
        projects=Project.objects.count(),
        users=User.objects.count(),
        allocations=Allocation.objects.count(),
    )


@dataclass(frozen=True)
class ProjectShare:
    # "" for the rest, summed; None for a project gone between the sums and the names
    project: str | None
    used: int
    percent: float


@dataclass(frozen=True)
class ClassShares:
    resource_class: str
    used: int
    shares: list[ProjectShare]  # largest first, the rest summed last


def usage_share_by_project(*, top: int = 5) -> list[ClassShares]:
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
    per_class: dict[int, list[tuple[int, str | None]]] = defaultdict(list)
    names: dict[int, str] = {}
    for rc, rc_name, project, used in rows:
        names[rc] = rc_name
        per_class[rc].append((used, project))
    found: list[ClassShares] = []
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
