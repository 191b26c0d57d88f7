"""The dashboard's project pages: the projects with their consumers, users and usage per
resource class, and the search's projects.

Apart from the consumer pages because a row is a project summed over its consumers. Set-based:
a fixed number of queries per page whatever the number of projects.
"""

from dataclasses import dataclass

from django.core.paginator import Page, Paginator
from django.db.models import Count, OuterRef, Subquery
from django.db.models.functions import Coalesce

from ..models import Consumer, Project
from .usage import usage_by_class_of

PROJECTS_PER_PAGE = 50


@dataclass(frozen=True)
class ProjectRow:
    id: int
    external_id: str
    consumer_count: int
    user_count: int
    usage: dict[str, int]  # class name -> used
    amounts: list[int]  # used per class, in the order of ProjectUsagePage.resource_classes


@dataclass(frozen=True)
class ProjectUsagePage:
    page: Page  # of ProjectRow
    resource_classes: list[str]  # the column order: classes used by the projects shown


def project_usage_page(
    *, q: str = "", page_number: int | str = 1, per_page: int = PROJECTS_PER_PAGE
) -> ProjectUsagePage:
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
    rows: list[tuple[int, str, int, int]] = list(page.object_list)  # ProjectRow's first four
    usage = usage_by_class_of(group_column="consumer__project_id", ids=[row[0] for row in rows])
    classes: list[str] = []
    for entries in usage.values():
        for rc_name, _used in entries:
            if rc_name not in classes:
                classes.append(rc_name)
    page.object_list = []
    for row in rows:
        used = dict(usage.get(row[0], []))
        amounts = [used.get(rc, 0) for rc in classes]
        page.object_list.append(ProjectRow(*row, usage=used, amounts=amounts))
    return ProjectUsagePage(page, classes)


def projects_matching(*, q: str, limit: int = 20) -> list[tuple[str, int]]:
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
