"""Where the allocations of a provider (or class) that goes away go: a pure planner.

When a host's tree changes shape (NUMA turned on or off, a pooled device group split into its
devices, a class moving between providers), the units consumers hold on what goes away must
land on the new tree, each consumer's total per class unchanged, within every inventory's
rules (capacity, ``min_unit``, ``max_unit``, ``step_size``). :func:`place_displaced` plans
that, first fit decreasing, deterministically:

- what a consumer held together on one provider stays together where one provider can take
  it all (a server's VCPU and MEMORY_MB from the old root land on one NUMA cell);
- a provider that has every trait the old one had is preferred (a vGPU of an NVIDIA pool goes
  to an NVIDIA card), then the tree's order (the root, then each provider after its parent);
- a class no single provider can take is split over several, each part within the rules;
- what cannot land anywhere is refused with a reason naming the old provider, the class and
  the amount: then the host is blocked and nothing is applied.
"""

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from .capacity import EXCEEDS_CAPACITY, Capacity


class Displaced(NamedTuple):
    """Units one consumer holds of one class on a provider (or class) that goes away."""

    consumer_uuid: str
    origin_uuid: str
    origin_name: str
    resource_class: str
    amount: int


class Placement(NamedTuple):
    """A provider of the new tree units may land on: its inventories and traits to be."""

    uuid: str
    name: str
    inventories: Mapping[str, Capacity]
    traits: frozenset


def place_displaced(
    displaced: Sequence[Displaced],
    destinations: Sequence[Placement],
    staying: Mapping[tuple[str, str], int],
    held,
    origin_traits: Mapping[str, frozenset],
) -> tuple[dict[str, list[tuple[str, str, int]]], list[str]]:
    """``({consumer: [(provider uuid, class, amount)]}, refusals)``.

    ``staying`` is the usage that stays per ``(provider uuid, class)``; ``held`` the consumers'
    holdings (what each keeps on a destination counts against ``max_unit`` and ``step_size``
    once merged with what lands there).
    """
    board = _Board(destinations, staying, held)
    groups = {}
    for item in displaced:
        key = (item.consumer_uuid, item.origin_uuid, item.origin_name)
        groups.setdefault(key, {})[item.resource_class] = item.amount
    order = sorted(groups, key=lambda k: (-max(groups[k].values()), k[0], k[2]))
    unplaced = {}
    for consumer, origin, origin_name in order:
        classes = groups[(consumer, origin, origin_name)]
        candidates = board.ranked(origin_traits.get(origin, frozenset()))
        if board.place_together(consumer, classes, candidates):
            continue
        for name, amount in sorted(classes.items()):
            missing = board.place_one(consumer, name, amount, candidates)
            if missing:
                slot = (origin_name, name)
                unplaced[slot] = unplaced.get(slot, 0) + missing
    return board.placed, [board.refusal(*slot, amount) for slot, amount in sorted(unplaced.items())]


class _Board:
    """Free units per destination and class, and what has been placed so far."""

    def __init__(self, destinations, staying, held):
        self.destinations = list(destinations)
        self.free = {
            (d.uuid, name): inventory.usable - staying.get((d.uuid, name), 0)
            for d in self.destinations
            for name, inventory in d.inventories.items()
        }
        self.available = {}
        for (_uuid, name), units in self.free.items():
            self.available[name] = self.available.get(name, 0) + max(units, 0)
        # What each consumer holds (and keeps) on each destination, per class.
        targets = {d.uuid for d in self.destinations}
        self.own = {
            (h.consumer_uuid, rp, name): amount
            for h in held
            for rp, resources in h.allocations.items()
            if rp in targets
            for name, amount in resources.items()
        }
        self.placed = {}

    def ranked(self, traits):
        """Destinations with every trait of the origin first, then the tree's order."""
        return sorted(self.destinations, key=lambda d: not traits <= d.traits)

    def _room(self, consumer, destination, name):
        """How many more units ``consumer`` may have of ``name`` there, and what it has."""
        inventory = destination.inventories.get(name)
        if inventory is None:
            return None, 0
        return inventory, self.own.get((consumer, destination.uuid, name), 0)

    def fits(self, consumer, destination, name, amount):
        inventory, own = self._room(consumer, destination, name)
        if inventory is None or amount > self.free[(destination.uuid, name)]:
            return False
        merged = own + amount
        return not [s for s in inventory.shortfalls(merged) if s.rule != EXCEEDS_CAPACITY]

    def take(self, consumer, destination, name, amount):
        self.free[(destination.uuid, name)] -= amount
        slot = (consumer, destination.uuid, name)
        self.own[slot] = self.own.get(slot, 0) + amount
        self.placed.setdefault(consumer, []).append((destination.uuid, name, amount))

    def place_together(self, consumer, classes, candidates):
        for destination in candidates:
            if all(self.fits(consumer, destination, n, a) for n, a in classes.items()):
                for name, amount in sorted(classes.items()):
                    self.take(consumer, destination, name, amount)
                return True
        return False

    def place_one(self, consumer, name, amount, candidates):
        """Place ``amount`` of ``name`` on one destination, else split; returns what is left."""
        for destination in candidates:
            if self.fits(consumer, destination, name, amount):
                self.take(consumer, destination, name, amount)
                return 0
        remaining = amount
        for destination in candidates:
            part = self._largest_part(consumer, destination, name, remaining)
            if part:
                self.take(consumer, destination, name, part)
                remaining -= part
            if not remaining:
                break
        return remaining

    def _largest_part(self, consumer, destination, name, wanted):
        """The most of ``wanted`` that may land on ``destination`` within its rules."""
        inventory, own = self._room(consumer, destination, name)
        if inventory is None:
            return 0
        limit = min(wanted, self.free[(destination.uuid, name)], inventory.max_unit - own)
        if limit <= 0:
            return 0
        step = inventory.step_size or 1
        part = limit - (own + limit) % step
        if part <= 0 or own + part < inventory.min_unit:
            return 0
        return part

    def refusal(self, origin_name, name, amount):
        available = self.available.get(name)
        if available is None:
            return (
                f"{origin_name}: {name} {amount} allocated there, and no provider of the new "
                f"tree has {name}"
            )
        return (
            f"{origin_name}: {name} {amount} allocated there cannot move to the new tree "
            f"({available} {name} free there)"
        )
