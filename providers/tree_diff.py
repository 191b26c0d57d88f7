"""Desired tree against the tree on record: one pure function, :func:`tree_diff`.

The host sync (and any other reporter of a provider tree) reads the record, asks the plugins
for the tree they want, and calls :func:`tree_diff`, which answers a :class:`TreePlan`: the
providers to create, move and delete, each provider's whole new inventory and traits, and, when
a provider or one of its classes goes away while allocated, where each consumer's units go
(:mod:`providers.allocation_moves`). The plan is applied in one transaction
(``providers.services.tree_sync``), or, when it is blocked, not at all. Nothing here reads or
writes the database, so the rules can be tested, and reasoned about, on plain values.

The rules, as Nova's report client (``update_from_provider_tree``) applies a driver's tree:

- a desired provider is the one synced for its key before (``state``), else the tree's
  provider of its name, else a new one; recorded providers the sync made that no longer have
  a key are deleted, children first; providers others added to the tree are left alone;
- an inventory's ``reserved`` and ``allocation_ratio`` that differ from what the sync proposed
  last time were set by an operator and are kept, as are classes and traits an operator added;
- allocations on a class that stays where it is stay; a host that would shrink below them is
  blocked; allocations on a provider or class that goes away move to the new tree's providers
  of that class (each consumer's totals per class unchanged), or the host is blocked;
- when a plugin raised, what it contributed last time is kept as it is (``kept_plugins``):
  the others' resources are applied whole, its own neither removed nor changed.
"""

import uuid as uuidlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from .allocation_moves import Displaced, Placement, place_displaced
from .allocations_port import ConsumerHoldings
from .capacity import Capacity

OPERATOR_FIELDS = ("reserved", "allocation_ratio")


class DesiredProvider(NamedTuple):
    """A provider as the plugins want it. ``parent`` is its parent's key ("" the root's);
    None for the root. ``owners`` names the plugin that gave each class."""

    key: str
    name: str
    parent: str | None
    inventories: Mapping[str, Capacity]
    traits: frozenset
    owners: Mapping[str, str] = {}


class RecordedProvider(NamedTuple):
    """A provider of the tree on record, with its inventories and traits."""

    id: int
    uuid: str
    name: str
    parent_id: int | None
    generation: int
    inventories: Mapping[str, Capacity]
    traits: frozenset


class RecordedTree(NamedTuple):
    """The record: the root (None for a host never synced), every provider of its tree by id,
    what the sync wrote last per key (``{key: {"uuid", "name", "classes", "traits"}}``), and
    every consumer holding anything on the tree."""

    root: RecordedProvider | None
    members: Mapping[int, RecordedProvider]
    state: Mapping[str, Mapping]
    held: Sequence[ConsumerHoldings] = ()


class ProviderMove(NamedTuple):
    """A recorded provider to rename or hang under another parent."""

    uuid: str
    name: str
    parent_uuid: str


@dataclass
class TreePlan:
    """What applying the desired tree takes (see the module docstring). Provider uuids name
    every provider, the new ones included (assigned here)."""

    uuids: dict = field(default_factory=dict)  # key -> uuid, for every desired provider
    creates: list = field(default_factory=list)  # DesiredProvider, each after its parent
    moves: list = field(default_factory=list)  # ProviderMove, parents first
    inventories: dict = field(default_factory=dict)  # uuid -> {class: Capacity}, changed ones
    old_inventories: dict = field(default_factory=dict)  # uuid -> {class: Capacity} before
    traits: dict = field(default_factory=dict)  # uuid -> frozenset, changed ones
    deletes: list = field(default_factory=list)  # RecordedProvider, children first
    holdings: list = field(default_factory=list)  # ConsumerHoldings whose allocations move
    blocked: list = field(default_factory=list)  # why nothing can be applied
    state: dict = field(default_factory=dict)  # what to remember once applied

    @property
    def changes(self):
        """How many things applying the plan changes: providers created, moved and deleted,
        inventory classes added, changed or removed, trait sets, consumers reshaped."""
        classes = 0
        for uuid, wanted in self.inventories.items():
            old = self.old_inventories.get(uuid, {})
            classes += sum(1 for c in {*old, *wanted} if old.get(c) != wanted.get(c))
        return (
            len(self.creates)
            + len(self.moves)
            + len(self.deletes)
            + classes
            + len(self.traits)
            + len(self.holdings)
        )

    @property
    def empty(self):
        return not (
            self.creates
            or self.moves
            or self.inventories
            or self.traits
            or self.deletes
            or self.holdings
        )


