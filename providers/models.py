"""Resource classes, traits, resource providers, inventories and aggregates."""

import re
import uuid

import os_traits
from django.db import models

from .capacity import CAPACITY_FIELDS, Capacity

CUSTOM_PREFIX = "CUSTOM_"
# The trait of a provider that shares its inventory with the members of its aggregates.
SHARING_TRAIT = os_traits.MISC_SHARES_VIA_AGGREGATE
CUSTOM_NAME_RE = re.compile(r"^CUSTOM_[A-Z0-9_]+$")
# Integer columns in Placement are 32-bit signed.
MAX_INT = 2147483647


class TimestampedModel(models.Model):
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True, null=True)

    class Meta:
        abstract = True

    @property
    def last_modified(self):
        return self.updated_at or self.created_at


class ResourceClass(TimestampedModel):
    """A kind of resource: standard (os-resource-classes) or CUSTOM_*.

    ``kind``, ``unit`` and ``description`` are the human side (seeded for the
    standard classes, see standards.py); Placement's wire format never shows them.
    """

    class Kind(models.TextChoices):
        COMPUTE = "compute", "compute"
        MEMORY = "memory", "memory"
        STORAGE = "storage", "storage"
        NETWORK = "network", "network"
        ACCELERATOR = "accelerator", "accelerator"
        OTHER = "other", "other"

    name = models.CharField(max_length=255, unique=True)
    kind = models.CharField(
        "type", max_length=20, choices=Kind.choices, default=Kind.OTHER, blank=True
    )
    # The unit one amount of this class counts: "MB", "GB", "vCPU", "compute unit", ...
    unit = models.CharField(max_length=40, blank=True, default="")
    description = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["id"]
        verbose_name_plural = "resource classes"

    def __str__(self):
        return self.name

    @property
    def is_custom(self):
        return self.name.startswith(CUSTOM_PREFIX)


class Trait(TimestampedModel):
    """A qualitative characteristic: standard (os-traits) or CUSTOM_*."""

    name = models.CharField(max_length=255, unique=True)

    class Meta:
        ordering = ["id"]

    def __str__(self):
        return self.name

    @property
    def is_custom(self):
        return self.name.startswith(CUSTOM_PREFIX)


class Aggregate(models.Model):
    """A group of providers, known to Placement only by its uuid."""

    uuid = models.UUIDField(unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return str(self.uuid)


class ResourceProvider(TimestampedModel):
    """Something that provides inventory; providers form trees."""

    uuid = models.UUIDField(unique=True, default=uuid.uuid4)
    name = models.CharField(max_length=200, unique=True)
    generation = models.IntegerField(default=0)
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="children"
    )
    # Set to the provider itself for a root; never null once saved by a service.
    root = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="tree_members"
    )
    aggregates = models.ManyToManyField(
        Aggregate, through="ResourceProviderAggregate", related_name="resource_providers"
    )
    traits = models.ManyToManyField(
        Trait, through="ResourceProviderTrait", related_name="resource_providers"
    )

    class Meta:
        ordering = ["id"]

    def __str__(self):
        return self.name


class ResourceProviderAggregate(models.Model):
    resource_provider = models.ForeignKey(ResourceProvider, on_delete=models.CASCADE)
    aggregate = models.ForeignKey(Aggregate, on_delete=models.CASCADE)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["resource_provider", "aggregate"], name="uniq_provider_aggregate"
            )
        ]
        indexes = [models.Index(fields=["aggregate", "resource_provider"])]

    def __str__(self):
        return f"{self.resource_provider_id} in {self.aggregate_id}"


class ResourceProviderTrait(models.Model):
    resource_provider = models.ForeignKey(ResourceProvider, on_delete=models.CASCADE)
    trait = models.ForeignKey(Trait, on_delete=models.PROTECT)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["resource_provider", "trait"], name="uniq_provider_trait"
            )
        ]
        indexes = [models.Index(fields=["trait", "resource_provider"])]

    def __str__(self):
        return f"{self.resource_provider_id} has {self.trait_id}"


