"""Reads about compute hosts: which are disabled or stale, which need a sync.

A provider that no host reports for (made by hand through the Placement API)
is neither disabled nor stale: these questions are about hosts only.
"""

from datetime import timedelta

from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone

from ..capacity import usable_expression
from ..models import ComputeNode, Inventory


def stale_after():
    """How long a host may stay silent before it is stale (``PLACEMENT_HOST_STALE_SECONDS``)."""
    return timedelta(seconds=settings.PLACEMENT_HOST_STALE_SECONDS)


def stale_q(*, now=None, prefix=""):
    """Condition on a ComputeNode (through ``prefix``): no report for longer than allowed."""
    cutoff = (now or timezone.now()) - stale_after()
    return Q(**{f"{prefix}reported_at__lt": cutoff}) | Q(**{f"{prefix}reported_at__isnull": True})


def unavailable_q(*, now=None, prefix=""):
    """Condition on a ComputeNode: disabled by an operator, or stale."""
    return Q(**{f"{prefix}enabled": False}) | stale_q(now=now, prefix=prefix)


def unavailable_root_ids(*, now=None):
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


def host_states(*, provider_ids, now=None):
    """``{root provider id: {"hostname", "enabled", "stale"}}`` for these providers' hosts."""
    now = now or timezone.now()
    cutoff = now - stale_after()
    rows = ComputeNode.objects.filter(provider__root_id__in=list(provider_ids)).values_list(
        "provider__root_id", "hostname", "enabled", "reported_at"
    )
    return {
        root_id: {
            "hostname": hostname,
            "enabled": enabled,
            "stale": reported_at is None or reported_at < cutoff,
        }
        for root_id, hostname, enabled, reported_at in rows
    }


def hosts_needing_sync(*, plugins_signature, hostname=None):
    """Hosts whose report (or the operator's plugin list) changed since their last sync,
    and hosts whose last sync hit a generation conflict or failed."""
    hosts = ComputeNode.objects.filter(reported_at__isnull=False)
    if hostname is not None:
        return hosts.filter(hostname=hostname)
    return hosts.filter(
        ~Q(synced_hash=F("report_hash"))
        | ~Q(synced_plugins=plugins_signature)
        | Q(sync_status__in=[ComputeNode.SyncStatus.CONFLICT, ComputeNode.SyncStatus.FAILED])
        | Q(provider__isnull=True)
    )


def host_rows(*, q="", state=""):
    """Hosts for the dashboard's list, with their provider; ``state`` narrows them to
    ``stale``, ``disabled``, ``errors`` (a plugin or write failed) or ``pending``."""
    hosts = ComputeNode.objects.select_related("provider").order_by("hostname")
    if q:
        hosts = hosts.filter(hostname__icontains=q)
    if state == "stale":
        hosts = hosts.filter(stale_q())
    elif state == "disabled":
        hosts = hosts.filter(enabled=False)
    elif state == "errors":
        hosts = hosts.filter(
            sync_status__in=[
                ComputeNode.SyncStatus.PARTIAL,
                ComputeNode.SyncStatus.FAILED,
                ComputeNode.SyncStatus.CONFLICT,
            ]
        )
    elif state == "pending":
        hosts = hosts.filter(~Q(synced_hash=F("report_hash")) | Q(provider__isnull=True))
    return hosts


def tree_capacities(*, root_ids):
    """``[(root_id, provider_id, class name, usable capacity)]`` of every inventory in these
    trees, for comparing with usage (which lives with allocations)."""
    return list(
        Inventory.objects.filter(resource_provider__root_id__in=list(root_ids))
        .annotate(usable=usable_expression())
        .values_list(
            "resource_provider__root_id", "resource_provider_id", "resource_class__name", "usable"
        )
    )
