"""Creating a whole provider tree in one write: a root, the providers under it (at any depth),
their inventories and traits.

The host sync's first write of a new host, and of many new hosts at once
(:func:`provider_tree_checked` for each tree, then one :func:`provider_trees_write`). The
rules are those of the one-by-one services (``resource_provider_create``,
``inventories_replace``, ``provider_traits_set``): names and uuids unique, every inventory
record validated and capacity-checked as ``PUT .../inventories`` does, only existing traits
and classes. What differs is the cost: the providers are new, so there is no generation to
check and no row of theirs another writer could hold, and the whole tree (or every tree of a
write) is a handful of bulk statements instead of a dozen per provider. Nothing is written
when any part is refused.
"""

import uuid as uuidlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from placementsite.core.db import rows_insert
from placementsite.core.exceptions import DuplicateName, InvalidRequest

from ..capacity import CAPACITY_FIELDS, Capacity
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


@dataclass
class CheckedTree:
    """A new tree whose every part holds to the rules a write checks before it writes: its
    provider rows (not saved, root first, each child's parent set), their checked
    inventories and the specs they came from. Written by :func:`provider_trees_write`."""

    specs: Sequence[NewProvider]
    rows: list[ResourceProvider]
    records: list[dict[str, Capacity]]
    levels: list[list[ResourceProvider]]


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
    tree = provider_tree_checked(
        specs=[root, *children], allow_reserved_equal_total=allow_reserved_equal_total
    )
    provider_trees_write(trees=[tree], class_ids=class_ids)
    return tree.rows


def provider_tree_checked(
    *, specs: Sequence[NewProvider], allow_reserved_equal_total: bool
) -> CheckedTree:
    """The tree of ``specs`` (the root first) checked as :func:`provider_tree_create` checks
    it before writing (an invalid inventory, an unknown parent: a 400), nothing read or
    written."""
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
    return CheckedTree(specs, rows, records, _levels(specs, rows))


def provider_trees_write(
    *, trees: Sequence[CheckedTree], class_ids: Mapping[str, int] | None = None
) -> None:
    """Write the checked ``trees`` together, in one savepoint: the same few statements for
    any number of trees (their providers, inventories and traits, each in one insert), and
    all of them or none (a name or uuid in use: the 409 of the first provider that collides;
    an unknown class or trait: a 400). The rows get their ids."""
    rows = [row for tree in trees for row in tree.rows]
    try:
        with transaction.atomic():
            _insert_trees([tree.levels for tree in trees])
            _insert_inventories(
                rows, [record for tree in trees for record in tree.records], class_ids or {}
            )
            _insert_traits(rows, [spec for tree in trees for spec in tree.specs])
    except IntegrityError:
        # Only the providers' unique name and uuid can collide: every other row is new.
        raise _first_duplicate(rows) from None


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


def _insert_trees(trees: Sequence[Sequence[Sequence[ResourceProvider]]]) -> None:
    """Each tree's rows (given level by level, the root alone first) inserted."""
    if connection.vendor == "postgresql":
        _insert_trees_at_once(trees)
        return
    for levels in trees:
        root = levels[0][0]
        ResourceProvider.objects.bulk_create([root])
        ResourceProvider.objects.filter(pk=root.pk).update(root=root.pk)
        root.root = root
        for level in levels[1:]:
            for row in level:  # the parent's id is known now that its level is written
                row.parent_id = row.parent.pk
                row.root_id = root.pk
            ResourceProvider.objects.bulk_create(level)


def _insert_trees_at_once(trees: Sequence[Sequence[Sequence[ResourceProvider]]]) -> None:
    """Every tree in one insert, the ids taken from the sequence first (tree by tree, level
    by level: a parent's id below its children's, as when written level by level); a root
    names itself as root in the same row (the foreign keys are checked at commit)."""
    ordered = [[row for level in levels for row in level] for levels in trees]
    rows = [row for tree in ordered for row in tree]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
            [ResourceProvider._meta.db_table, len(rows)],
        )
        for row, (pk,) in zip(rows, cursor.fetchall(), strict=True):
            row.pk = pk
    for root, *children in ordered:
        root.root = root
        for row in children:
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
    now = timezone.now()
    rows_insert(
        Inventory,
        ("resource_provider", "resource_class", *CAPACITY_FIELDS, "created_at", "updated_at"),
        [
            (row.pk, ids[name], *_capacity_values(values), now, now)
            for row, fields in zip(rows, records, strict=True)
            for name, values in fields.items()
        ],
    )


_capacity_values = attrgetter(*CAPACITY_FIELDS)


def _insert_traits(rows: Sequence[ResourceProvider], specs: Sequence[NewProvider]) -> None:
    names = sorted({name for spec in specs for name in spec.traits})
    found = trait_ids_held(names=names)
    missing = [name for name in names if name not in found]
    if missing:
        raise InvalidRequest(f"No such trait {', '.join(missing)}")
    rows_insert(
        ResourceProviderTrait,
        ("resource_provider", "trait"),
        [
            (row.pk, found[name])
            for row, spec in zip(rows, specs, strict=True)
            for name in sorted(set(spec.traits))
        ],
    )


def _first_duplicate(rows: Sequence[ResourceProvider]) -> DuplicateName:
    for row in rows:
        taken = ResourceProvider.objects.filter(name=row.name).exists()
        if taken or ResourceProvider.objects.filter(uuid=row.uuid).exists():
            return duplicate_provider(name=row.name, uuid=str(row.uuid))
    return duplicate_provider(name=rows[0].name, uuid=None)
