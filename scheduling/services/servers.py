"""Creating servers (schedule, claim, record) and deleting them (free, forget)."""

import hashlib
import json
import logging
import uuid as uuidlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction

from allocations.services.allocations import allocation_delete
from placementsite.core.exceptions import Conflict, NotFound
from placementsite.core.gc_pause import cyclic_gc_paused
from providers.models import ResourceProvider

from ..extra_specs import translate_flavor
from ..flavor_snapshots import flavor_snapshot
from ..models import BootRequest, Flavor, Server, ServerGroup
from ..plugins import HostState
from ..selectors.names import check_names
from ..selectors.scheduler import (
    Placement,
    SchedulingPass,
    SchedulingSpec,
    explain,
    max_placement_results,
)
from ..selectors.server_groups import member_host_counts
from .claims import ClaimFailed, allocations_claim
from .server_groups import group_admit, group_locked

logger = logging.getLogger("placement.scheduler")

NO_VALID_HOST = "scheduler.no_valid_host"
KEY_REUSED = "scheduler.idempotency_key_reused"
# A refused claim sends the rest of the request to a fresh pass; this many times max_attempts
# refusals end it with no valid host.
SELECTION_ROUNDS = 3


class NoValidHost(Conflict):
    """No host can take the instance; ``explain`` is the funnel of the last pass."""

    code = NO_VALID_HOST

    def __init__(self, detail: str, explain: dict[str, Any] | None = None) -> None:
        super().__init__(detail)
        self.explain = explain


@dataclass
class BootStats:
    """What the caller learns about a create besides its servers."""

    replayed: bool = False  # the servers of an earlier create with the same key


def scheduling_spec(
    *,
    flavor: Flavor,
    project_id: str,
    user_id: str,
    count: int = 1,
    hints: Mapping[str, Any] | None = None,
    availability_zone: str | None = "",
    traits: Iterable[str] = (),
    group: ServerGroup | None = None,
    moving_server: uuidlib.UUID | str | None = None,
    requested_resources: Sequence[Mapping[str, Any]] = (),
) -> SchedulingSpec:
    """The request the scheduler reads; a target host or zone that does not exist is a 400.
    ``group``: the server group the instances join (or the moving server is in);
    ``requested_resources``: what each instance asks beyond its flavor (granular groups
    ``_REQUESTED1``..., see :func:`scheduling.extra_specs.translate`)."""
    check_names(target_host=(hints or {}).get("target_host"), availability_zone=availability_zone)
    spec = SchedulingSpec(
        flavor=flavor,
        flavor_request=translate_flavor(flavor, traits=traits, requested=requested_resources),
        project_id=project_id,
        user_id=user_id,
        hints=dict(hints or {}),
        availability_zone=availability_zone or "",
        count=count,
        group=group,
        moving_server=moving_server,
        requested_resources=list(requested_resources),
    )
    read_group_hosts(spec=spec)
    return spec


def read_group_hosts(*, spec: SchedulingSpec) -> None:
    """Where the spec's group members run, read now: once per pass, so that each pass (and
    each instance of a request) sees every member placed before it."""
    if spec.group is not None:
        spec.group_hosts = member_host_counts(group=spec.group, exclude_server=spec.moving_server)


def _fingerprint(**asked: Any) -> str:
    return hashlib.sha256(json.dumps(asked, sort_keys=True, default=str).encode()).hexdigest()


def _boot_request(
    *, project_id: str, key: str, fingerprint: str
) -> tuple[BootRequest | None, list[Server] | None]:
    """``(BootRequest, None)`` for a new key, or ``(None, [Server])`` for one an earlier create
    committed. A create with the same key still running holds the key's index entry: the
    insert waits until it commits (its servers come back) or rolls back (this one boots)."""
    try:
        with transaction.atomic():
            return BootRequest.objects.create(
                project_id=project_id, key=key, fingerprint=fingerprint
            ), None
    except IntegrityError:
        earlier = BootRequest.objects.get(project_id=project_id, key=key)
    if earlier.fingerprint != fingerprint:
        raise Conflict(f"Idempotency-Key {key} was used for another request.", code=KEY_REUSED)
    return None, list(earlier.servers.order_by("id"))


