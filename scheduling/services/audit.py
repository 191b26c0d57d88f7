"""The allocation audit (as ``nova-manage placement audit`` and ``heal_allocations``).

Findings: allocations whose consumer is neither a known server nor a known migration
(orphans); servers on a host with no allocations; servers whose allocations do not add up to
their flavor; device assignments out of step with the allocations (a consumer assigned more
units of a provider's class than it is allocated there, or a server or migration assigned
fewer than it is allocated of a class that has units); maintained usage rows that are not the
sum of their allocations (allocations' ProviderUsage: drift). ``delete`` removes orphans
untouched for the grace period, through an allocation write that checks the consumer
generation seen by the audit (an orphan written to meanwhile is kept); ``heal`` claims a
server's recorded allocations again, brings device assignments in step and sets drifted usage
rows to the sum of their allocations. Every finding and action is a LifecycleRecord of the
run.

The audit reads allocations, servers and migrations in one repeatable-read snapshot: a boot,
move or delete committing between two of its reads would otherwise look like an orphan or a
server without allocations.
"""

import json
import uuid as uuidlib
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from allocations.models import Allocation
from allocations.selectors.devices import device_assignment_counts, device_unit_keys
from allocations.selectors.usage import usage_drift
from allocations.services.allocations import ConsumerAllocationWrite, allocations_replace
from allocations.services.device_assignments import (
    DeviceUnitsExhausted,
    device_assignments_heal,
)
from allocations.services.usage import usage_rebuild
from placementsite.core.db import read_snapshot
from placementsite.core.exceptions import Conflict

from ..extra_specs import FlavorRequest, translate_flavor
from ..flavor_snapshots import server_flavor
from ..models import Flavor, LifecycleRecord, Migration, Server
from .claims import ClaimFailed, allocation_claim
from .migrations import INSTANCE_CONSUMER_TYPE

Allocations = dict[str, dict[str, int]]  # {provider uuid: {class: amount}}

Action = LifecycleRecord.Action
FINDINGS = (
    Action.ORPHAN,
    Action.MISSING,
    Action.MISMATCH,
    Action.DEVICE_MISMATCH,
    Action.USAGE_DRIFT,
)


@dataclass
class Finding:
    # A LifecycleRecord.Action (a str; a TextChoices member is a tuple to mypy without
    # django-stubs, hence Any).
    action: Any
    consumer_uuid: str | None  # None: a finding of no consumer (usage drift)
    allocations: Allocations
    detail: str = ""


@dataclass
class AuditResult:
    run: uuidlib.UUID
    findings: list[Finding] = field(default_factory=list)
    actions: list[Finding] = field(default_factory=list)  # what delete/heal did

    def count(self, action: Any) -> int:  # a LifecycleRecord.Action, see Finding
        found = self.findings if action in FINDINGS else self.actions
        return sum(1 for f in found if f.action == action)


def _consumers_allocations() -> dict[str, dict[str, Any]]:
    """``{consumer uuid: {"generation", "written_at", "project", "user", "allocations"}}``
    of every consumer holding allocations, in one query."""
    found: dict[str, dict[str, Any]] = {}
    rows = Allocation.objects.values_list(
        "consumer__uuid",
        "consumer__generation",
        "created_at",
        "consumer__project__external_id",
        "consumer__user__external_id",
        "resource_provider__uuid",
        "resource_class__name",
        "used",
    ).order_by("consumer_id", "id")
    for uuid, generation, written_at, project, user, provider, class_name, used in rows:
        entry = found.setdefault(
            str(uuid),
            {
                "generation": generation,
                "written_at": written_at,
                "project": project,
                "user": user,
                "allocations": {},
            },
        )
        entry["allocations"].setdefault(str(provider), {})[class_name] = used
        # Every write replaces a consumer's rows: the newest row says when it was written.
        entry["written_at"] = max(entry["written_at"], written_at)
    return found


def _totals(allocations: Allocations) -> dict[str, int]:
    totals: dict[str, int] = {}
    for resources in allocations.values():
        for name, amount in resources.items():
            totals[name] = totals.get(name, 0) + amount
    return totals


@dataclass
class _AuditRun:
    """One run: what it read in one snapshot, its options, and its ``result``, which each
    check of :data:`CHECKS` adds its findings and actions to."""

    result: AuditResult
    held: dict[str, dict[str, Any]]  # see _consumers_allocations
    servers: dict[str, Server]  # {uuid: server} of the servers on a host
    known: set[str]  # uuids of every server and migration
    assigned: dict[tuple[str, str, str], int]  # see device_assignment_counts
    unit_keys: set[tuple[str, str]]  # see device_unit_keys
    delete: bool
    heal: bool
    grace: datetime  # orphans written before it may be deleted