class Inventory(TimestampedModel):
    """How much of one resource class a provider has, and how it may be used."""

    resource_provider = models.ForeignKey(
        ResourceProvider, on_delete=models.CASCADE, related_name="inventories"
    )
    resource_class = models.ForeignKey(
        ResourceClass, on_delete=models.PROTECT, related_name="inventories"
    )
    total = models.IntegerField()
    reserved = models.IntegerField(default=0)
    min_unit = models.IntegerField(default=1)
    max_unit = models.IntegerField(default=MAX_INT)
    step_size = models.IntegerField(default=1)
    allocation_ratio = models.FloatField(default=1.0)

    class Meta:
        verbose_name_plural = "inventories"
        constraints = [
            models.UniqueConstraint(
                fields=["resource_provider", "resource_class"], name="uniq_inventory_class"
            )
        ]
        indexes = [models.Index(fields=["resource_class", "resource_provider"])]

    def __str__(self):
        return f"{self.resource_class.name} on {self.resource_provider.name}"

    @property
    def capacity(self):
        """The capacity model of this inventory (see providers.capacity)."""
        return Capacity(*(getattr(self, name) for name in CAPACITY_FIELDS))


class SyncStatus(models.TextChoices):
    PENDING = "pending", "pending"
    OK = "ok", "synced"
    # A plugin raised; what the other plugins describe is applied whole.
    PARTIAL = "partial", "synced, a plugin failed"
    # The new tree cannot hold the allocations on the host: nothing applied.
    BLOCKED = "blocked", "blocked"
    FAILED = "failed", "failed"


class SyncedReport(TimestampedModel):
    """What hosts and pools share: a report (its digest and time), the sync's state (the
    digest and plugins it applied last, its status and retries, what it wrote), and the
    operator's switch. The host and pool syncs are one machinery over these fields
    (providers.services.host_sync)."""

    SyncStatus = SyncStatus

    # An operator clears it to take the host (pool) out of scheduling; the sync still runs.
    enabled = models.BooleanField(default=True)
    disabled_reason = models.CharField(max_length=255, blank=True, default="")
    reported_at = models.DateTimeField(null=True, blank=True, db_index=True)
    report_hash = models.CharField(max_length=64, blank=True, default="")

    synced_at = models.DateTimeField(null=True, blank=True)
    synced_hash = models.CharField(max_length=64, blank=True, default="")
    synced_plugins = models.CharField(max_length=500, blank=True, default="")
    sync_status = models.CharField(
        max_length=20, choices=SyncStatus.choices, default=SyncStatus.PENDING
    )
    sync_error = models.TextField(blank=True, default="")
    # Blocked, failed or partial syncs in a row, and when the next retry is due.
    sync_attempts = models.PositiveIntegerField(default=0)
    next_sync_at = models.DateTimeField(null=True, blank=True)
    # {plugin name: error message} of the last sync.
    plugin_errors = models.JSONField(default=dict, blank=True)
    # What the last sync wrote, so that an operator's later change is recognised and kept:
    # {provider uuid: {"name", "classes": {class: {field: value}}, "traits": [...]}}.
    synced_state = models.JSONField(default=dict, blank=True)

    class Meta:
        abstract = True


class ComputeNode(SyncedReport):
    """A host's last report of what it has, and how far the sync turned it into providers.

    The report fields follow a classic compute-node record. ``report_hash`` is a
    digest of the report; the sync records the digest and plugin list it last
    applied, so "changed since the last sync" is a comparison in SQL.
    """

    # An operator's word that the host is down (Nova's forced_down): never scheduled to, and
    # its servers may be evacuated, whatever its reports say.
    forced_down = models.BooleanField(default=False)

    hostname = models.CharField(max_length=200, unique=True)
    provider = models.OneToOneField(
        ResourceProvider,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="compute_node",
    )

    vcpus = models.PositiveIntegerField(default=0)
    memory_mb = models.PositiveBigIntegerField(default=0)
    local_gb = models.PositiveBigIntegerField(default=0)
    cpu_info = models.JSONField(default=dict, blank=True)
    hypervisor_type = models.CharField(max_length=64, blank=True, default="")
    stats = models.JSONField(default=dict, blank=True)
    # {"cells": [{"id": 0, "cpus": [0, 1], "memory_mb": 4096}, ...]} or null.
    numa_topology = models.JSONField(null=True, blank=True)
    # [{"address", "vendor_id", "product_id", "resource_class", "count", "numa_node"}, ...]
    pci_devices = models.JSONField(default=list, blank=True)
    # Host CPU ids (Nova's options of these names), or null when the host did not say.
    cpu_dedicated_set = models.JSONField(null=True, blank=True)
    cpu_shared_set = models.JSONField(null=True, blank=True)
    # The shared-storage pool the host's disks are on ("" local disk): such a host has no
    # DISK_GB of its own (the pool's would be counted twice) and is a member of the pool.
    disk_pool = models.CharField(max_length=150, blank=True, default="")

    class Meta:
        ordering = ["hostname"]
        indexes = [models.Index(fields=["sync_status"])]

    def __str__(self):
        return self.hostname


