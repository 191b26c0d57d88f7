"""Reads about compute hosts: which are disabled or stale, which need a sync.

The one home of two rules, each in its SQL form (a ``Q``) and, where a row is already in
hand, its Python form: a host is *stale* when it has not reported for
``PLACEMENT_HOST_STALE_SECONDS``; a host *needs a sync* when its report or the operator's
plugins changed since its last sync, when its last sync was blocked, failed or partial and
its retry is due, or when it has no provider.

A provider that no host reports for (made by hand through the Placement API)
is neither disabled nor stale: these questions are about hosts only.
"""

from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import TypedDict

from django.conf import settings
from django.db.models import BooleanField, ExpressionWrapper, F, Q, QuerySet
from django.utils import timezone

from ..capacity import usable_expression
from ..models import ComputeNode, Inventory
from ..plugins import plugins_signature

# The outcomes beat retries, with a growing delay (``next_sync_at``).
RETRIED = (
    ComputeNode.SyncStatus.BLOCKED,
    ComputeNode.SyncStatus.FAILED,
    ComputeNode.SyncStatus.PARTIAL,
)


def stale_after() -> timedelta:
    """How long a host may stay silent before it is stale (``PLACEMENT_HOST_STALE_SECONDS``)."""
    return timedelta(seconds=settings.PLACEMENT_HOST_STALE_SECONDS)


def stale_q(*, now: datetime | None = None, prefix: str = "") -> Q:
    """Condition on a ComputeNode (through ``prefix``): no report for longer than allowed."""
    cutoff = (now or timezone.now()) - stale_after()
    return Q(**{f"{prefix}reported_at__lt": cutoff}) | Q(**{f"{prefix}reported_at__isnull": True})


def is_stale(*, reported_at: datetime | None, now: datetime | None = None) -> bool:
    """:func:`stale_q` for a host already read."""
    return reported_at is None or reported_at < (now or timezone.now()) - stale_after()


def needs_sync_q(*, signature: str, now: datetime | None = None, due_only: bool = True) -> Q:
    """Condition on a ComputeNode: it needs a sync (see the module docstring). With
    ``due_only=False`` a retried host needs one whenever its retry is due or not (an operator
    asking now)."""
    retried = Q(sync_status__in=RETRIED)
    if due_only:
        retried &= Q(next_sync_at__isnull=True) | Q(next_sync_at__lte=now or timezone.now())
    return (
        ~Q(synced_hash=F("report_hash"))
        | ~Q(synced_plugins=signature)
        | retried
        | (Q(provider__isnull=True) & ~Q(sync_status__in=RETRIED))
    )


def needs_sync(
    *, node: ComputeNode, signature: str, now: datetime | None = None, due_only: bool = True
) -> bool:
    """:func:`needs_sync_q` for a host already read (its row locked by the sync)."""
    retried = node.sync_status in RETRIED
    due = not due_only or node.next_sync_at is None or node.next_sync_at <= (now or timezone.now())
    return (
        node.synced_hash != node.report_hash
        or node.synced_plugins != signature
        or (retried and due)
        or (node.provider_id is None and not retried)
    )


def synced_q(*, signature: str) -> Q:
    """Condition on a ComputeNode: its providers show its last report (applied whole, or
    but for a plugin that raised)."""
    return Q(
        synced_hash=F("report_hash"),
        synced_plugins=signature,
        provider__isnull=False,
        sync_status__in=[ComputeNode.SyncStatus.OK, ComputeNode.SyncStatus.PARTIAL],
    )


def unavailable_q(*, now: datetime | None = None, prefix: str = "") -> Q:
    """Condition on a ComputeNode: disabled or forced down by an operator, or stale."""
    return (
        Q(**{f"{prefix}enabled": False})
        | Q(**{f"{prefix}forced_down": True})
        | stale_q(now=now, prefix=prefix)
    )


def host_is_down(*, root_provider_id: int, now: datetime | None = None) -> bool:
    """Whether the host of this root provider is down: forced down by an operator, or stale.
    A provider no host reports for (made through the Placement API) counts as up."""
    node = (
        ComputeNode.objects.filter(provider__root_id=root_provider_id)
        .values("forced_down", "reported_at")
        .first()
    )
    if node is None:
        return False
    return node["forced_down"] or is_stale(reported_at=node["reported_at"], now=now)


