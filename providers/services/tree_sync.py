"""Reading a provider tree as it is on record, and applying a :class:`~providers.tree_diff.
TreePlan` to it in one transaction.

:func:`provider_tree_recorded` locks the tree's providers (``FOR UPDATE``, in id order: the
allocation service's order, so a sync and a claim queue rather than deadlock) and reads their
inventories and traits, and the consumers holding anything on them (through
:mod:`providers.allocations_port`). Holding those locks, nothing can be allocated on the tree
until the plan is applied, so the plan's view of the allocations stays true.

:func:`provider_tree_apply` writes the plan through the same services as the Placement API:
``resource_provider_create``, ``resource_provider_update`` (``allow_reparenting``), then the
inventories (``inventories_replace_held``: every changed provider's at once, their generations
bumped in one statement) or, when consumers' allocations move, the reshaper
(``allocations_reshape``, through the port) with every changed inventory at once, then
``provider_traits_set`` and ``resource_provider_delete``, children first. A tree never seen
before is written whole by ``provider_tree_create``; several of them at once by
:func:`new_trees_apply`, each checked first by :func:`new_tree_checked`. It needs the
caller's transaction (the one in which ``provider_tree_recorded`` locked the tree) and runs
in a savepoint of it: the plan is applied whole or, when any write is refused, not at all.
"""

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.db import transaction

from ..allocations_port import port
from ..capacity import CAPACITY_FIELDS, Capacity
from ..models import Inventory, ResourceProvider, ResourceProviderTrait
from ..tree_diff import RecordedProvider, RecordedTree, TreePlan
from .inventories import ProviderInventories, inventories_replace_held
from .provider_trees import (
    CheckedTree,
    NewProvider,
    provider_tree_checked,
    provider_tree_create,
    provider_trees_write,
)
from .resource_providers import (
    resource_provider_create,
    resource_provider_delete,
    resource_provider_update,
)
from .traits import provider_traits_set


def provider_tree_recorded(
    *, root: ResourceProvider | None, state: Mapping[str, Mapping[str, Any]]
) -> RecordedTree:
    """The tree under ``root`` (None: there is none yet) with its rows locked, its
    inventories, traits and the consumers holding anything on it. Needs a transaction."""
    if root is None:
        return RecordedTree(root=None, members={}, state=state, held=[])
    rows = list(
        ResourceProvider.objects.select_for_update()
        .filter(root_id=root.root_id or root.id)
        .order_by("id")
        .values_list("id", "uuid", "name", "parent_id", "generation")
    )
    ids = [row[0] for row in rows]
    inventories: defaultdict[int, dict[str, Capacity]] = defaultdict(dict)
    for provider_id, name, *fields in Inventory.objects.filter(
        resource_provider_id__in=ids
    ).values_list("resource_provider_id", "resource_class__name", *CAPACITY_FIELDS):
        inventories[provider_id][name] = Capacity(*fields)
    traits: defaultdict[int, set[str]] = defaultdict(set)
    for provider_id, name in ResourceProviderTrait.objects.filter(
        resource_provider_id__in=ids
    ).values_list("resource_provider_id", "trait__name"):
        traits[provider_id].add(name)
    members = {
        pk: RecordedProvider(
            pk, str(uuid), name, parent_id, generation, inventories[pk], frozenset(traits[pk])
        )
        for pk, uuid, name, parent_id, generation in rows
    }
    return RecordedTree(
        root=members.get(root.id),
        members=members,
        state=state,
        held=port().consumers_holding(provider_ids=ids),
    )


