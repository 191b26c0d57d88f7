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
from ..models import BootRequest, Server
from ..selectors.scheduler import SchedulingPass, SchedulingSpec, explain
from .claims import ClaimFailed, allocations_claim

logger = logging.getLogger("placement.scheduler")

NO_VALID_HOST = "scheduler.no_valid_host"
KEY_REUSED = "scheduler.idempotency_key_reused"
# A refused claim sends the rest of the request to a fresh pass; this many times max_attempts
# refusals end it with no valid host.
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
    *, flavor, project_id, user_id, count=1, hints=None, availability_zone="", traits=()
):
    return SchedulingSpec(
        flavor=flavor,
        flavor_request=translate_flavor(flavor, traits=traits),
        project_id=project_id,
        user_id=user_id,
        hints=dict(hints or {}),
        availability_zone=availability_zone or "",
        count=count,
    )


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


def _plan(spec, names, refused):
    """Place instances ``start``.. of the request in one pass, in memory (instance k sees
    1..k-1); raises NoValidHost, with the funnel of the pass that failed, naming the first
    instance that does not fit."""
    model = SchedulingPass(spec, leave_out=refused)
    plan = []
    for index in range(len(names)):
        spec.index = index
        spec.check_time()
        placement = model.place()
        if placement.host is None:
            raise NoValidHost(
                f"No valid host was found for {names[index]} (flavor {spec.flavor.name}).",
                explain=explain(spec, placement.selection),
            )
        plan.append(placement)
    return plan


def _claim(spec, names, plan, stats, boot_request):
    """Claim every planned instance in the database in one write (the claim is the truth);
    returns their Servers or raises ClaimFailed."""
    records = [
        Server(
            uuid=uuidlib.uuid4(),
            name=name,
            flavor=spec.flavor,
            project_id=spec.project_id,
            user_id=spec.user_id,
            host_id=placement.host.id,
            allocations=placement.allocations,
            alternates=placement.alternates,
            availability_zone=spec.availability_zone,
            scheduler_hints=spec.hints,
            boot_request=boot_request,
        )
        for name, placement in zip(names, plan, strict=True)
    ]
    stats.hosts_tried += len({placement.host.id for placement in plan})
    try:
        stats.retries += allocations_claim(
            claims=[(record.uuid, record.allocations) for record in records],
            project_id=spec.project_id,
            user_id=spec.user_id,
            then=lambda: Server.objects.bulk_create(records),
        )
    except ClaimFailed as exc:
        stats.retries += exc.retries
        raise
    for record, placement in zip(records, plan, strict=True):
        record.host_name = placement.host.name
        record.host_uuid = placement.host.uuid
    return records


def _refusing_host(plan, provider_uuid):
    """The host of the planned instance whose allocations name ``provider_uuid``."""
    for placement in plan:
        if provider_uuid in placement.allocations:
            return placement.host
    return None


def servers_create(
    *,
    name,
    flavor,
    project_id,
    user_id,
    count=1,
    hints=None,
    availability_zone="",
    request_key=None,
    stats=None,
):
    """Place ``count`` instances of ``flavor`` in one pass (instance 2 sees instance 1's usage in
    memory), then claim them in one write, in one transaction: the servers appear together
    when it commits, or never
    (NoValidHost for one of them, an error, the process or the database going away). With a
    ``request_key`` (the client's ``Idempotency-Key``), a create the project already made with
    that key answers its servers again (``stats.replayed``) instead of booting anew."""
    stats = stats if stats is not None else BootStats()
    spec = scheduling_spec(
        flavor=flavor,
        project_id=project_id,
        user_id=user_id,
        count=count,
        hints=hints,
        availability_zone=availability_zone,
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
            )
            boot_request, earlier = _boot_request(
                project_id=project_id, key=request_key, fingerprint=asked
            )
            if earlier is not None:
                stats.replayed = True
                return earlier
        names = [name] if count == 1 else [f"{name}-{i + 1}" for i in range(count)]
        # Every instance is placed in one pass, then all are claimed in one write. A refused
        # claim (a host taken meanwhile) sends the request to a fresh pass, which reads the
        # usage afresh and leaves out the host that refused.
        refused = set()
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
            f"No valid host was found for {names[0]} (flavor {flavor.name}): "
            f"the hosts chosen were taken meanwhile.",
            explain=None,
        )


def server_delete(*, server):
    """Free the server's allocations and forget it, in one transaction."""
    with transaction.atomic():
        try:
            allocation_delete(consumer_uuid=str(server.uuid))
        except NotFound:
            pass  # nothing held (already freed)
        Server.objects.filter(pk=server.pk).delete()