def unavailable_root_ids(*, now: datetime | None = None) -> QuerySet:
    """Root provider ids of hosts that must not be scheduled to: disabled or stale.

    A queryset of ids, usable as a subquery (``root_id__in=unavailable_root_ids()``)
    or evaluated (``set(unavailable_root_ids())``).
    """
    return (
        ComputeNode.objects.filter(provider__isnull=False)
        .filter(unavailable_q(now=now))
        .order_by()
        .values_list("provider__root_id", flat=True)
    )


class HostAvailability(TypedDict):
    """Whether a host may be scheduled to, and why not: what an operator set and whether it
    went silent."""

    hostname: str
    enabled: bool
    disabled_reason: str
    forced_down: bool
    stale: bool


def host_availability_by_root(
    *, provider_ids: Iterable[int], now: datetime | None = None
) -> dict[int, HostAvailability]:
    """``{root provider id: HostAvailability}`` for these providers' hosts."""
    rows = ComputeNode.objects.filter(provider__root_id__in=list(provider_ids)).values_list(
        "provider__root_id", "hostname", "enabled", "disabled_reason", "forced_down", "reported_at"
    )
    return {
        root_id: {
            "hostname": hostname,
            "enabled": enabled,
            "disabled_reason": reason,
            "forced_down": forced_down,
            "stale": is_stale(reported_at=reported_at, now=now),
        }
        for root_id, hostname, enabled, reason, forced_down, reported_at in rows
    }


def hosts_needing_sync(
    *, signature: str, now: datetime | None = None, due_only: bool = True
) -> QuerySet:
    """Hosts that need a sync (:func:`needs_sync_q`), of those that have reported."""
    return ComputeNode.objects.filter(reported_at__isnull=False).filter(
        needs_sync_q(signature=signature, now=now, due_only=due_only)
    )


# The states the Hosts page (and ``/api/compute-nodes/?state=``) narrows the hosts to.
HOST_STATES = [
    ("stale", "stale"),
    ("disabled", "disabled"),
    ("errors", "sync errors"),
    ("pending", "waiting for sync"),
]


def host_state_q(*, state: str, signature: str | None = None) -> Q:
    """Condition on a ComputeNode: it is in ``state`` (of :data:`HOST_STATES`): ``stale``,
    ``disabled``, ``errors`` (a plugin raised, a sync blocked or failed) or ``pending``
    (waiting for a sync). ``signature``: the plugins' (as :func:`host_rows`)."""
    if state == "stale":
        return stale_q()
    if state == "disabled":
        return Q(enabled=False)
    if state == "errors":
        return Q(sync_status__in=RETRIED)
    if state == "pending":
        signature = plugins_signature() if signature is None else signature
        return needs_sync_q(signature=signature, due_only=False)
    raise ValueError(f"no host state {state!r}")


def host_rows(*, signature: str | None = None) -> QuerySet:
    """Hosts for the dashboard's list, by name, with their provider and whether their
    providers show their last report (``in_sync``); narrowed by the Hosts page with
    :class:`providers.filtersets.ComputeNodeFilter`. ``signature``: the plugins'
    (:func:`providers.plugins.plugins_signature`), the operator's by default.
    """
    signature = plugins_signature() if signature is None else signature
    return (
        ComputeNode.objects.select_related("provider")
        .annotate(
            in_sync=ExpressionWrapper(synced_q(signature=signature), output_field=BooleanField())
        )
        .order_by("hostname")
    )


def tree_capacities(*, root_ids: Iterable[int]) -> list[tuple[int, int, str, int]]:
    """``[(root_id, provider_id, class name, usable capacity)]`` of every inventory in these
    trees, for comparing with usage (which lives with allocations)."""
    return list(
        Inventory.objects.filter(resource_provider__root_id__in=list(root_ids))
        .annotate(usable=usable_expression())
        .values_list(
            "resource_provider__root_id", "resource_provider_id", "resource_class__name", "usable"
        )
    )


def host_by_name(*, hostname: str) -> ComputeNode | None:
    """The compute host named ``hostname``, with its provider; None when there is none."""
    return ComputeNode.objects.select_related("provider").filter(hostname=hostname).first()
