"""Device assignments: the concrete units (VFs, vGPU slots, devices) a consumer holds, kept
in step with its allocations by the allocation write, in its transaction.

Called by the allocation write once the consumers' new allocation rows are in, with every
provider involved locked (``SELECT ... FOR UPDATE`` in id order): no other write can assign or
free a unit of those providers until the commit, and the unique unit column of
:class:`~allocations.models.DeviceAssignment` refuses a unit twice even so. Per (provider,
class), for each consumer of the write:

- a consumer that asks for assignment (``assign_devices``: the service's own claims) ends
  with exactly as many units as it is allocated there, when the provider has units of the
  class (a provider without units, made through the Placement API, assigns nothing);
- any other consumer (a Placement API write) keeps at most as many as it is allocated, so the
  units assigned never outnumber the usage;
- units a consumer gives up go first to a consumer of the same write that needs units of the
  same (provider, class): a move hands the source's units over to the migration consumer and
  a revert gives them back, the very same units; the rest are freed, and what is still
  missing is taken from the free units, in address order.
"""

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

from django.db import IntegrityError, transaction
from django.db.models import Count, Exists, OuterRef

from placementsite.core.exceptions import ConcurrentUpdate
from providers.models import DeviceUnit, ResourceProvider
from providers.services.generations import providers_for_update

from ..models import Allocation, Consumer, DeviceAssignment

#: A provider id and a resource class id: the units of one class on one provider.
UnitKey = tuple[int, int]


class DeviceUnitsExhausted(Exception):
    """A provider has too few free units for what is allocated of it (its inventory counts
    more than its units: an operator's allocation ratio or total); ``provider_uuid`` names
    it."""

    def __init__(self, detail: str, provider_uuid: str) -> None:
        super().__init__(detail)
        self.detail = detail
        self.provider_uuid = provider_uuid


class AssignmentRequest(Protocol):
    """What the assignment needs of a consumer's request: whose it is, and whether it asks
    for device units (the allocation write's ``ConsumerAllocationWrite`` is one)."""

    @property
    def consumer_uuid(self) -> str: ...

    @property
    def assign_devices(self) -> bool: ...


def device_units_assign(
    *,
    consumers: Mapping[str, Consumer],
    requests: Iterable[AssignmentRequest],
    written: Sequence[Allocation] | None = None,
    with_units: AbstractSet[UnitKey] | None = None,
) -> None:
    """Bring the device assignments of ``consumers`` (``{uuid: Consumer}``, locked) in step
    with their allocations just written (see the module docstring).

    ``written``, for consumers all made by this write: the Allocation rows written, which are
    all they hold (and they hold no units yet); ``with_units``: the (provider id, class id)
    pairs with device units, when the caller read them already. Each spares a read."""
    ids = [c.id for c in consumers.values()]
    assigning = {consumers[r.consumer_uuid].id for r in requests if r.assign_devices}
    held = _held(ids) if written is None else {}
    if not held and not assigning:
        return
    allocated = _allocated(ids, written)
    asked = {key for key, users in allocated.items() if assigning.intersection(users)}
    with_units = _keys_with_units(asked) if with_units is None else asked & with_units
    moves = _UnitMoves()
    for key in sorted(set(held) | with_units):
        surplus, short = _surplus_and_shortfalls(
            held.get(key, {}),
            allocated.get(key, {}),
            assigning=assigning if key in with_units else set(),
        )
        moves.settle(key, surplus, short)
    moves.apply()


def _allocated(
    consumer_ids: list[int], written: Sequence[Allocation] | None
) -> dict[UnitKey, dict[int, int]]:
    """``{(provider, class): {consumer: used}}``: what the consumers are allocated now (the
    rows ``written``, when they are all the consumers hold)."""
    rows = (
        Allocation.objects.filter(consumer_id__in=consumer_ids).values_list(
            "consumer_id", "resource_provider_id", "resource_class_id", "used"
        )
        if written is None
        else [(a.consumer_id, a.resource_provider_id, a.resource_class_id, a.used) for a in written]
    )
    allocated: dict[UnitKey, dict[int, int]] = defaultdict(dict)
    for consumer_id, provider_id, class_id, used in rows:
        allocated[(provider_id, class_id)][consumer_id] = used
    return allocated


def _surplus_and_shortfalls(
    held: Mapping[int, list[int]], allocated: Mapping[int, int], *, assigning: AbstractSet[int]
) -> tuple[list[int], list[tuple[int, int]]]:
    """For the units of one (provider, class): the assignment rows held beyond what each
    consumer should keep, and ``(consumer, how many)`` for those that should hold more.

    A consumer in ``assigning`` (it asks for units and the class has units here) should hold
    as many as it is allocated; any other keeps what it holds, up to what it is allocated."""
    surplus: list[int] = []
    short: list[tuple[int, int]] = []
    for consumer_id in sorted(set(held) | set(allocated)):
        have, used = held.get(consumer_id, []), allocated.get(consumer_id, 0)
        target = used if consumer_id in assigning else min(used, len(have))
        if len(have) > target:
            surplus.extend(have[target:])
        elif target > len(have):
            short.append((consumer_id, target - len(have)))
    return surplus, short


