"""A host's device units kept as its report lists them, in the host sync's transaction.

The plugins put each device's assignable units (:class:`~providers.plugins.base.UnitSpec`:
VFs, vGPU slots, whole devices) on its provider's spec; :func:`device_units_plan` compares
them with the units on record for the host's tree (whose provider rows the sync holds
locked) and :func:`device_units_apply` writes the difference once the tree is applied. A unit
that would vanish while a consumer is assigned it blocks the host, naming unit and consumer:
the units of running servers never disappear under them. Who holds a unit is asked of the
allocations app through its port.
"""

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from placementsite.core.db import rows_insert

from ..allocations_port import port
from ..models import DeviceUnit
from ..plugins.base import ProviderSpec, UnitSpec


@dataclass
class UnitsPlan:
    # (provider uuid, class name, unit)
    creates: list[tuple[str, str, UnitSpec]] = field(default_factory=list)
    # (unit id, unit): same address, new facts
    updates: list[tuple[int, UnitSpec]] = field(default_factory=list)
    deletes: list[int] = field(default_factory=list)  # unit ids
    blocked: list[str] = field(default_factory=list)

    @property
    def changes(self) -> int:
        return len(self.creates) + len(self.updates) + len(self.deletes)


def device_units_plan(
    *,
    specs: Iterable[ProviderSpec],
    uuids: Mapping[str, str],
    provider_ids: Sequence[int],
    deleted_uuids: Collection[str],
    keep_unlisted: bool = False,
) -> UnitsPlan:
    """What makes the units on record for ``provider_ids`` those of the desired ``specs``
    (``uuids`` maps their keys to provider uuids). ``keep_unlisted``: a provider's class no
    spec lists units for keeps its units (its plugin failed: its resources stay as they
    were), unless the provider itself goes."""
    wanted, listed = _wanted_units(specs, uuids)
    plan = UnitsPlan()
    if not provider_ids:  # a new tree has no units on record: nothing to read or keep
        plan.creates = [(uuid, name, unit) for (uuid, _a), (name, unit) in wanted.items()]
        return plan
    recorded = list(
        DeviceUnit.objects.filter(provider_id__in=provider_ids)
        .order_by("id")
        .values_list(
            "id",
            "provider__uuid",
            "provider__name",
            "resource_class__name",
            "address",
            "parent_address",
            "mdev_type",
        )
    )
    holders = port().device_unit_holders(unit_ids=[row[0] for row in recorded])
    seen = set()
    for unit_id, uuid, provider_name, name, address, parent_address, mdev_type in recorded:
        uuid = str(uuid)
        found = wanted.get((uuid, address))
        if found is not None and found[0] == name:
            seen.add((uuid, address))
            unit = found[1]
            if (unit.parent_address, unit.mdev_type) != (parent_address, mdev_type):
                plan.updates.append((unit_id, unit))
            continue
        if keep_unlisted and (uuid, name) not in listed and uuid not in deleted_uuids:
            continue
        holder = holders.get(unit_id)
        if holder is not None:
            plan.blocked.append(
                f"{provider_name}: {name} unit {address} is assigned to consumer {holder}, "
                "and the new report no longer has it"
            )
        plan.deletes.append(unit_id)
    for (uuid, address), (name, unit) in wanted.items():
        if (uuid, address) not in seen:
            plan.creates.append((uuid, name, unit))
    return plan


def _wanted_units(
    specs: Iterable[ProviderSpec], uuids: Mapping[str, str]
) -> tuple[dict[tuple[str, str], tuple[str, UnitSpec]], set[tuple[str, str]]]:
    """``{(provider uuid, address): (class name, unit)}`` the specs list, and the ``(provider
    uuid, class name)`` pairs they list units for."""
    wanted: dict[tuple[str, str], tuple[str, UnitSpec]] = {}
    listed: set[tuple[str, str]] = set()
    for spec in specs:
        uuid = uuids[spec.key]
        for name, units in spec.units.items():
            listed.add((uuid, name))
            for unit in units:
                wanted[(uuid, unit.address)] = (name, unit)
    return wanted, listed


def device_units_delete(*, plan: UnitsPlan) -> None:
    """The units gone from the report (none assigned: such a plan is blocked), before the
    tree write deletes their providers."""
    if plan.blocked:
        raise ValueError("a blocked plan is not applied")
    if plan.deletes:
        DeviceUnit.objects.filter(id__in=plan.deletes).delete()


def device_units_write(
    *, plan: UnitsPlan, provider_ids: Mapping[str, int], class_id: Callable[[str], int]
) -> None:
    """The new units (on providers by now all made: ``provider_ids`` maps uuids to ids;
    ``class_id(name)`` gives a class's id) and the changed ones."""
    for unit_id, unit in plan.updates:
        DeviceUnit.objects.filter(id=unit_id).update(
            parent_address=unit.parent_address, mdev_type=unit.mdev_type
        )
    device_units_create(plans=[(plan, provider_ids)], class_id=class_id)


def device_units_create(
    *,
    plans: Iterable[tuple[UnitsPlan, Mapping[str, int]]],
    class_id: Callable[[str], int],
) -> None:
    """The new units of several trees' plans (each with its providers' ids by uuid), in
    one insert; their changed units are :func:`device_units_write`'s."""
    rows_insert(
        DeviceUnit,
        ("provider", "resource_class", "address", "parent_address", "mdev_type"),
        [
            (provider_ids[uuid], class_id(name), unit.address, unit.parent_address, unit.mdev_type)
            for plan, provider_ids in plans
            for uuid, name, unit in plan.creates
        ],
    )
