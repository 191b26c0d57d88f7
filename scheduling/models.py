"""Flavors (what an instance asks for), servers (instances placed by the scheduler) and the
scheduling side of aggregates (names, availability zones, metadata), as Nova keeps them."""

import uuid
from datetime import timedelta

from django.conf import settings
from django.db import models

from providers.models import Aggregate, ResourceProvider, TimestampedModel


class Flavor(TimestampedModel):
    """A size of instance: standard amounts plus Nova-style extra specs
    (validated by :mod:`scheduling.extra_specs`)."""

    name = models.CharField(max_length=255, unique=True)
    vcpus = models.PositiveIntegerField()
    ram = models.PositiveIntegerField(help_text="MB")
    disk = models.PositiveIntegerField(default=0, help_text="GB (root disk)")
    ephemeral = models.PositiveIntegerField(default=0, help_text="GB")
    swap = models.PositiveIntegerField(default=0, help_text="MB")
    extra_specs = models.JSONField(default=dict, blank=True)
    is_public = models.BooleanField(default=True)
    disabled = models.BooleanField(default=False)

    class Meta:
        ordering = ["name"]

    def __str__(self):
        return self.name


class FlavorAccess(models.Model):
    """A project given a private flavor (Nova's flavor access): its callers list and use it.
    A public flavor needs none; a private one without any is the admins' alone."""

    flavor = models.ForeignKey(Flavor, on_delete=models.CASCADE, related_name="access")
    project_id = models.CharField(max_length=255)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["flavor", "project_id"]
        verbose_name_plural = "flavor access"
        constraints = [
            models.UniqueConstraint(fields=["flavor", "project_id"], name="flavor_access_once")
        ]
        indexes = [models.Index(fields=["project_id"])]

    def __str__(self):
        return f"{self.flavor} for {self.project_id}"


class BootRequest(models.Model):
    """A create given an ``Idempotency-Key``: written in the transaction of its claims, so it
    exists exactly when its servers do. A retry with the same key (in the same project) gets
    those servers back; a concurrent one waits on the unique key until the first has ended."""

    project_id = models.CharField(max_length=255)
    key = models.CharField(max_length=255)
    # What the request asked (a hash of its body): the same key with another body is refused.
    fingerprint = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project_id", "key"], name="boot_request_key_once")
        ]

    def __str__(self):
        return f"{self.key} ({self.project_id})"


class Server(TimestampedModel):
    """An instance placed by the scheduler. Its uuid is the Placement consumer holding its
    allocations; ``host`` is the root provider chosen."""

    uuid = models.UUIDField(unique=True, default=uuid.uuid4)
    name = models.CharField(max_length=255)
    flavor = models.ForeignKey(Flavor, on_delete=models.PROTECT, related_name="servers")
    project_id = models.CharField(max_length=255)
    user_id = models.CharField(max_length=255)
    host = models.ForeignKey(
        ResourceProvider, null=True, on_delete=models.SET_NULL, related_name="servers"
    )
    # {provider uuid: {resource class: amount}} as claimed.
    allocations = models.JSONField(default=dict)
    # [{"host", "host_uuid", "allocations"}]: hosts that also fitted, for a retry.
    alternates = models.JSONField(default=list)
    # The zone it is in (its host's, as Nova records it); the zone asked for, which its moves
    # keep to (a server asked for none may move to any zone, as in Nova).
    availability_zone = models.CharField(max_length=255, blank=True, default="")
    requested_availability_zone = models.CharField(max_length=255, blank=True, default="")
    scheduler_hints = models.JSONField(default=dict, blank=True)
    # What the boot asked beyond its flavor (an address of an IP pool, a port's bandwidth):
    # ``[{"resources": {class: amount}, "required": [trait]}]``, asked again by every move.
    requested_resources = models.JSONField(default=list, blank=True)
    boot_request = models.ForeignKey(
        BootRequest, null=True, blank=True, on_delete=models.SET_NULL, related_name="servers"
    )
    # The flavor as booted or last resized with (scheduling.flavor_snapshots): a later edit of
    # the flavor's extra specs is for new servers only.
    flavor_snapshot = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["project_id"])]

    def __str__(self):
        return f"{self.name} ({self.uuid})"


class ServerGroup(TimestampedModel):
    """Nova's server group: servers kept together (``affinity``) or apart (``anti-affinity``,
    at most ``rules["max_server_per_host"]`` per host, default 1) by the scheduler's filters,
    or preferably so (``soft-...``) by its weighers."""

    class Policy(models.TextChoices):
        AFFINITY = "affinity"
        ANTI_AFFINITY = "anti-affinity"
        SOFT_AFFINITY = "soft-affinity"
        SOFT_ANTI_AFFINITY = "soft-anti-affinity"

    uuid = models.UUIDField(unique=True, default=uuid.uuid4)
    name = models.CharField(max_length=255)
    policy = models.CharField(max_length=20, choices=Policy.choices)
    rules = models.JSONField(default=dict, blank=True)
    project_id = models.CharField(max_length=255)
    user_id = models.CharField(max_length=255, blank=True, default="")

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["project_id"])]

    def __str__(self):
        return f"{self.name} ({self.policy})"

    @property
    def max_server_per_host(self):
        return int(self.rules.get("max_server_per_host", 1))


class ServerGroupMember(models.Model):
    """A server in a group (one group per server, as Nova); gone with the server."""

    group = models.ForeignKey(ServerGroup, on_delete=models.CASCADE, related_name="members")
    server = models.OneToOneField(Server, on_delete=models.CASCADE, related_name="group_membership")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self):
        return f"{self.server} in {self.group}"