def placement_audit(
    *,
    delete: bool = False,
    heal: bool = False,
    origin: str = "command",
    now: datetime | None = None,
) -> AuditResult:
    """One audit run; returns an AuditResult (recorded unless nothing was found)."""
    now = now or timezone.now()
    result = AuditResult(run=uuidlib.uuid4())
    with read_snapshot():
        held = _consumers_allocations()
        servers = {
            str(s.uuid): s for s in Server.objects.select_related("flavor").exclude(host=None)
        }
        known = set(servers) | {str(u) for u in Server.objects.values_list("uuid", flat=True)}
        known |= {str(u) for u in Migration.objects.values_list("uuid", flat=True)}
        assigned = device_assignment_counts()
        unit_keys = device_unit_keys()
    run = _AuditRun(
        result=result,
        held=held,
        servers=servers,
        known=known,
        assigned=assigned,
        unit_keys=unit_keys,
        delete=delete,
        heal=heal,
        grace=now - timedelta(seconds=settings.PLACEMENT_AUDIT_ORPHAN_GRACE_SECONDS),
    )
    for check in CHECKS:
        check(run)
    _record(result, origin)
    return result


def _check_orphans(run: _AuditRun) -> None:
    """Allocations whose consumer is neither a server nor a migration; ``delete`` frees those
    untouched for the grace period."""
    for uuid, entry in run.held.items():
        if uuid in run.known:
            continue
        run.result.findings.append(
            Finding(
                Action.ORPHAN,
                uuid,
                entry["allocations"],
                f"consumer of project {entry['project']} is neither a server nor a migration",
            )
        )
        if run.delete and entry["written_at"] < run.grace:
            run.result.actions.append(_delete_orphan(uuid, entry))


def _check_servers(run: _AuditRun) -> None:
    """Servers on a host without allocations (``heal`` claims them again), and servers whose
    allocations are not their flavor's."""
    translated_by_key: dict[tuple[Any, str], FlavorRequest] = {}
    for uuid, server in run.servers.items():
        entry = run.held.get(uuid)
        if entry is None:
            run.result.findings.append(
                Finding(Action.MISSING, uuid, server.allocations, f"{server.name} on no allocation")
            )
            if run.heal:
                run.result.actions.append(_heal(server))
            continue
        flavor = server_flavor(server)
        translated = _translated(server, flavor, translated_by_key)
        have = _totals(entry["allocations"])
        if not translated.holds(have):  # any of its variants (page sizes) is the flavor's
            run.result.findings.append(
                Finding(
                    Action.MISMATCH,
                    uuid,
                    entry["allocations"],
                    f"{server.name}: holds {have}, flavor {flavor.name} asks "
                    f"{translated.resources}",
                )
            )


def _translated(
    server: Server, flavor: Flavor, memo: dict[tuple[Any, str], FlavorRequest]
) -> FlavorRequest:
    """The server's flavor translated, with what the boot asked beyond it (the server's
    too): servers booted with one flavor share a snapshot, translated once (``memo``)."""
    snapshot = server.flavor_snapshot
    key = json.dumps(snapshot, sort_keys=True) if snapshot else server.flavor_id
    key = (key, json.dumps(server.requested_resources or [], sort_keys=True))
    if key not in memo:
        memo[key] = translate_flavor(flavor, requested=server.requested_resources or ())
    return memo[key]


def _check_devices(run: _AuditRun) -> None:
    """Device assignments out of step with the allocations; ``heal`` brings them in step."""
    for uuid, detail in _device_mismatches(run.held, run.assigned, run.unit_keys, run.known):
        entry = run.held.get(uuid, {"allocations": {}})
        run.result.findings.append(
            Finding(Action.DEVICE_MISMATCH, uuid, entry["allocations"], detail)
        )
        if run.heal:
            run.result.actions.append(_heal_devices(uuid, entry, assign=uuid in run.known))


def _check_usage(run: _AuditRun) -> None:
    """Usage rows (allocations' ProviderUsage) that are not the sum of their allocations, one
    finding each (read in one statement: a write commits its allocations and rows together);
    ``heal`` sets those providers' rows to their sums, under their locks."""
    drift = usage_drift()
    for d in drift:
        run.result.findings.append(
            Finding(
                Action.USAGE_DRIFT,
                None,
                {d.provider_uuid: {d.class_name: d.summed}},
                f"{d.class_name} on provider {d.provider_uuid}: usage row {d.used}, "
                f"allocations sum {d.summed}",
            )
        )
    if run.heal and drift:
        usage_rebuild(provider_ids=[d.provider_id for d in drift])
        for d in drift:
            run.result.actions.append(
                Finding(
                    Action.USAGE_REPAIRED,
                    None,
                    {d.provider_uuid: {d.class_name: d.summed}},
                    f"{d.class_name} on provider {d.provider_uuid}: usage row set to "
                    f"{d.summed} (was {d.used})",
                )
            )