def _plan(spec: SchedulingSpec, names: Sequence[str], refused: set[int]) -> list[Placement]:
    """Place every instance of the request in one pass, in memory (instance k sees 1..k-1,
    their usage and, in a server group, their hosts); raises NoValidHost, with the funnel of
    the pass that failed, naming the first instance that does not fit.

    The pass judges the first PLACEMENT_SCHEDULER_MAX_PLACEMENT_RESULTS candidates only (as
    Nova's scheduler); when those place too few and more hosts exist, the plan is made again
    over every host: the bound never answers a false no valid host."""
    plan, failed = _plan_in_pass(spec, names, refused, max_placement_results())
    if failed is not None and failed.selection.limited:
        logger.info(
            "The bounded pass placed %d of %d; planning over every host", len(plan), len(names)
        )
        plan, failed = _plan_in_pass(spec, names, refused, None)
    if failed is not None:
        raise NoValidHost(
            f"No valid host was found for {names[len(plan)]} (flavor {spec.flavor.name}).",
            explain=explain(spec=spec, selection=failed.selection),
        )
    return plan


def _plan_in_pass(
    spec: SchedulingSpec, names: Sequence[str], refused: set[int], limit: int | None
) -> tuple[list[Placement], Placement | None]:
    """``(placements, None)`` when one pass over at most ``limit`` candidates places every
    instance, else ``(those placed, the first placement without a host)``. Nothing is
    written: a plan made again starts from the group's members as read now."""
    read_group_hosts(spec=spec)
    model = SchedulingPass(spec, leave_out=refused, limit=limit)
    plan: list[Placement] = []
    for index in range(len(names)):
        spec.index = index
        spec.check_time()
        placement = model.place()
        if placement.host is None:
            return plan, placement
        plan.append(placement)
        if spec.group is not None:
            uuid = placement.host.uuid
            spec.group_hosts[uuid] = spec.group_hosts.get(uuid, 0) + 1
    return plan, None


def _claim(
    spec: SchedulingSpec,
    names: Sequence[str],
    plan: Sequence[Placement],
    stats: BootStats,
    boot_request: BootRequest | None,
) -> list[Server]:
    """Claim every planned instance in the database in one write (the claim is the truth);
    returns their Servers or raises ClaimFailed. In a server group, the group's hard policy
    is checked again in the claim's transaction, under the group's lock: whatever filters are
    configured, no claim breaks it."""
    snapshot = flavor_snapshot(spec.flavor)
    # Every planned instance has a host (_plan raises NoValidHost for one without).
    hosts = [placement.host for placement in plan if placement.host is not None]
    records = [
        Server(
            uuid=uuidlib.uuid4(),
            name=name,
            flavor=spec.flavor,
            flavor_snapshot=snapshot,
            project_id=spec.project_id,
            user_id=spec.user_id,
            host_id=host.id,
            allocations=placement.allocations,
            alternates=placement.alternates,
            # The zone it landed in (as Nova records it); the one asked for if the host is in
            # no zone (a request may name an aggregate for one).
            availability_zone=host.availability_zone or spec.availability_zone,
            requested_availability_zone=spec.availability_zone,
            scheduler_hints=spec.hints,
            requested_resources=list(spec.requested_resources),
            boot_request=boot_request,
        )
        for name, placement, host in zip(names, plan, hosts, strict=True)
    ]

    def record_and_join() -> None:
        Server.objects.bulk_create(records)
        for record, host in zip(records, hosts, strict=True):
            group_admit(group=spec.group, host_uuid=host.uuid, server=record, join=True)

    allocations_claim(
        claims=[(record.uuid, record.allocations) for record in records],
        project_id=spec.project_id,
        user_id=spec.user_id,
        then=record_and_join,
        # Hosts whose reservation is held host-wide, as the pass read them.
        host_limits=any(host.tree.limits(host.id) for host in hosts),
    )
    for record, host in zip(records, hosts, strict=True):
        record.host_name = host.name
        record.host_uuid = host.uuid
        # The host as the pass read it: whoever renders the server reads no row for it.
        record.host = ResourceProvider(id=host.id, uuid=host.uuid, name=host.name)
    return records


