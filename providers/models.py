"""Resource classes, traits, resource providers, inventories and aggregates."""

import re
import uuid

from django.db import models

from .capacity import CAPACITY_FIELDS, Capacity

CUSTOM_PREFIX = "CUSTOM_"
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
    """A kind of resource: standard (os-resource-classes) or CUSTOM_*."""

    name = models.CharField(max_length=255, unique=True)

    class Meta:
        ordering = ["id"]

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
