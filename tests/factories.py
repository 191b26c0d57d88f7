"""Test data built straight in the database (the API under test is not used)."""

import uuid as uuidlib

from allocations.models import Allocation, Consumer, ConsumerType, Project, User
from allocations.services.usage import usage_apply, usage_deltas
from providers.models import Aggregate, Inventory, ResourceClass, ResourceProvider, Trait

_counter = iter(range(1, 10**9))


def resource_class(name):
    return ResourceClass.objects.get_or_create(name=name)[0]


def trait(name):
    return Trait.objects.get_or_create(name=name)[0]


def make_provider(name=None, *, uuid=None, parent=None, inventories=None, traits=(), aggregates=()):
    """A provider; ``inventories`` maps class names to a total or a dict of fields."""
    provider = ResourceProvider.objects.create(
        name=name or f"rp-{next(_counter)}",
        uuid=uuid or uuidlib.uuid4(),
        parent=parent,
        root=parent.root if parent else None,
    )
    if parent is None:
        provider.root = provider
        provider.save(update_fields=["root"])
    for rc_name, spec in (inventories or {}).items():
        fields = {"total": spec} if isinstance(spec, int) else dict(spec)
        Inventory.objects.create(
            resource_provider=provider, resource_class=resource_class(rc_name), **fields
        )
    for name_ in traits:
        provider.traits.add(trait(name_))
    for agg in aggregates:
        provider.aggregates.add(Aggregate.objects.get_or_create(uuid=agg)[0])
    return provider


def make_consumer(
    *, uuid=None, project="project-a", user="user-a", consumer_type=None, generation=1
):
    return Consumer.objects.create(
        uuid=uuid or uuidlib.uuid4(),
        project=Project.objects.get_or_create(external_id=project)[0],
        user=User.objects.get_or_create(external_id=user)[0],
        consumer_type=(
            ConsumerType.objects.get_or_create(name=consumer_type)[0] if consumer_type else None
        ),
        generation=generation,
    )


def make_allocation(provider, consumer, resources):
    """``resources`` maps class names to amounts; the usage rows follow, as the allocation
    service keeps them."""
    made = [
        Allocation.objects.create(
            resource_provider=provider,
            consumer=consumer,
            resource_class=resource_class(rc_name),
            used=used,
        )
        for rc_name, used in resources.items()
    ]
    usage_apply(
        deltas=usage_deltas(
            rows=[(a.resource_provider_id, a.resource_class_id, a.used) for a in made]
        )
    )
    return made


def delete_allocations(allocations):
    """Delete ``allocations`` (a queryset) straight in the database, the usage rows brought
    down by what they held, as the allocation service keeps them."""
    held = list(allocations.values_list("resource_provider_id", "resource_class_id", "used"))
    allocations.delete()
    usage_apply(deltas=usage_deltas(rows=held, sign=-1))
