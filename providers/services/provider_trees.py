"""Creating a whole provider tree in one write: a root, its children, their inventories and
traits.

The host sync's first write of a new host. The rules are those of the one-by-one services
(``resource_provider_create``, ``inventories_replace``, ``provider_traits_set``): names and
uuids unique, every inventory record validated and capacity-checked as ``PUT
.../inventories`` does, only existing traits and classes. What differs is the cost: the
providers are new, so there is no generation to check and no row of theirs another writer
could hold, and the whole tree is a handful of bulk statements instead of a dozen per
provider. Nothing is written when any part is refused.
"""

import uuid as uuidlib
from dataclasses import dataclass, field

from django.db import IntegrityError, transaction

from placementsite.core.exceptions import InvalidRequest

from ..models import Inventory, ResourceProvider, ResourceProviderTrait
from .inventories import check_capacity, classes_named, inventory_fields
from .resource_providers import duplicate_provider
from .traits import trait_ids_held


@dataclass(frozen=True)
class NewProvider:
    """One provider of the tree: its name, inventory records (``{class: {"total": ...}}``, as
    ``PUT .../inventories`` takes them) and trait names."""

    name: str
    inventories: dict = field(default_factory=dict)
    traits: tuple = ()


def provider_tree_create(*, root, children=(), microversion):
    """Create ``root`` (a NewProvider) and ``children`` directly under it, with their
    inventories and traits, in one transaction.

    Returns the saved providers, root first. A provider that was written to has generation
    1 (inventory and traits are its first write), one that was not 0, as if created alone.
    A name or uuid in use is a 409 ``placement.duplicate_name``, an invalid inventory record
    or an unknown class or trait a 400; nothing is written then.
    """
    specs = [root, *children]
    rows = [
        ResourceProvider(
            uuid=uuidlib.uuid4(),
            name=spec.name,
            generation=1 if (spec.inventories or spec.traits) else 0,
        )
        for spec in specs
    ]
    records = []
    for spec, row in zip(specs, rows, strict=True):
        fields = {name: inventory_fields(record) for name, record in spec.inventories.items()}
        for name, values in fields.items():
            check_capacity(row, name, values, microversion, "update")
        records.append(fields)
    try:
        with transaction.atomic():
            _insert_tree(rows)
            _insert_inventories(rows, records)
            _insert_traits(rows, specs)
    except IntegrityError:
        # Only the providers' unique name and uuid can collide: every other row is new.
        raise _first_duplicate(rows) from None
    return rows


def _insert_tree(rows):
    root, children = rows[0], rows[1:]
    ResourceProvider.objects.bulk_create([root])
    root.root = root
    ResourceProvider.objects.filter(pk=root.pk).update(root=root.pk)
    for child in children:
        child.parent = root
        child.root = root
    ResourceProvider.objects.bulk_create(children)


def _insert_inventories(rows, records):
    classes = classes_named(rows[0], {name for fields in records for name in fields})
    Inventory.objects.bulk_create(
        Inventory(resource_provider=row, resource_class=classes[name], **values)
        for row, fields in zip(rows, records, strict=True)
        for name, values in fields.items()
    )


def _insert_traits(rows, specs):
    names = sorted({name for spec in specs for name in spec.traits})
    found = trait_ids_held(names)
    missing = [name for name in names if name not in found]
    if missing:
        raise InvalidRequest(f"No such trait {', '.join(missing)}")
    ResourceProviderTrait.objects.bulk_create(
        ResourceProviderTrait(resource_provider=row, trait_id=found[name])
        for row, spec in zip(rows, specs, strict=True)
        for name in sorted(set(spec.traits))
    )


def _first_duplicate(rows):
    for row in rows:
        taken = ResourceProvider.objects.filter(name=row.name).exists()
        if taken or ResourceProvider.objects.filter(uuid=row.uuid).exists():
            return duplicate_provider(name=row.name, uuid=str(row.uuid))
    return duplicate_provider(name=rows[0].name, uuid=None)
