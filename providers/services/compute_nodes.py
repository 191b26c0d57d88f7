"""Compute hosts: their reports, taking them out of scheduling, decommissioning them.

``compute_node_report`` stores what a host says about itself (never taking over a provider the
sync did not create, unless an admin adopts it); a report whose content changed asks for that
host's sync at commit (a Celery task; beat's periodic sync is the backstop). The
sync itself is :mod:`providers.services.host_sync`. ``compute_node_disable`` and
``compute_node_enable`` are the one way a host leaves and rejoins scheduling (the admin, the
API and an evacuation call them); ``compute_node_delete`` forgets a host and its whole
provider tree, refused while anything is allocated on it.
"""

import logging
import uuid as uuidlib
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import NamedTuple

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from placementsite.core.exceptions import Conflict, InvalidRequest, NotFound

from ..host_reports import REPORT_FIELDS, desired_tree, report_digest, tree_problems
from ..models import ComputeNode, ResourceProvider
from ..plugins import HostReport, configured_plugins
from ..usage import usage_by_provider_and_class
from .resource_providers import resource_provider_delete

logger = logging.getLogger("placement.hosts")

COMPUTE_NODE_IN_USE = "compute_node.in_use"
COMPUTE_NODE_NOT_FOUND = "compute_node.not_found"
# A sync asked for at a report and not started within this many seconds is dropped: by then
# beat's periodic run has synced the host.
SYNC_TASK_EXPIRES = 300

# A provider of a host's tree as compute_node_delete reads it: (id, uuid, name, parent id).
Member = tuple[int, uuidlib.UUID, str, int | None]


class ProviderNotSynced(Conflict):
    """A host report names a provider the host sync did not create."""

    code = "compute_node.provider_not_synced"


class HostReported(NamedTuple):
    """A stored report: the host, whether it is new, whether its content changed."""

    node: ComputeNode
    created: bool
    changed: bool


def host_report(*, hostname: str, report: Mapping) -> HostReport:
    """The report as the plugins read it, a field left out taking its default."""
    return HostReport(hostname=hostname, **{n: report[n] for n in REPORT_FIELDS if n in report})


def report_tree_problems(*, hostname: str, report: Mapping) -> dict[str, str]:
    """``{report field: why}``: what the operator's plugins would make of ``report`` that no
    provider can hold (see :func:`providers.host_reports.tree_problems`). A plugin that
    raises is left out here: the sync reports it."""
    host = host_report(hostname=hostname, report=report)
    return tree_problems(desired_tree(host, configured_plugins()).tree)


def compute_node_report(
    *, hostname: str, report: Mapping, adopt: bool = False, now: datetime | None = None
) -> HostReported:
    """Create or replace ``hostname``'s report (already validated by its edge).

    Idempotent: the same report again only refreshes ``reported_at`` (the host is alive) and
    does not make the host need a sync. A report whose plugins would make a provider the
    database cannot hold is an InvalidRequest naming the report's field.

    A report never takes over a provider the sync did not create: when the host's root
    provider is not the sync's yet and a provider of its name exists (made through the
    Placement API), the report is refused (ProviderNotSynced) unless ``adopt``: an admin's
    explicit choice, which hands that provider to the sync.
    """
    problems = report_tree_problems(hostname=hostname, report=report)
    if problems:
        raise InvalidRequest("; ".join(f"{where}: {why}" for where, why in problems.items()))
    host = host_report(hostname=hostname, report=report)
    fields = {name: getattr(host, name) for name in REPORT_FIELDS}
    fields["report_hash"] = report_digest(fields)
    fields["reported_at"] = now or timezone.now()
    with transaction.atomic():
        current = ComputeNode.objects.select_for_update().filter(hostname=hostname).first()
        previous = current.report_hash if current is not None else None
        if current is None or current.provider_id is None:
            taken = _provider_of_the_name(hostname)
            if taken is not None:
                if not adopt:
                    raise ProviderNotSynced(
                        f"Resource provider {hostname} ({taken.uuid}) was not created by the "
                        "host sync; an admin may adopt it (PUT with ?adopt=true)."
                    )
                fields["provider"] = taken
        node, created = ComputeNode.objects.update_or_create(hostname=hostname, defaults=fields)
        changed = previous != fields["report_hash"]
        if changed and settings.PLACEMENT_SYNC_ON_REPORT:
            transaction.on_commit(lambda: _sync_soon(hostname))
    return HostReported(node, created, changed)


