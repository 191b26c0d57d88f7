"""Creating a whole provider tree in one write: a root, the providers under it (at any depth),
their inventories and traits.

The host sync's first write of a new host. The rules are those of the one-by-one services
(``resource_provider_create``, ``inventories_replace``, ``provider_traits_set``): names and
uuids unique, every inventory record validated and capacity-checked as ``PUT
.../inventories`` does, only existing traits and classes. What differs is the cost: the
providers are new, so there is no generation to check and no row of theirs another writer
could hold, and the whole tree is a handful of bulk statements instead of a dozen per
provider. Nothing is written when any part is refused.
"""

import uuid as uuidlib
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field

from django.db import IntegrityError, connection, transaction

from placementsite.core.exceptions import DuplicateName, InvalidRequest

from ..capacity import Capacity
from ..models import Inventory, ResourceProvider, ResourceProviderTrait
from .inventories import check_capacity, classes_named, inventory_checked
from .resource_providers import duplicate_provider
from .traits import trait_ids_held


@dataclass(frozen=True)
class NewProvider:
    """One provider of the tree: its name, inventories by class, trait names, and the name
    of its parent among the tree's providers (None: directly under the root)."""

    name: str
    inventories: Mapping[str, Capacity] = field(default_factory=dict)
    traits: tuple[str, ...] = ()
    parent: str | None = None
    uuid: str | None = None  # None: a new one


def provider_tree_create(
    *,
    root: NewProvider,
    children: Sequence[NewProvider] = (),
    allow_reserved_equal_total: bool,
    class_ids: Mapping[str, int] | None = None,
) -> list[ResourceProvider]:
    """Create ``root`` and ``children`` under it (each under the root or under the child its
    ``parent`` names, listed before it), with their inventories and traits, in one
    transaction.

    Returns the saved providers, in the order given, root first. A provider that was written
    to has generation 1 (inventory and traits are its first write), one that was not 0, as if
    created alone. ``class_ids``: the ids of classes the caller knows exist (the host sync
    checked them), not read again (the traits always are: held until the transaction ends,
    the foreign keys being checked only at commit). A name or uuid in use is a 409
    ``placement.duplicate_name``, an invalid inventory, an unknown parent or an unknown
    class or trait a 400; nothing is written then.
    """
    specs = [root, *children]
    rows = [
        ResourceProvider(
            uuid=spec.uuid or uuidlib.uuid4(),
            name=spec.name,
            generation=1 if (spec.inventories or spec.traits) else 0,
        )
        for spec in specs
    ]
    records = []
    for spec, row in zip(specs, rows, strict=True):
        fields = {name: inventory_checked(inventory=inv) for name, inv in spec.inventories.items()}
        for name, values in fields.items():
            check_capacity(
                provider=row,
                resource_class=name,
                inventory=values,
                allow_reserved_equal_total=allow_reserved_equal_total,
                action="update",
            )
        records.append(fields)
    levels = _levels(specs, rows)
    try:
        with transaction.atomic():
            _insert_tree(levels)
            _insert_inventories(rows, records, class_ids or {})
            _insert_traits(rows, specs)
    except IntegrityError:
        # Only the providers' unique name and uuid can collide: every other row is new.
        raise _first_duplicate(rows) from None
    return rows


def _levels(
    specs: Sequence[NewProvider], rows: Sequence[ResourceProvider]
) -> list[list[ResourceProvider]]:
    """The rows by depth (the root alone first), each child's parent and root set."""
    root = rows[0]
    by_name = {root.name: root}
    depth = {root.name: 0}
    levels = [[root]]
    for spec, row in zip(specs[1:], rows[1:], strict=True):
        parent_name = root.name if spec.parent is None else spec.parent
        parent = by_name.get(parent_name)
        if parent is None:
            raise InvalidRequest(
                f"Provider {spec.name}: its parent {parent_name} is not listed before it"
            )
        row.parent = parent
        row.root = root
        by_name[row.name] = row
        depth[row.name] = depth[parent_name] + 1
        while len(levels) <= depth[row.name]:
            levels.append([])
        levels[depth[row.name]].append(row)
    return levels


def _insert_tree(levels: Sequence[Sequence[ResourceProvider]]) -> None:
    if connection.vendor == "postgresql":
        _insert_tree_at_once(levels)
        return
    root = levels[0][0]
    ResourceProvider.objects.bulk_create([root])
    ResourceProvider.objects.filter(pk=root.pk).update(root=root.pk)
    root.root = root
    for level in levels[1:]:
        for row in level:  # the parent's id is known now that its level is written
            row.parent_id = row.parent.pk
            row.root_id = root.pk
        ResourceProvider.objects.bulk_create(level)


def _insert_tree_at_once(levels: Sequence[Sequence[ResourceProvider]]) -> None:
    """The whole tree in one insert, its ids taken from the sequence first (level by level:
    a parent's id below its children's, as when written level by level); the root names
    itself as root in the same row (the foreign keys are checked at commit)."""
    rows = [row for level in levels for row in level]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
            [ResourceProvider._meta.db_table, len(rows)],
        )
        for row, (pk,) in zip(rows, cursor.fetchall(), strict=True):
            row.pk = pk
    root = rows[0]
    root.root = root
    for row in rows[1:]:
        row.parent_id = row.parent.pk
        row.root_id = root.pk
    ResourceProvider.objects.bulk_create(rows)


def _insert_inventories(
    rows: Sequence[ResourceProvider],
    records: Sequence[Mapping[str, Capacity]],
    known: Mapping[str, int],
) -> None:
    ids = dict(known)
    unknown = {name for fields in records for name in fields} - set(ids)
    if unknown:
        ids.update((n, rc.id) for n, rc in classes_named(provider=rows[0], names=unknown).items())
    Inventory.objects.bulk_create(
        Inventory(resource_provider=row, resource_class_id=ids[name], **asdict(values))
        for row, fields in zip(rows, records, strict=True)
        for name, values in fields.items()
    )


def _insert_traits(rows: Sequence[ResourceProvider], specs: Sequence[NewProvider]) -> None:
    names = sorted({name for spec in specs for name in spec.traits})
    found = trait_ids_held(names=names)
    missing = [name for name in names if name not in found]
    if missing:
        raise InvalidRequest(f"No such trait {', '.join(missing)}")
    ResourceProviderTrait.objects.bulk_create(
        ResourceProviderTrait(resource_provider=row, trait_id=found[name])
        for row, spec in zip(rows, specs, strict=True)
        for name in sorted(set(spec.traits))
    )


def _first_duplicate(rows: Sequence[ResourceProvider]) -> DuplicateName:
    for row in rows:
        taken = ResourceProvider.objects.filter(name=row.name).exists()
        if taken or ResourceProvider.objects.filter(uuid=row.uuid).exists():
            return duplicate_provider(name=row.name, uuid=str(row.uuid))
    return duplicate_provider(name=rows[0].name, uuid=None)
