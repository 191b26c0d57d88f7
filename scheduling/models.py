"""Flavors (what an instance asks for), servers (instances placed by the scheduler) and the
scheduling side of aggregates (names, availability zones, metadata), as Nova keeps them."""

import uuid

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
    availability_zone = models.CharField(max_length=255, blank=True, default="")
    scheduler_hints = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        indexes = [models.Index(fields=["project_id"])]

    def __str__(self):
        return f"{self.name} ({self.uuid})"


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
