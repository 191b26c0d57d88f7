"""The dashboard's consumer pages: the consumer list (filtered, with usage and hosts), one
consumer with what it holds from each provider and its devices, and the search's consumers.

Apart from the provider pages because they start from consumers, not providers. Set-based: a
fixed number of queries per page whatever the number of consumers.
"""

import uuid as uuidlib
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from django.core.paginator import Page, Paginator
from django.db.models import Count, IntegerField, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce

from ..models import Allocation, Consumer, ConsumerType
from .devices import AssignedDevice, devices_of_consumers
from .usage import usage_by_class_of

CONSUMERS_PER_PAGE = 50


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
    created_at: datetime
    updated_at: datetime
    provider_count: int
    resources: list[tuple[str, int]]  # (class name, used) summed over providers
    hosts: list[
        tuple[uuidlib.UUID, str]
    ]  # (uuid, name) of the root providers (hosts) it has allocations in


def _hosts_of(consumer_ids: list[int]) -> dict[int, list[tuple[uuidlib.UUID, str]]]:
    """{consumer id: [(host uuid, host name), ...]}: the trees a consumer takes from."""
    rows = (
        Allocation.objects.filter(consumer_id__in=consumer_ids)
        .values_list(
            "consumer_id", "resource_provider__root__uuid", "resource_provider__root__name"
        )
        .distinct()
        .order_by("consumer_id", "resource_provider__root__name")
    )
    found: dict[int, list[tuple[uuidlib.UUID, str]]] = defaultdict(list)
    for consumer_id, uuid, name in rows:
        found[consumer_id].append((uuid, name))
    return found


def _looks_like_uuid_part(text: str) -> bool:
    return all(c in "0123456789abcdefABCDEF-" for c in text)


def consumer_list_page(
    *,
    filters: ConsumerFilters,
    page_number: int | str = 1,
    per_page: int = CONSUMERS_PER_PAGE,
) -> Page:
    """A page of :class:`ConsumerRow`, newest first; four queries (count, page, usage, hosts)."""
    qs = Consumer.objects.all()
    if filters.q:
        q = filters.q.strip()
        if _looks_like_uuid_part(q):
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
    # The columns above, in ConsumerRow's order.
    rows: list[tuple[int, uuidlib.UUID, str, str, str | None, int, datetime, datetime, int]]
    rows = list(page.object_list)
    ids = [row[0] for row in rows]
    usage = usage_by_class_of(group_column="consumer_id", ids=ids)
    hosts = _hosts_of(ids)
    page.object_list = [
        ConsumerRow(*row, resources=usage.get(row[0], []), hosts=hosts.get(row[0], []))
        for row in rows
    ]
    return page


def consumer_type_names() -> list[str]:
    return list(ConsumerType.objects.order_by("name").values_list("name", flat=True))


@dataclass(frozen=True)
class ProviderAllocations:
    provider_id: int
    uuid: uuidlib.UUID
    name: str
    resources: list[tuple[str, int]]  # (class name, used)


@dataclass(frozen=True)
class ConsumerDetail:
    consumer: Consumer
    providers: list[ProviderAllocations]
    totals: list[tuple[str, int]]  # (class name, used) over every provider
    devices: list[AssignedDevice]  # the device units assigned to it


def consumer_detail(*, uuid: uuidlib.UUID | str) -> ConsumerDetail | None:
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
    providers: dict[int, ProviderAllocations] = {}
    totals: dict[str, int] = {}
    for rp, rp_uuid, rp_name, rc_name, used in rows:
        entry = providers.get(rp)
        if entry is None:
            entry = providers[rp] = ProviderAllocations(rp, rp_uuid, rp_name, [])
        entry.resources.append((rc_name, used))
        totals[rc_name] = totals.get(rc_name, 0) + used
    devices = devices_of_consumers(consumer_uuids=[consumer.uuid]).get(str(consumer.uuid), [])
    return ConsumerDetail(consumer, list(providers.values()), list(totals.items()), devices)


def consumers_matching(*, q: str, limit: int = 20) -> list[tuple[uuidlib.UUID, str, str]]:
    """Consumers whose uuid contains ``q`` (which must look like part of a uuid), newest first."""
    q = q.strip()
    if not q or not _looks_like_uuid_part(q):
        return []
    return list(
        Consumer.objects.filter(uuid__icontains=q)
        .order_by("-created_at", "-id")
        .values_list("uuid", "project__external_id", "user__external_id")[:limit]
    )