def _provider_of_the_name(hostname: str) -> ResourceProvider | None:
    """The provider named like the host that no host's sync holds, locked; else None."""
    provider = ResourceProvider.objects.select_for_update().filter(name=hostname).first()
    if provider is None or ComputeNode.objects.filter(provider=provider).exists():
        return None
    return provider


def _sync_soon(hostname: str) -> None:
    """Ask a worker for ``hostname``'s sync now. A broker that does not answer at once only
    delays it to beat's next run: the report is stored either way."""
    from ..tasks import sync_compute_node  # the task calls this app's services: imported late

    try:
        sync_compute_node.apply_async(args=[hostname], retry=False, expires=SYNC_TASK_EXPIRES)
    except Exception:  # the broker is down: beat's periodic sync picks the host up
        logger.warning("could not ask for the sync of host %s now; beat will", hostname)


def compute_node_disable(
    *, reason: str = "", hostname: str | None = None, root_provider_id: int | None = None
) -> ComputeNode:
    """Take a host (by name, or by its root provider) out of scheduling, saying why."""
    with transaction.atomic():
        node = _node_for_update(hostname=hostname, root_provider_id=root_provider_id)
        node.enabled = False
        node.disabled_reason = reason
        node.save(update_fields=["enabled", "disabled_reason", "updated_at"])
        return node


def compute_node_enable(*, hostname: str) -> ComputeNode:
    """Put a host back into scheduling (its disabled reason is cleared)."""
    with transaction.atomic():
        node = _node_for_update(hostname=hostname)
        node.enabled = True
        node.disabled_reason = ""
        node.save(update_fields=["enabled", "disabled_reason", "updated_at"])
        return node


def compute_node_set_enabled(*, hostname: str, enabled: bool, reason: str = "") -> ComputeNode:
    """:func:`compute_node_enable` or :func:`compute_node_disable`, as ``enabled`` says."""
    if enabled:
        if reason:
            raise InvalidRequest("disabled_reason: only a disabled host has one")
        return compute_node_enable(hostname=hostname)
    return compute_node_disable(hostname=hostname, reason=reason)


def compute_node_force_down(*, hostname: str, forced_down: bool) -> ComputeNode:
    """Mark a host down (or up again) by an operator's word, as Nova's ``forced_down``."""
    with transaction.atomic():
        node = _node_for_update(hostname=hostname)
        node.forced_down = forced_down
        node.save(update_fields=["forced_down", "updated_at"])
        return node


def _node_for_update(
    *, hostname: str | None = None, root_provider_id: int | None = None
) -> ComputeNode:
    nodes = ComputeNode.objects.select_for_update()
    if hostname is not None:
        node = nodes.filter(hostname=hostname).first()
    else:
        node = nodes.filter(provider_id=root_provider_id).first()
    if node is None:
        raise NotFound(
            f"No compute host {hostname or root_provider_id}", code=COMPUTE_NODE_NOT_FOUND
        )
    return node


def compute_node_delete(*, hostname: str) -> None:
    """Forget a host: its record and its whole provider tree, in one transaction.

    Refused (Conflict ``compute_node.in_use``) while any provider of the tree holds
    allocations: the workloads must go (or move) first. The tree's rows are locked before
    they are read, in the allocation service's order, so no claim lands meanwhile.
    """
    with transaction.atomic():
        node = _node_for_update(hostname=hostname)
        members: list[Member] = []
        if node.provider_id is not None:
            members = list(
                ResourceProvider.objects.select_for_update()
                .filter(root_id=node.provider.root_id or node.provider_id)
                .order_by("id")
                .values_list("id", "uuid", "name", "parent_id")
            )
        ids = [m[0] for m in members]
        used = {key: n for key, n in usage_by_provider_and_class(provider_ids=ids).items() if n}
        if used:
            names = {m[0]: m[2] for m in members}
            held = sorted({names[provider_id] for provider_id, _class in used})
            raise Conflict(
                f"Compute host {hostname} cannot be deleted: allocations are held on "
                f"{', '.join(held)}; delete or move them first.",
                code=COMPUTE_NODE_IN_USE,
            )
        node.delete()
        for _id, uuid, _name, _parent in sorted(members, key=lambda m: -_depth(m, members)):
            resource_provider_delete(uuid=uuid)


def _depth(member: Member, members: Sequence[Member]) -> int:
    parents = {m[0]: m[3] for m in members}
    depth, parent = 0, member[3]
    while parent is not None and parent in parents:
        depth, parent = depth + 1, parents[parent]
    return depth