def tree_diff(
    *,
    desired: Sequence[DesiredProvider],
    recorded: RecordedTree,
    kept_plugins: frozenset = frozenset(),
    new_uuid: Callable[[], str] = lambda: str(uuidlib.uuid4()),
) -> TreePlan:
    """The plan that turns ``recorded`` into ``desired`` (the root first, each provider after
    its parent). See the module docstring for the rules."""
    desired = _with_kept_contributions(list(desired), recorded, kept_plugins)
    plan = TreePlan()
    matched = _match(desired, recorded)
    for spec in desired:
        found = matched.get(spec.key)
        plan.uuids[spec.key] = found.uuid if found else new_uuid()
    managed = _managed(recorded, matched)
    removed = [p for p in managed.values() if p.id not in {m.id for m in matched.values()}]
    _plan_providers(plan, desired, recorded, matched, removed)
    wanted = _plan_inventories(plan, desired, recorded, matched)
    _plan_traits(plan, desired, recorded, matched, keep_all=bool(kept_plugins))
    _plan_allocations(plan, desired, recorded, managed, wanted, removed)
    plan.state = {
        spec.key: {
            "uuid": plan.uuids[spec.key],
            "name": spec.name,
            "classes": {
                name: {
                    **{f: getattr(inv, f) for f in OPERATOR_FIELDS},
                    "plugin": spec.owners.get(name, ""),
                }
                for name, inv in spec.inventories.items()
            },
            "traits": sorted(spec.traits),
        }
        for spec in desired
    }
    return plan


# --- which recorded provider is which desired one ---------------------------------------------


def _match(desired, recorded):
    """``{key: RecordedProvider}`` for the desired providers that exist already."""
    by_uuid = {p.uuid: p for p in recorded.members.values()}
    by_name = {p.name: p for p in recorded.members.values()}
    taken, matched = set(), {}
    for spec in desired:
        if spec.parent is None:
            found = recorded.root
        else:
            last = recorded.state.get(spec.key) or {}
            found = by_uuid.get(last.get("uuid"))
            if found is None or found.id in taken:
                found = by_name.get(spec.name)
        if found is not None and found.id not in taken:
            matched[spec.key] = found
            taken.add(found.id)
    return matched


def _managed(recorded, matched):
    """The recorded providers the sync answers for: those it wrote before and those it
    matched now (by id). Others' providers in the tree are not the sync's to change."""
    synced = {entry.get("uuid") for entry in recorded.state.values()}
    return {
        p.id: p
        for p in recorded.members.values()
        if p.uuid in synced or p.id in {m.id for m in matched.values()}
    }


def _with_kept_contributions(desired, recorded, kept_plugins):
    """``desired`` plus, for each plugin in ``kept_plugins`` (it raised), the classes it gave
    last time, as they are on record now, on the providers they are on."""
    if not kept_plugins:
        return desired
    by_key = {spec.key: spec for spec in desired}
    by_uuid = {p.uuid: p for p in recorded.members.values()}
    key_of = {entry.get("uuid"): key for key, entry in recorded.state.items()}
    added = []
    for key, entry in recorded.state.items():
        provider = by_uuid.get(entry.get("uuid"))
        if provider is None:
            continue
        kept = _kept_inventories(entry, provider, kept_plugins)
        if not kept:
            continue
        spec = by_key.get(key)
        if spec is None:
            spec = _recorded_spec(key, provider, recorded, key_of)
            added.append(key)
        owners = {name: entry["classes"][name]["plugin"] for name in kept}
        by_key[key] = spec._replace(
            inventories={**kept, **spec.inventories}, owners={**owners, **spec.owners}
        )
    ordered = [by_key[spec.key] for spec in desired] + [by_key[k] for k in added]
    return _parents_first(ordered)