class ResourcePool(SyncedReport):
    """Resources that are not a compute host's (shared storage, a network's IP addresses),
    reported by the entity they belong to and offered to its members' hosts as a sharing
    provider (``MISC_SHARES_VIA_AGGREGATE``) in one aggregate per pool.

    ``kind`` names the pool plugin that turns the report into inventories; ``members`` are
    host names and aggregate uuids; the hosts whose report names the pool as their
    ``disk_pool`` are members too.
    """

    name = models.CharField(max_length=150, unique=True)
    provider = models.OneToOneField(
        ResourceProvider,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="resource_pool",
    )
    kind = models.CharField(max_length=255)
    # {class: {"total", "reserved", "min_unit", "max_unit", "step_size"}}
    inventories = models.JSONField(default=dict, blank=True)
    members = models.JSONField(default=list, blank=True)
    traits = models.JSONField(default=list, blank=True)
    # The backend's own report (a Ceph pool's stats), for plugins that read it.
    stats = models.JSONField(default=dict, blank=True)
    # The aggregate holding the pool's provider and its members' roots.
    aggregate_uuid = models.UUIDField(default=uuid.uuid4, unique=True)

    class Meta:
        ordering = ["name"]
        indexes = [models.Index(fields=["sync_status"])]

    def __str__(self):
        return self.name


class InventoryChange(models.Model):
    """One change a sync made to an inventory: the drift history of a provider."""

    provider = models.ForeignKey(
        ResourceProvider, on_delete=models.CASCADE, related_name="inventory_changes"
    )
    resource_class = models.ForeignKey(
        ResourceClass, on_delete=models.CASCADE, related_name="inventory_changes"
    )
    compute_node = models.ForeignKey(
        ComputeNode, null=True, blank=True, on_delete=models.SET_NULL, related_name="changes"
    )
    resource_pool = models.ForeignKey(
        "ResourcePool", null=True, blank=True, on_delete=models.SET_NULL, related_name="changes"
    )
    changed_at = models.DateTimeField(db_index=True)
    # None on the "old" side: the class was added; on the "new" side: it was removed.
    old_total = models.IntegerField(null=True, blank=True)
    new_total = models.IntegerField(null=True, blank=True)
    old_reserved = models.IntegerField(null=True, blank=True)
    new_reserved = models.IntegerField(null=True, blank=True)
    old_allocation_ratio = models.FloatField(null=True, blank=True)
    new_allocation_ratio = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["-changed_at", "-id"]
        indexes = [models.Index(fields=["provider", "changed_at"])]

    def __str__(self):
        return (
            f"{self.resource_class_id} on {self.provider_id}: {self.old_total} -> {self.new_total}"
        )


class UsageSample(models.Model):
    """Capacity and usage of one provider and class at one time (for history charts)."""

    provider = models.ForeignKey(
        ResourceProvider, on_delete=models.CASCADE, related_name="usage_samples"
    )
    resource_class = models.ForeignKey(
        ResourceClass, on_delete=models.CASCADE, related_name="usage_samples"
    )
    sampled_at = models.DateTimeField(db_index=True)
    total = models.IntegerField()
    capacity = models.BigIntegerField()
    used = models.BigIntegerField()

    class Meta:
        ordering = ["sampled_at", "id"]
        indexes = [models.Index(fields=["provider", "sampled_at"])]

    def __str__(self):
        return f"{self.resource_class_id} on {self.provider_id} at {self.sampled_at}"


class DeviceUnit(models.Model):
    """One assignable unit of a physical device, as its host reports it: a VF of a PF, a
    vGPU slot of a GPU, or a whole plain PCI device. It lives on the provider of its physical
    device (whose inventory of ``resource_class`` counts these units); which consumer holds
    it is the allocations app's record (its device assignments)."""

    provider = models.ForeignKey(
        ResourceProvider, on_delete=models.CASCADE, related_name="device_units"
    )
    resource_class = models.ForeignKey(
        ResourceClass, on_delete=models.PROTECT, related_name="device_units"
    )
    # The VF's or device's PCI address, or a vGPU slot's id.
    address = models.CharField(max_length=255)
    # The physical device's address (a VF's PF, a vGPU's GPU); blank for a plain device.
    parent_address = models.CharField(max_length=255, blank=True, default="")
    mdev_type = models.CharField(max_length=255, blank=True, default="")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["provider", "address"], name="uniq_device_unit")
        ]
        indexes = [models.Index(fields=["provider", "resource_class", "address"])]

    def __str__(self):
        return f"{self.resource_class.name} {self.address} on {self.provider.name}"