def _refusing_host(plan: Iterable[Placement], provider_uuid: str | None) -> HostState | None:
    """The host of the planned instance whose allocations name ``provider_uuid``."""
    for placement in plan:
        if placement.allocations is not None and provider_uuid in placement.allocations:
            return placement.host
    return None


def servers_create(
    *,
    name: str,
    flavor: Flavor,
    project_id: str,
    user_id: str,
    count: int = 1,
    hints: Mapping[str, Any] | None = None,
    availability_zone: str | None = "",
    group: ServerGroup | None = None,
    request_key: str | None = None,
    stats: BootStats | None = None,
    requested_resources: Sequence[Mapping[str, Any]] = (),
) -> list[Server]:
    """Place ``count`` instances of ``flavor`` in one pass (instance 2 sees instance 1's usage in
    memory), then claim them in one write, in one transaction: the servers appear together
    when it commits, or never
    (NoValidHost for one of them, an error, the process or the database going away). With a
    ``request_key`` (the client's ``Idempotency-Key``), a create the project already made with
    that key answers its servers again (``stats.replayed``) instead of booting anew.

    With a server ``group``, the transaction also holds the group's row lock: the passes see
    every member placed before (by this request or a concurrent one, which waits), each claim
    checks the hard policy again, and the servers join the group together or not at all.

    ``requested_resources`` (an IP pool's address, say) is asked by each instance besides its
    flavor, recorded on the servers and asked again by their moves."""
    stats = stats if stats is not None else BootStats()
    spec = scheduling_spec(
        flavor=flavor,
        project_id=project_id,
        user_id=user_id,
        count=count,
        hints=hints,
        availability_zone=availability_zone,
        group=group,
        requested_resources=requested_resources,
    )
    # Each pass allocates a host state per host: no collector walks while they live.
    with transaction.atomic(), cyclic_gc_paused():
        boot_request = None
        if request_key is not None:
            asked = _fingerprint(
                name=name,
                flavor=flavor.pk,
                user_id=user_id,
                count=count,
                hints=hints or {},
                availability_zone=availability_zone or "",
                group=str(group.uuid) if group is not None else "",
                # Only when asked: keys of boots before the field replay as they did.
                **(
                    {"requested_resources": list(requested_resources)}
                    if requested_resources
                    else {}
                ),
            )
            boot_request, earlier = _boot_request(
                project_id=project_id, key=request_key, fingerprint=asked
            )
            if earlier is not None:
                stats.replayed = True
                return earlier
        with group_locked(group=group) as locked:
            spec.group = locked
            return _place_and_claim(spec, name, count, stats, boot_request)


def _place_and_claim(
    spec: SchedulingSpec,
    name: str,
    count: int,
    stats: BootStats,
    boot_request: BootRequest | None,
) -> list[Server]:
    """Place the request's instances and claim them, placing afresh when a claim is refused."""
    names = [name] if count == 1 else [f"{name}-{i + 1}" for i in range(count)]
    # Every instance is placed in one pass, then all are claimed in one write. A refused
    # claim (a host taken meanwhile) sends the request to a fresh pass, which reads the
    # usage afresh and leaves out the host that refused.
    refused: set[int] = set()
    attempts = SELECTION_ROUNDS * max(1, settings.PLACEMENT_SCHEDULER_MAX_ATTEMPTS)
    for _attempt in range(attempts):
        plan = _plan(spec, names, refused)
        try:
            return _claim(spec, names, plan, stats, boot_request)
        except ClaimFailed as exc:
            host = _refusing_host(plan, exc.provider_uuid)
            if host is not None:
                refused.add(host.id)
            logger.info(
                "Claim on %s failed (%s); placing afresh",
                host.name if host else "a host",
                exc.detail,
            )
    raise NoValidHost(
        f"No valid host was found for {names[0]} (flavor {spec.flavor.name}): "
        f"the hosts chosen were taken meanwhile.",
        explain=None,
    )


def server_delete(*, server: Server) -> None:
    """Free the server's allocations and forget it, in one transaction."""
    with transaction.atomic():
        try:
            allocation_delete(consumer_uuid=str(server.uuid))
        except NotFound:
            pass  # nothing held (already freed)
        Server.objects.filter(pk=server.pk).delete()