def _kept_inventories(entry, provider, kept_plugins):
    """The inventories of ``provider`` (as on record now) of the classes that a plugin in
    ``kept_plugins`` gave it last time (``entry``: its record in the last sync's state)."""
    return {
        name: provider.inventories[name]
        for name, last in (entry.get("classes") or {}).items()
        if last.get("plugin") in kept_plugins and name in provider.inventories
    }


def _recorded_spec(key, provider, recorded, key_of):
    """A provider on record that nothing desires this time, as a DesiredProvider with nothing
    of its own, under its recorded parent (``key_of``: recorded uuid -> key; "" the root)."""
    parent = recorded.members.get(provider.parent_id)
    parent_key = key_of.get(parent.uuid, "") if parent else ""
    return DesiredProvider(key, provider.name, parent_key, {}, frozenset(), {})


def _parents_first(specs):
    """``specs`` reordered so that each comes after its parent (a missing parent: the root)."""
    keys = {spec.key for spec in specs}
    under = {}
    for spec in specs:
        if spec.parent is not None:
            parent = spec.parent if spec.parent in keys else ""
            under.setdefault(parent, []).append(spec._replace(parent=parent))
    ordered = [spec for spec in specs if spec.parent is None]
    index = 0
    while index < len(ordered):
        ordered[index + 1 : index + 1] = under.get(ordered[index].key, [])
        index += 1
    return ordered


# --- providers: create, move, delete ------------------------------------------------------------


def _plan_providers(plan, desired, recorded, matched, removed):
    uuid_of_id = {p.id: p.uuid for p in recorded.members.values()}
    for spec in desired:
        found = matched.get(spec.key)
        if found is None:
            plan.creates.append(spec)
            continue
        if spec.parent is None:
            continue
        parent_uuid = plan.uuids[spec.parent]
        if found.name != spec.name or uuid_of_id.get(found.parent_id) != parent_uuid:
            plan.moves.append(ProviderMove(found.uuid, spec.name, parent_uuid))
    removed_ids = {p.id for p in removed}
    moved = {m.uuid for m in plan.moves}
    for provider in recorded.members.values():
        if (
            provider.parent_id in removed_ids
            and provider.id not in removed_ids
            and provider.uuid not in moved
        ):
            parent = recorded.members[provider.parent_id]
            plan.blocked.append(
                f"{parent.name} is no longer wanted but {provider.name}, which the sync did "
                "not make, hangs under it: move or delete it"
            )
    plan.deletes = sorted(removed, key=lambda p: -_depth(p, recorded.members))


def _depth(provider, members):
    depth = 0
    while provider.parent_id is not None and provider.parent_id in members:
        provider = members[provider.parent_id]
        depth += 1
    return depth


# --- inventories and traits ---------------------------------------------------------------------


def _plan_inventories(plan, desired, recorded, matched):
    """Each desired provider's whole new inventory (``{uuid: {class: Capacity}}``), those that
    change recorded in the plan; returns all of them."""
    wanted_all = {}
    for spec in desired:
        uuid = plan.uuids[spec.key]
        found = matched.get(spec.key)
        current = dict(found.inventories) if found else {}
        last = (recorded.state.get(spec.key) or {}).get("classes") or {}
        wanted = {}
        for name, inventory in spec.inventories.items():
            existing = current.get(name)
            if existing is not None:
                kept = {
                    f: getattr(existing, f)
                    for f in OPERATOR_FIELDS
                    # Differs from what the sync proposed last time (or the sync never wrote
                    # it): an operator's value, which wins.
                    if name not in last or getattr(existing, f) != last[name].get(f)
                }
                inventory = replace(inventory, **kept)
            wanted[name] = inventory
        for name, existing in current.items():
            # A class no plugin gives and the sync never wrote: the operator's own.
            if name not in wanted and name not in last:
                wanted[name] = existing
        wanted_all[uuid] = wanted
        if wanted != current:
            plan.inventories[uuid] = wanted
            plan.old_inventories[uuid] = current
    return wanted_all