class AggregateMetadata(TimestampedModel):
    """What Nova's host aggregates add to Placement's bare aggregate uuids: a name, an
    availability zone and key/value metadata matched by flavor extra specs."""

    aggregate = models.OneToOneField(Aggregate, on_delete=models.CASCADE, related_name="metadata")
    name = models.CharField(max_length=255, blank=True, default="")
    availability_zone = models.CharField(max_length=255, blank=True, default="", db_index=True)
    metadata = models.JSONField(default=dict, blank=True)

    class Meta:
        verbose_name_plural = "aggregate metadata"

    def __str__(self):
        return self.name or str(self.aggregate.uuid)


class Migration(TimestampedModel):
    """One move of a server. Its uuid is the Placement consumer (type MIGRATION) that holds
    the source host's allocations while the server's own consumer holds the destination's."""

    class Kind(models.TextChoices):
        MIGRATE = "migrate"
        RESIZE = "resize"
        LIVE_MIGRATE = "live-migrate"
        EVACUATE = "evacuate"

    class Status(models.TextChoices):
        PRE_MIGRATING = "pre-migrating"
        MIGRATING = "migrating"
        FINISHED = "finished"
        COMPLETED = "completed"  # a live migration done: the source freed, nothing to confirm
        CONFIRMED = "confirmed"
        REVERTED = "reverted"
        ERROR = "error"

    IN_FLIGHT = (Status.PRE_MIGRATING, Status.MIGRATING, Status.FINISHED)
    FINAL = (Status.CONFIRMED, Status.COMPLETED, Status.REVERTED, Status.ERROR)

    uuid = models.UUIDField(unique=True, default=uuid.uuid4)
    server = models.ForeignKey(
        Server, null=True, blank=True, on_delete=models.SET_NULL, related_name="migrations"
    )
    # Kept when the server is deleted, so that the audit still knows the consumer.
    server_uuid = models.UUIDField(db_index=True)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PRE_MIGRATING)
    source = models.ForeignKey(
        ResourceProvider, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    dest = models.ForeignKey(
        ResourceProvider, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    old_flavor = models.ForeignKey(Flavor, on_delete=models.PROTECT, related_name="+")
    new_flavor = models.ForeignKey(Flavor, on_delete=models.PROTECT, related_name="+")
    # The server's flavor snapshots before and after the move (a revert restores the old one).
    old_flavor_snapshot = models.JSONField(default=dict, blank=True)
    new_flavor_snapshot = models.JSONField(default=dict, blank=True)
    # {provider uuid: {class: amount}}: what the migration consumer took over from the
    # server, and what the server claimed on the destination.
    source_allocations = models.JSONField(default=dict, blank=True)
    dest_allocations = models.JSONField(default=dict, blank=True)
    project_id = models.CharField(max_length=255)
    user_id = models.CharField(max_length=255)
    # When the lease last started; it ends PLACEMENT_MIGRATION_LEASE_SECONDS later, as that
    # setting says now (lowering it applies to moves in flight).
    lease_started_at = models.DateTimeField(db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # When the cleanup checked that a final migration's consumer holds nothing any more.
    cleaned_at = models.DateTimeField(null=True, blank=True)
    # When an expired lease was last reported (so that it is reported once).
    expiry_reported_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["status", "cleaned_at"])]

    def __str__(self):
        return f"{self.kind} {self.uuid} ({self.status})"

    @property
    def in_flight(self):
        return self.status in self.IN_FLIGHT

    @staticmethod
    def lease():
        return timedelta(seconds=settings.PLACEMENT_MIGRATION_LEASE_SECONDS)

    @property
    def lease_expires_at(self):
        return self.lease_started_at + self.lease()

    @classmethod
    def lease_started_before(cls, now):
        """The lookup of moves whose lease ended before ``now``."""
        return {"lease_started_at__lt": now - cls.lease()}


class LifecycleRecord(models.Model):
    """What a cleanup, an audit or an automatic action found or did: what, when, and which
    allocations. One ``run`` groups the records of one cleanup or audit."""

    class Action(models.TextChoices):
        CLEANUP_RUN = "cleanup_run", "cleanup run"
        FREED = "freed", "allocations of a finished migration freed"
        EXPIRED = "expired", "lease expired (reported)"
        EXPIRED_REVERTED = "expired_reverted", "lease expired, reverted"
        EXPIRED_CONFIRMED = "expired_confirmed", "lease expired, confirmed"
        FAILED_REVERTED = "failed_reverted", "move failed, reverted"
        AUDIT_RUN = "audit_run", "audit run"
        ORPHAN = "orphan", "orphaned allocations"
        ORPHAN_DELETED = "orphan_deleted", "orphaned allocations deleted"
        MISSING = "missing", "server without allocations"
        MISMATCH = "mismatch", "allocations not matching the flavor"
        HEALED = "healed", "server allocations re-created"
        HEAL_FAILED = "heal_failed", "server allocations could not be re-created"
        DEVICE_MISMATCH = "device_mismatch", "device units not matching the allocations"
        DEVICES_HEALED = "devices_healed", "device units brought in step"
        DRAINED = "drained", "host drained"
        DRAIN_REFUSED = "drain_refused", "server not moved by a drain"
        USAGE_DRIFT = "usage_drift", "usage row not the sum of the allocations"
        USAGE_REPAIRED = "usage_repaired", "usage row set to the sum of the allocations"

    run = models.UUIDField(db_index=True)
    origin = models.CharField(max_length=20, default="task")  # task, command, api
    action = models.CharField(max_length=20, choices=Action.choices)
    migration = models.ForeignKey(
        Migration, null=True, blank=True, on_delete=models.SET_NULL, related_name="records"
    )
    consumer_uuid = models.UUIDField(null=True, blank=True)
    allocations = models.JSONField(default=dict, blank=True)
    detail = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self):
        return f"{self.get_action_display()} {self.consumer_uuid or ''}".strip()
