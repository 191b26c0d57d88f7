"""Reads behind the operator dashboard's consumer and project pages.

Set-based: a fixed number of queries per page whatever the number of rows.
"""

import uuid as uuidlib
from collections import defaultdict
from dataclasses import dataclass

from django.core.paginator import Paginator
from django.db.models import Count, IntegerField, OuterRef, Q, Subquery, Sum
from django.db.models.functions import Coalesce

from ..models import Allocation, Consumer, ConsumerType, Project, User

CONSUMERS_PER_PAGE = 50
PROJECTS_PER_PAGE = 50


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


def _usage_by(group_column, ids):
    """{id: [(class name, used), ...]} summed per class, for ``group_column`` in ``ids``."""
    rows = (
        Allocation.objects.filter(**{f"{group_column}__in": ids})
        .values(group_column, "resource_class_id", "resource_class__name")
        .annotate(used=Sum("used"))
        .order_by(group_column, "resource_class_id")
        .values_list(group_column, "resource_class__name", "used")
    )
    found = defaultdict(list)
    for key, rc_name, used in rows:
        found[key].append((rc_name, used))
    return found


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
    usage = _usage_by("consumer_id", ids)
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
    return ConsumerDetail(consumer, list(providers.values()), list(totals.items()))


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
    usage = _usage_by("consumer__project_id", [row[0] for row in rows])
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


# --- overview: who uses what ----------------------------------------------------------------


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
    """Per resource class in use, the ``top`` projects' share of what is used (one query)."""
    rows = (
        Allocation.objects.values(
            "resource_class_id", "resource_class__name", "consumer__project_id"
        )
        .annotate(used=Sum("used"))
        .order_by()
        .values_list(
            "resource_class_id",
            "resource_class__name",
            "consumer__project__external_id",
            "used",
        )
    )
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