def _plan_traits(plan, desired, recorded, matched, *, keep_all):
    """Add the plugins' traits, drop the ones the sync added and no plugin wants (none when
    a plugin raised: its traits are not known); keep the rest."""
    for spec in desired:
        found = matched.get(spec.key)
        current = found.traits if found else frozenset()
        previously = set((recorded.state.get(spec.key) or {}).get("traits") or [])
        dropped = set() if keep_all else previously - spec.traits
        wanted = frozenset((current - dropped) | spec.traits)
        if wanted != current:
            plan.traits[plan.uuids[spec.key]] = wanted


# --- allocations --------------------------------------------------------------------------------


def _plan_allocations(plan, desired, recorded, managed, wanted, removed):
    """Allocations on what stays stay (the host must not shrink below them); those on what goes
    move (allocation_moves). Fills ``plan.holdings``, or ``plan.blocked`` with the reasons."""
    managed_uuids = {p.uuid: p for p in managed.values()}
    removed_uuids = {p.uuid for p in removed}
    staying, displaced = {}, []
    for holdings in recorded.held:
        for provider_uuid, resources in holdings.allocations.items():
            provider = managed_uuids.get(provider_uuid)
            if provider is None:
                continue  # not the sync's provider: nothing changes there
            for name, amount in resources.items():
                if provider_uuid not in removed_uuids and name in wanted[provider_uuid]:
                    slot = (provider_uuid, name)
                    staying[slot] = staying.get(slot, 0) + amount
                else:
                    displaced.append(
                        Displaced(
                            holdings.consumer_uuid, provider.uuid, provider.name, name, amount
                        )
                    )
    plan.blocked.extend(_shrunk_below_usage(managed_uuids, wanted, staying))
    if not displaced:
        return
    destinations = [
        Placement(plan.uuids[spec.key], spec.name, wanted[plan.uuids[spec.key]], spec.traits)
        for spec in desired
    ]
    origin_traits = {p.uuid: p.traits for p in managed.values()}
    placed, refusals = place_displaced(
        displaced, destinations, staying, recorded.held, origin_traits
    )
    plan.blocked.extend(refusals)
    if refusals:
        return
    plan.holdings = _new_holdings(recorded.held, displaced, placed)


def _shrunk_below_usage(providers, wanted, staying):
    """A class that stays where it is but whose new capacity is below what is allocated there
    (and below what it was): the report shrank the host under its workloads."""
    reasons = []
    for (provider_uuid, name), used in sorted(staying.items()):
        new = wanted[provider_uuid][name].usable
        old = providers[provider_uuid].inventories.get(name)
        if used > new and (old is None or new < old.usable):
            reasons.append(
                f"{providers[provider_uuid].name}: {name} {used} allocated, more than the "
                f"{new} the new report leaves there"
            )
    return reasons


def _new_holdings(held, displaced, placed):
    """Each consumer that loses something, with its whole new allocations."""
    losing = {}
    for item in displaced:
        losing.setdefault(item.consumer_uuid, []).append(item)
    moved = []
    for holdings in held:
        items = losing.get(holdings.consumer_uuid)
        if not items:
            continue
        allocations = {rp: dict(resources) for rp, resources in holdings.allocations.items()}
        for item in items:
            allocations[item.origin_uuid].pop(item.resource_class)
        for provider_uuid, name, amount in placed.get(holdings.consumer_uuid, []):
            resources = allocations.setdefault(provider_uuid, {})
            resources[name] = resources.get(name, 0) + amount
        allocations = {rp: res for rp, res in allocations.items() if res}
        moved.append(holdings._replace(allocations=allocations))
    return moved