# What an audit run checks, in order: each adds its findings (and delete/heal actions).
CHECKS: tuple[Callable[[_AuditRun], None], ...] = (
    _check_orphans,
    _check_servers,
    _check_devices,
    _check_usage,
)


def _device_mismatches(
    held: Mapping[str, Mapping[str, Any]],
    assigned: Mapping[tuple[str, str, str], int],
    unit_keys: Collection[tuple[str, str]],
    known: Collection[str],
) -> list[tuple[str, str]]:
    """``[(consumer uuid, why)]``: units assigned beyond a consumer's allocation of that
    provider and class, or (a server or migration of this service) fewer than allocated of a
    class that has units there."""
    counts: dict[str, dict[tuple[str, str], list[int]]] = {}
    for (consumer, provider, name), n in assigned.items():
        counts.setdefault(consumer, {})[(provider, name)] = [n, 0]
    for consumer, entry in held.items():
        for provider, resources in entry["allocations"].items():
            for name, used in resources.items():
                if (provider, name) in unit_keys or (consumer, provider, name) in assigned:
                    counts.setdefault(consumer, {}).setdefault((provider, name), [0, 0])[1] = used
    found = []
    for consumer in sorted(counts):
        wrong = [
            f"{n} {name} units assigned on provider {provider}, {used} allocated"
            for (provider, name), (n, used) in sorted(counts[consumer].items())
            if n > used or (consumer in known and n < used)
        ]
        if wrong:
            found.append((consumer, "; ".join(wrong)))
    return found


def _heal_devices(uuid: str, entry: Mapping[str, Any], *, assign: bool) -> Finding:
    try:
        freed, added = device_assignments_heal(consumer_uuid=uuid, assign=assign)
    except (DeviceUnitsExhausted, Conflict) as exc:
        return Finding(Action.HEAL_FAILED, uuid, entry["allocations"], exc.detail)
    detail = f"{freed} units freed, {added} assigned"
    return Finding(Action.DEVICES_HEALED, uuid, entry["allocations"], detail)


def _delete_orphan(uuid: str, entry: Mapping[str, Any]) -> Finding:
    """Free an orphan unless it changed since the audit read it (generation checked)."""
    try:
        allocations_replace(
            consumers=[
                ConsumerAllocationWrite(
                    consumer_uuid=uuid,
                    allocations={},
                    project_id=entry["project"],
                    user_id=entry["user"],
                    generation=entry["generation"],
                )
            ]
        )
    except Conflict as exc:
        return Finding(Action.ORPHAN, uuid, entry["allocations"], f"kept: {exc.detail}")
    return Finding(Action.ORPHAN_DELETED, uuid, entry["allocations"], "deleted")


def _heal(server: Server) -> Finding:
    """Claim the server's recorded allocations again, as a new consumer."""
    if not server.allocations:
        return Finding(Action.HEAL_FAILED, str(server.uuid), {}, "no recorded allocations")
    try:
        allocation_claim(
            consumer_uuid=server.uuid,
            allocations=server.allocations,
            project_id=server.project_id,
            user_id=server.user_id,
            generation=None,
            consumer_type=INSTANCE_CONSUMER_TYPE,
        )
    except (ClaimFailed, Conflict) as exc:
        return Finding(Action.HEAL_FAILED, str(server.uuid), server.allocations, exc.detail)
    return Finding(Action.HEALED, str(server.uuid), server.allocations, "re-created")


def _record(result: AuditResult, origin: str) -> None:
    found = [*result.findings, *result.actions]
    if not found:
        return
    rows = [
        LifecycleRecord(
            run=result.run,
            origin=origin,
            action=f.action,
            consumer_uuid=f.consumer_uuid,
            allocations=f.allocations,
            detail=f.detail,
        )
        for f in found
    ]
    rows.append(
        LifecycleRecord(
            run=result.run,
            origin=origin,
            action=Action.AUDIT_RUN,
            detail=", ".join(
                f"{result.count(a)} {a}"
                for a in (
                    *FINDINGS,
                    Action.ORPHAN_DELETED,
                    Action.HEALED,
                    Action.DEVICES_HEALED,
                    Action.USAGE_REPAIRED,
                    Action.HEAL_FAILED,
                )
                if result.count(a)
            ),
        )
    )
    LifecycleRecord.objects.bulk_create(rows)
