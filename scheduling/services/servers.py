"""Creating servers (schedule, claim, record) and deleting them (free, forget)."""

import hashlib
import json
import logging
import uuid as uuidlib
from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, transaction

from allocations.services.allocations import allocation_delete
from placementsite.core.exceptions import Conflict, NotFound
from placementsite.core.gc_pause import cyclic_gc_paused

from ..extra_specs import translate_flavor
from ..flavor_snapshots import flavor_snapshot
from ..models import BootRequest, Server
from ..selectors.names import check_names
from ..selectors.scheduler import SchedulingSpec, explain, first_allocations, select_hosts
from ..selectors.server_groups import member_host_counts
from .claims import ClaimFailed, allocation_claim
from .server_groups import group_admit, group_locked

logger = logging.getLogger("placement.scheduler")

NO_VALID_HOST = "scheduler.no_valid_host"
KEY_REUSED = "scheduler.idempotency_key_reused"
# A pass whose claims all fail (hosts taken meanwhile) is followed by a fresh one, this often.
SELECTION_ROUNDS = 3


class NoValidHost(Conflict):
    """No host can take the instance; ``explain`` is the funnel of the last pass."""

    code = NO_VALID_HOST

    def __init__(self, detail, explain=None):
        super().__init__(detail)
        self.explain = explain


@dataclass
class BootStats:
    """What a create cost: claims retried after concurrent updates, hosts given up on."""

    retries: int = 0
    hosts_tried: int = 0
    replayed: bool = False  # the servers of an earlier create with the same key


def scheduling_spec(
    *,
    flavor,
    project_id,
    user_id,
    count=1,
    hints=None,
    availability_zone="",
    traits=(),
    group=None,
    moving_server=None,
):
    """The request the scheduler reads; a target host or zone that does not exist is a 400.
    ``group``: the server group the instances join (or the moving server is in)."""
    check_names(target_host=(hints or {}).get("target_host"), availability_zone=availability_zone)
    spec = SchedulingSpec(
        flavor=flavor,
        flavor_request=translate_flavor(flavor, traits=traits),
        project_id=project_id,
        user_id=user_id,
        hints=dict(hints or {}),
        availability_zone=availability_zone or "",
        count=count,
        group=group,
        moving_server=moving_server,
    )
    read_group_hosts(spec)
    return spec


def read_group_hosts(spec):
    """Where the spec's group members run, read now: once per pass, so that each pass (and
    each instance of a request) sees every member placed before it."""
    if spec.group is not None:
        spec.group_hosts = member_host_counts(group=spec.group, exclude_server=spec.moving_server)


def _alternates(selection, claimed):
    keep = max(0, settings.PLACEMENT_SCHEDULER_MAX_ATTEMPTS - 1)
    others = [(w, first_allocations(w.host)) for w in selection.attempt_order() if w is not claimed]
    return [
        {"host": w.host.name, "host_uuid": w.host.uuid, "allocations": allocations}
        for w, allocations in others
        if allocations is not None
    ][:keep]


def _fingerprint(**asked):
    return hashlib.sha256(json.dumps(asked, sort_keys=True, default=str).encode()).hexdigest()


def _boot_request(*, project_id, key, fingerprint):
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


def _place_one(spec, name, stats, boot_request=None):
    """Schedule and claim one instance; returns its Server or raises NoValidHost."""
    server_uuid = uuidlib.uuid4()
    tries_per_pass = max(1, settings.PLACEMENT_SCHEDULER_MAX_ATTEMPTS)
    selection = None
    snapshot = flavor_snapshot(spec.flavor)
    for _round in range(SELECTION_ROUNDS):
        read_group_hosts(spec)
        selection = select_hosts(spec)
        if selection.chosen is None:
            break
        for weighed in selection.attempt_order()[:tries_per_pass]:
            host = weighed.host
            allocations = first_allocations(host)
            if allocations is None:
                logger.info("The tree of %s changed since it was read; next host", host.name)
                continue
            record = Server(
                uuid=server_uuid,
                name=name,
                flavor_id=spec.flavor.pk,
                flavor_snapshot=snapshot,
                project_id=spec.project_id,
                user_id=spec.user_id,
                host_id=host.id,
                allocations=allocations,
                alternates=_alternates(selection, weighed),
                # The zone it landed in (as Nova records it); the one asked for if the host
                # is in no zone (a request may name an aggregate for one).
                availability_zone=host.availability_zone or spec.availability_zone,
                requested_availability_zone=spec.availability_zone,
                scheduler_hints=spec.hints,
                boot_request=boot_request,
            )
            stats.hosts_tried += 1

            def record_and_join(record=record, host=host):
                # The group's hard policy is checked again here, in the claim's transaction
                # and under the group's lock: whatever filters are configured, no claim
                # breaks it.
                record.save()
                group_admit(group=spec.group, host_uuid=host.uuid, server=record, join=True)

            try:
                stats.retries += allocation_claim(
                    consumer_uuid=server_uuid,
                    allocations=allocations,
                    project_id=spec.project_id,
                    user_id=spec.user_id,
                    then=record_and_join,
                )
            except ClaimFailed as exc:
                stats.retries += exc.retries
                logger.info("Claim on %s failed (%s); trying the next host", host.name, exc.detail)
                continue
            record.host_name = host.name
            record.host_uuid = host.uuid
            return record
    raise NoValidHost(
        f"No valid host was found for {name} (flavor {spec.flavor.name}).",
        explain=explain(spec, selection) if selection is not None else None,
    )


def servers_create(
    *,
    name,
    flavor,
    project_id,
    user_id,
    count=1,
    hints=None,
    availability_zone="",
    group=None,
    request_key=None,
    stats=None,
):
    """Place ``count`` instances of ``flavor``, claiming as it goes (instance 2 sees instance
    1's usage), all in one transaction: the servers appear together when it commits, or never
    (NoValidHost for one of them, an error, the process or the database going away). With a
    ``request_key`` (the client's ``Idempotency-Key``), a create the project already made with
    that key answers its servers again (``stats.replayed``) instead of booting anew.

    With a server ``group``, the transaction also holds the group's row lock: the passes see
    every member placed before (by this request or a concurrent one, which waits), each claim
    checks the hard policy again, and the servers join the group together or not at all."""
    stats = stats if stats is not None else BootStats()
    spec = scheduling_spec(
        flavor=flavor,
        project_id=project_id,
        user_id=user_id,
        count=count,
        hints=hints,
        availability_zone=availability_zone,
    )
    placed = []
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
            )
            boot_request, earlier = _boot_request(
                project_id=project_id, key=request_key, fingerprint=asked
            )
            if earlier is not None:
                stats.replayed = True
                return earlier
        with group_locked(group) as locked:
            spec.group = locked
            for index in range(count):
                spec.index = index
                name_of = name if count == 1 else f"{name}-{index + 1}"
                placed.append(_place_one(spec, name_of, stats, boot_request))
    return placed


def server_delete(*, server):
    """Free the server's allocations and forget it, in one transaction."""
    with transaction.atomic():
        try:
            allocation_delete(consumer_uuid=str(server.uuid))
        except NotFound:
            pass  # nothing held (already freed)
        Server.objects.filter(pk=server.pk).delete()
