"""Projects, users, consumer types, consumers and their allocations."""

from django.db import models

from providers.models import (
    DeviceUnit,
    Inventory,
    ResourceClass,
    ResourceProvider,
    TimestampedModel,
)


class Project(TimestampedModel):
    external_id = models.CharField(max_length=255, unique=True)

    def __str__(self):
        return self.external_id


class User(TimestampedModel):
    external_id = models.CharField(max_length=255, unique=True)

    def __str__(self):
        return self.external_id


class ConsumerType(TimestampedModel):
    name = models.CharField(max_length=255, unique=True)

    def __str__(self):
        return self.name


class Consumer(TimestampedModel):
    """Something that consumes resources: an instance, a migration, a port."""

    uuid = models.UUIDField(unique=True)
    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="consumers")
    user = models.ForeignKey(User, on_delete=models.PROTECT, related_name="consumers")
    consumer_type = models.ForeignKey(
        ConsumerType, null=True, blank=True, on_delete=models.PROTECT, related_name="consumers"
    )
    generation = models.IntegerField(default=0)

    class Meta:
        indexes = [models.Index(fields=["project", "user"])]

    def __str__(self):
        return str(self.uuid)


class Allocation(models.Model):
    """``used`` units of one resource class of one provider, held by a consumer."""

    resource_provider = models.ForeignKey(
        ResourceProvider, on_delete=models.PROTECT, related_name="allocations"
    )
    consumer = models.ForeignKey(Consumer, on_delete=models.CASCADE, related_name="allocations")
    resource_class = models.ForeignKey(
        ResourceClass, on_delete=models.PROTECT, related_name="allocations"
    )
    used = models.IntegerField()
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True, null=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["consumer", "resource_provider", "resource_class"],
                name="uniq_allocation",
            )
        ]
        indexes = [models.Index(fields=["resource_provider", "resource_class"])]

    def __str__(self):
        return f"{self.used} {self.resource_class} on {self.resource_provider} for {self.consumer}"


class ProviderUsage(models.Model):
    """``used``: the units of one resource class allocated on one provider, the sum of its
    :class:`Allocation` rows, kept so that reads (candidates, capacity, the scheduler, usages,
    the dashboard) look usage up instead of summing the allocations on every request.

    Written only by the allocation service (:mod:`allocations.services.usage`), in the
    transaction that writes the allocations and under their providers' row locks, as one
    bulk delta per write. The invariant, for every provider and class: ``used`` equals the
    sum of the allocations, where a pair without a row sums to 0 and a row may stay at 0
    after its allocations are gone (readers take 0 and no row alike). ``placement_audit``
    reports drift and repairs it. Deleting a provider or class deletes its rows: neither can
    be deleted while it holds allocations, so only rows at 0 go."""

    resource_provider = models.ForeignKey(
        ResourceProvider, on_delete=models.CASCADE, related_name="usage_rows"
    )
    resource_class = models.ForeignKey(
        ResourceClass, on_delete=models.CASCADE, related_name="usage_rows"
    )
    used = models.BigIntegerField(default=0)
    # The inventory of the same provider and class (no column, no constraint: usage may
    # outlive an inventory): lets a read of inventories LEFT JOIN their usage row on
    # (provider, class) directly (allocations.selectors.usage.usage_joined_rows).
    inventory = models.ForeignObject(
        Inventory,
        on_delete=models.DO_NOTHING,
        from_fields=["resource_provider", "resource_class"],
        to_fields=["resource_provider", "resource_class"],
        related_name="usage_row",
    )

    class Meta:
        constraints = [
            # Also the index that joins from an inventory row (provider, class) to its usage.
            models.UniqueConstraint(
                fields=["resource_provider", "resource_class"], name="uniq_provider_usage"
            )
        ]

    def __str__(self):
        return f"{self.used} {self.resource_class} on {self.resource_provider}"


class DeviceAssignment(models.Model):
    """Which consumer holds a device unit. Written only by the allocation service, in the
    transaction that writes the consumer's allocations (the unit's provider row locked), so
    that a consumer's units of a (provider, class) never outnumber its allocation there.
    One row per unit: a unit is never assigned twice."""

    unit = models.OneToOneField(DeviceUnit, on_delete=models.PROTECT, related_name="assignment")
    consumer = models.ForeignKey(
        Consumer, on_delete=models.CASCADE, related_name="device_assignments"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return f"{self.unit_id} for {self.consumer}"