@dataclass
class _UnitMoves:
    """What the assignment changes: rows handed over to another consumer of the write, rows
    freed, and units still missing, to take from the free units."""

    handovers: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))
    freed: list[int] = field(default_factory=list)
    missing: list[tuple[UnitKey, int, int]] = field(default_factory=list)

    def settle(self, key: UnitKey, surplus: list[int], short: list[tuple[int, int]]) -> None:
        """Units given up go first to the consumers short of units of the same key; the
        rest are freed, and what the surplus does not cover is missing."""
        for consumer_id, count in short:
            given, surplus = surplus[:count], surplus[count:]
            self.handovers[consumer_id].extend(given)
            if count > len(given):
                self.missing.append((key, consumer_id, count - len(given)))
        self.freed.extend(surplus)

    def apply(self) -> None:
        for consumer_id, row_ids in self.handovers.items():
            DeviceAssignment.objects.filter(id__in=row_ids).update(consumer_id=consumer_id)
        if self.freed:
            DeviceAssignment.objects.filter(id__in=self.freed).delete()
        _assign_free_units(self.missing)


def _held(consumer_ids: list[int]) -> dict[UnitKey, dict[int, list[int]]]:
    """``{(provider, class): {consumer: [assignment row ids]}}``, in unit address order."""
    held: dict[UnitKey, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
    for row_id, consumer_id, provider_id, class_id in (
        DeviceAssignment.objects.filter(consumer_id__in=consumer_ids)
        .order_by("unit__address")
        .values_list("id", "consumer_id", "unit__provider_id", "unit__resource_class_id")
    ):
        held[(provider_id, class_id)][consumer_id].append(row_id)
    return held


def _keys_with_units(keys: Iterable[UnitKey]) -> set[UnitKey]:
    """The (provider, class) pairs among ``keys`` that have device units."""
    wanted = set(keys)
    if not wanted:
        return set()
    found = (
        DeviceUnit.objects.filter(
            provider_id__in={p for p, _c in wanted},
            resource_class_id__in={c for _p, c in wanted},
        )
        .values_list("provider_id", "resource_class_id")
        .annotate(n=Count("id"))
    )
    return {(p, c) for p, c, _n in found} & wanted


def _assign_free_units(missing: Iterable[tuple[UnitKey, int, int]]) -> None:
    """Give each ``(key, consumer, count)`` that many free units of the key, in address order."""
    rows: list[DeviceAssignment] = []
    for (provider_id, class_id), consumer_id, count in missing:
        free = list(
            DeviceUnit.objects.filter(provider_id=provider_id, resource_class_id=class_id)
            .exclude(Exists(DeviceAssignment.objects.filter(unit_id=OuterRef("pk"))))
            .order_by("address")
            .values_list("id", flat=True)[:count]
        )
        if len(free) < count:
            provider = ResourceProvider.objects.values_list("uuid", flat=True).get(pk=provider_id)
            raise DeviceUnitsExhausted(
                f"Unable to allocate inventory: resource provider '{provider}' has "
                f"{len(free)} free device units of the {count} asked for.",
                str(provider),
            )
        rows.extend(DeviceAssignment(unit_id=unit_id, consumer_id=consumer_id) for unit_id in free)
    if not rows:
        return
    try:
        with transaction.atomic():
            DeviceAssignment.objects.bulk_create(rows)
    except IntegrityError:  # another write took a unit: its provider lock should make this moot
        raise ConcurrentUpdate(
            "Device units changed while attempting to assign them. Please retry."
        ) from None


def device_assignments_heal(*, consumer_uuid: str, assign: bool) -> tuple[int, int]:
    """Bring one consumer's device assignments in step with its allocations (the audit's
    ``--heal``): surplus units freed; with ``assign`` (a server or a migration of this
    service), missing units assigned. One transaction, in the allocation write's lock order
    (providers in id order, then the consumer). Returns ``(freed, assigned)``."""
    with transaction.atomic():
        provider_ids = set(
            Allocation.objects.filter(consumer__uuid=consumer_uuid).values_list(
                "resource_provider__uuid", flat=True
            )
        ) | set(
            DeviceAssignment.objects.filter(consumer__uuid=consumer_uuid).values_list(
                "unit__provider__uuid", flat=True
            )
        )
        providers_for_update(uuids={str(u) for u in provider_ids})
        consumer = Consumer.objects.select_for_update().filter(uuid=consumer_uuid).first()
        if consumer is None:
            return 0, 0
        before = set(consumer.device_assignments.values_list("unit_id", flat=True))
        device_units_assign(
            consumers={str(consumer.uuid): consumer},
            requests=[_Heal(str(consumer.uuid), assign)],
        )
        after = set(consumer.device_assignments.values_list("unit_id", flat=True))
        return len(before - after), len(after - before)


class _Heal(NamedTuple):
    consumer_uuid: str
    assign_devices: bool