def provider_tree_apply(
    *,
    plan: TreePlan,
    class_ids: Mapping[str, int] | None = None,
) -> dict[str, int]:
    """Apply ``plan`` (never a blocked one), all of it or nothing (see the module docstring).
    ``class_ids``: the ids of resource classes the caller knows, not read again for a new
    tree. Returns the ids of the providers it created, by uuid."""
    if plan.blocked:
        raise ValueError("a blocked plan is not applied")
    if plan.creates and plan.creates[0].parent is None:  # whole or nothing on its own
        return _create_whole(plan, class_ids or {})
    with transaction.atomic():
        created: dict[str, int] = {}
        for spec in plan.creates:
            uuid = plan.uuids[spec.key]
            created[uuid] = resource_provider_create(
                name=spec.name, uuid=uuid, parent_uuid=plan.uuids[spec.parent]
            ).id
        for move in plan.moves:
            resource_provider_update(
                uuid=move.uuid, name=move.name, parent_uuid=move.parent_uuid, allow_reparenting=True
            )
        _write_inventories(plan)
        generations = _generations(plan.traits)
        for uuid, traits in plan.traits.items():
            provider_traits_set(
                provider_uuid=uuid, traits=sorted(traits), generation=generations[uuid]
            )
        for provider in plan.deletes:
            resource_provider_delete(uuid=provider.uuid)
        return created


def _create_whole(plan: TreePlan, class_ids: Mapping[str, int]) -> dict[str, int]:
    """A tree none of whose providers exists: one ``provider_tree_create``."""
    root, *children = _new_providers(plan)
    rows = provider_tree_create(
        root=root,
        children=children,
        allow_reserved_equal_total=True,
        class_ids=class_ids,
    )
    return {str(row.uuid): row.id for row in rows}


def new_tree_checked(*, plan: TreePlan) -> CheckedTree:
    """The new tree of ``plan`` (one whose every provider is created, the root first) checked
    as :func:`provider_tree_apply` checks it before writing (an invalid inventory: a 400),
    for :func:`new_trees_apply`; nothing read or written."""
    if plan.blocked or not plan.creates or plan.creates[0].parent is not None:
        raise ValueError("only a new tree is checked alone")
    return provider_tree_checked(specs=_new_providers(plan), allow_reserved_equal_total=True)


def new_trees_apply(
    *, trees: Sequence[CheckedTree], class_ids: Mapping[str, int]
) -> list[dict[str, int]]:
    """Several new trees (each checked by :func:`new_tree_checked`) written together, all of
    them or none: a few statements for any number of trees. Returns each tree's provider ids
    by uuid."""
    provider_trees_write(trees=trees, class_ids=class_ids)
    return [{str(row.uuid): row.id for row in tree.rows} for tree in trees]


def _new_providers(plan: TreePlan) -> list[NewProvider]:
    return [
        NewProvider(
            name=spec.name,
            inventories=plan.inventories.get(plan.uuids[spec.key], {}),
            traits=tuple(sorted(plan.traits.get(plan.uuids[spec.key], ()))),
            parent=None if spec.parent in (None, "") else _name_of(plan, spec.parent),
            uuid=plan.uuids[spec.key],
        )
        for spec in plan.creates
    ]


def _name_of(plan: TreePlan, key: str) -> str:
    return next(spec.name for spec in plan.creates if spec.key == key)


def _write_inventories(plan: TreePlan) -> None:
    if plan.holdings:
        # Providers change shape under allocations: the reshaper moves them in the same write.
        generations = _generations(plan.inventories)
        port().holdings_move(
            inventories={
                uuid: ProviderInventories(generations[uuid], inventories)
                for uuid, inventories in plan.inventories.items()
            },
            consumers=plan.holdings,
        )
        return
    if plan.inventories:  # the tree's rows are locked: their generations are the sync's
        inventories_replace_held(inventories=plan.inventories, allow_reserved_equal_total=True)


def _generations(uuids: Iterable[str]) -> dict[str, int]:
    """The providers' generations now (their rows are locked: nobody else moves them)."""
    return {
        str(uuid): generation
        for uuid, generation in ResourceProvider.objects.filter(uuid__in=list(uuids)).values_list(
            "uuid", "generation"
        )
    }
