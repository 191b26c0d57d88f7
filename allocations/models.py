"""Projects, users, consumer types, consumers and their allocations."""

from django.db import models

from providers.models import DeviceUnit, ResourceClass, ResourceProvider, TimestampedModel


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
