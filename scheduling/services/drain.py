"""Draining a host: every server moved off it by the scheduler, the host left disabled.

Each server's move is its own transaction (a move is the unit that succeeds or fails); the
host is disabled first, so nothing new lands on it while its servers leave, and stays
disabled whatever happened, with the reason the operator gave.

The API's drain answers with each server's outcome; the dashboard's runs in a worker
(``scheduling.tasks.drain_host``: each move is a scheduling pass over every host, too long
for a page), which records the outcome in the lifecycle history instead (``origin``): one
"host drained" record, and one "server not moved by a drain" per server left on the host.
"""

import logging
import uuid
from dataclasses import dataclass, field
from typing import Any

from django.db.models import QuerySet

from placementsite.core.exceptions import Conflict, InvalidRequest
from providers.models import ComputeNode
from providers.services.compute_nodes import compute_node_disable

from ..extra_specs import translate_flavor
from ..flavor_snapshots import server_flavor
from ..models import LifecycleRecord, Migration, Server
from .migrations import server_move

logger = logging.getLogger("placement.scheduler")

# What a live migration can carry: CPUs, memory and disk. A server holding anything else
# (a VGPU, a VF, a device) is cold-migrated, as Nova cannot live-migrate most of them.
LIVE_MOVABLE = {"VCPU", "PCPU", "MEMORY_MB", "DISK_GB"}


@dataclass
class DrainResult:
    hostname: str
    disabled_reason: str
    servers: list[dict[str, Any]] = field(default_factory=list)  # one per server, boot order

    @property
    def moved(self) -> int:
        return sum(1 for entry in self.servers if entry["result"] == "moving")

    @property
    def failed(self) -> int:
        return len(self.servers) - self.moved


def _kind_for(server: Server) -> str:
    flavor = server_flavor(server)
    live = {
        name for v in translate_flavor(flavor).variants for name in v.resources
    } <= LIVE_MOVABLE and not any(
        key.startswith(("pci_passthrough:", "accel:")) for key in flavor.extra_specs
    )
    return Migration.Kind.LIVE_MIGRATE if live else Migration.Kind.MIGRATE


def servers_on_host(*, node: ComputeNode) -> QuerySet:
    """The servers a drain of ``node`` moves, in boot order."""
    if node.provider_id is None:
        return Server.objects.none()
    return Server.objects.filter(host__root_id=node.provider.root_id).order_by("created_at", "id")


def host_drain(*, node: ComputeNode, reason: str = "", origin: str | None = None) -> DrainResult:
    """Disable ``node`` with ``reason`` and move every server off it (live where the server
    allows, cold otherwise); each server's outcome is reported, none stops the others.
    ``origin`` (``task``...): the outcome is also written to the lifecycle history."""
    reason = reason or "drained"
    compute_node_disable(hostname=node.hostname, reason=reason)
    result = DrainResult(hostname=node.hostname, disabled_reason=reason)
    for server in servers_on_host(node=node).select_related("flavor", "host"):
        kind = _kind_for(server)
        entry = {"server": str(server.uuid), "name": server.name, "kind": kind}
        try:
            migration = server_move(server=server, kind=kind)
        except (Conflict, InvalidRequest) as exc:
            entry.update(result="failed", code=exc.code, detail=exc.detail)
            logger.info("Drain of %s: %s not moved: %s", node.hostname, server.uuid, exc.detail)
        else:
            entry.update(
                result="moving",
                migration=str(migration.uuid),
                status=migration.status,
                dest=migration.dest.name if migration.dest else None,
            )
        result.servers.append(entry)
    if origin:
        _record(result, origin)
    return result


def _record(result: DrainResult, origin: str) -> None:
    run = uuid.uuid4()
    records = [
        LifecycleRecord(
            run=run,
            origin=origin,
            action=LifecycleRecord.Action.DRAIN_REFUSED,
            consumer_uuid=entry["server"],
            detail=f"{entry['name'] or entry['server']} stays on {result.hostname}: "
            + entry["detail"],
        )
        for entry in result.servers
        if entry["result"] == "failed"
    ]
    moved = result.moved
    records.append(
        LifecycleRecord(
            run=run,
            origin=origin,
            action=LifecycleRecord.Action.DRAINED,
            detail=f"{result.hostname} ({result.disabled_reason}): {moved} server"
            + ("" if moved == 1 else "s")
            + f" moving, {result.failed} not moved",
        )
    )
    LifecycleRecord.objects.bulk_create(records)
