"""Inventory writes: what a provider has of each resource class, and its limits.

Every endpoint write here is one transaction that locks the provider row,
checks the generation the client sent (where Placement asks for one),
changes inventory rows and bumps the generation. The services take an inventory as a
:class:`~providers.capacity.Capacity` (its six fields); the edges turn a request's record
into one with :func:`inventory_fields` (Placement's JSON-schema limits, the defaults of
omitted fields). Validation follows Placement: the same limits on every value, and a
capacity check that the caller's ``allow_reserved_equal_total`` flag decides (Placement's
API before 1.26 wants ``reserved`` below ``total``; from 1.26, and for the host sync, it
may equal it).

:func:`inventories_write` is the building block the reshaper reuses inside
its own transaction.
"""

import functools
import math
import uuid as uuidlib
from collections.abc import Collection, Iterable, Mapping
from dataclasses import asdict
from typing import Any, NamedTuple

from django.db import IntegrityError, transaction
from django.utils import timezone

from placementsite.core import json_schema
from placementsite.core.exceptions import (
    CONCURRENTLY_UPDATED,
    ConcurrentUpdate,
    InvalidRequest,
    InventoryInUse,
    NotFound,
)

from ..capacity import Capacity
from ..models import MAX_INT, Inventory, ResourceClass, ResourceProvider
from ..usage import classes_in_use
from .generations import (
    bump_generation,
    bump_generations,
    check_generation,
    provider_for_update,
    provider_not_found,
    providers_for_update,
)

# Placement's largest allocation_ratio: the largest single-precision float.
MAX_ALLOCATION_RATIO = 3.40282e38
RESOURCE_CLASS_PATTERN = r"^[A-Z0-9_]+$"

# What a field is when the request leaves it out.
DEFAULTS = {
    "reserved": 0,
    "min_unit": 1,
    "max_unit": MAX_INT,
    "step_size": 1,
    "allocation_ratio": 1.0,
}
FIELDS = ("total", "reserved", "min_unit", "max_unit", "step_size", "allocation_ratio")


def _integer(minimum: int) -> dict[str, object]:
    return {"type": "integer", "minimum": minimum, "maximum": MAX_INT}


# One inventory record. A record may repeat the provider generation; it is
# accepted and ignored, as Placement does.
INVENTORY_RECORD = {
    "type": "object",
    "properties": {
        "resource_provider_generation": {"type": "integer"},
        "total": _integer(1),
        "reserved": _integer(0),
        "min_unit": _integer(1),
        "max_unit": _integer(1),
        "step_size": _integer(1),
        "allocation_ratio": {"type": "number", "maximum": MAX_ALLOCATION_RATIO},
    },
    "required": ["total"],
    "additionalProperties": False,
}


class ProviderInventories(NamedTuple):
    """A provider's whole inventory to be, and the generation it was decided on."""

    generation: int
    inventories: Mapping[str, Capacity]


GENERATION_CONFLICT = "resource provider generation conflict"


# --- validation --------------------------------------------------------------


def inventory_fields(*, record: Mapping[str, Any]) -> Capacity:
    """Validate one inventory record (a request's JSON) and return it as a Capacity, the
    defaults of omitted fields filled in."""
    json_schema.check(record, INVENTORY_RECORD)
    ratio = record.get("allocation_ratio")
    if ratio is not None and not math.isfinite(ratio):
        raise InvalidRequest(f"JSON does not validate: {ratio} is not a finite number")
    fields = {**DEFAULTS, **{k: v for k, v in record.items() if k in FIELDS}}
    # JSON numbers like 8.0 are integers to the schema; store and echo them as such.
    for name in FIELDS[:-1]:
        fields[name] = int(fields[name])
    fields["allocation_ratio"] = float(fields["allocation_ratio"])
    return Capacity(**fields)


@functools.lru_cache(maxsize=4096)
def inventory_checked(*, inventory: Capacity) -> Capacity:
    """``inventory`` once it holds to the limits a request's record is held to (the admin
    and the host sync build theirs in code); the same messages. Remembered per value: a
    cloud's hosts repeat the same few inventories."""
    return inventory_fields(record=asdict(inventory))


def _capacity_problem(inventory: Capacity, allow_reserved_equal_total: bool) -> str | None:
    """Placement's capacity rule: usable capacity must be positive (or zero when allowed)."""
    usable = inventory.usable
    if allow_reserved_equal_total:
        return "greater than total" if usable < 0 else None
    return "greater than or equal to total" if usable <= 0 else None


def check_capacity(
    *,
    provider: ResourceProvider,
    resource_class: str,
    inventory: Capacity,
    allow_reserved_equal_total: bool,
    action: str,
) -> None:
    problem = _capacity_problem(inventory, allow_reserved_equal_total)
    if problem:
        raise InvalidRequest(
            f"Unable to {action} inventory for resource provider {provider.uuid}: "
            f"Invalid inventory for '{resource_class}' on resource provider "
            f"'{provider.uuid}'. The reserved value is {problem}."
        )


def _in_use_message(provider: ResourceProvider, class_names: Iterable[str]) -> str:
    return (
        f"Inventory for '{', '.join(class_names)}' on resource provider '{provider.uuid}' in use."
    )


def _resource_class(name: str) -> ResourceClass | None:
    return ResourceClass.objects.filter(name=name).first()


# --- the reshaper's building block -------------------------------------------


class InventoryClassUnknown(InvalidRequest):
    """An inventory record names a resource class that does not exist."""

    def __init__(self, provider: ResourceProvider, name: str) -> None:
        super().__init__(
            f"Unknown resource class in inventory for resource provider "
            f"{provider.uuid}: No such resource class {name}."
        )
        self.name = name


def classes_named(
    *, provider: ResourceProvider, names: Collection[str]
) -> dict[str, ResourceClass]:
    """``{name: ResourceClass}`` for ``names``; an unknown name is InventoryClassUnknown."""
    classes = {rc.name: rc for rc in ResourceClass.objects.filter(name__in=list(names))}
    for name in names:
        if name not in classes:
            raise InventoryClassUnknown(provider, name)
    return classes


def _check_not_in_use(provider: ResourceProvider, class_ids: list[int]) -> None:
    """Refuse (InventoryInUse) to remove inventory of classes the provider has allocations of."""
    in_use = classes_in_use(provider_id=provider.pk, class_ids=class_ids)
    if in_use:
        raise InventoryInUse(_in_use_message(provider, in_use))


def inventories_write(
    *,
    provider: ResourceProvider,
    inventories: Mapping[str, Capacity],
    allow_reserved_equal_total: bool,
    check_in_use: bool = True,
) -> list[Inventory]:
    """Validate and write ``provider``'s complete inventory, in the caller's transaction.

    ``inventories`` maps resource class names to their inventory. Classes the provider
    has and ``inventories`` does not name are removed, named ones are updated or created.
    ``allow_reserved_equal_total`` says whether ``reserved`` may equal ``total``.

    This function does not lock the provider, check or bump its generation,
    or open a transaction: the caller must hold the provider row lock (e.g.
    ``provider_for_update``) inside ``transaction.atomic()`` and bump the
    generation afterwards. The reshaper passes ``check_in_use=False`` to
    remove inventory that still has allocations it is about to move.

    Raises (nothing is written when it raises):
    ``InvalidRequest`` for an invalid record, a capacity that is too small or an
    unknown resource class; ``InventoryInUse`` (409,
    ``placement.inventory.inuse``) when ``check_in_use`` and a removed class
    has allocations against this provider.

    Returns the provider's inventory rows, in the order of ``inventories``.
    """
    wanted = {name: inventory_checked(inventory=inv) for name, inv in inventories.items()}
    for name, values in wanted.items():
        check_capacity(
            provider=provider,
            resource_class=name,
            inventory=values,
            allow_reserved_equal_total=allow_reserved_equal_total,
            action="update",
        )

    classes = classes_named(provider=provider, names=wanted)
    existing = {
        inv.resource_class_id: inv
        for inv in Inventory.objects.filter(resource_provider=provider).select_related(
            "resource_class"
        )
    }
    keep_ids = {rc.id for rc in classes.values()}
    removed_ids = [rc_id for rc_id in existing if rc_id not in keep_ids]
    if removed_ids and check_in_use:
        _check_not_in_use(provider, removed_ids)

    now = timezone.now()
    updated: list[Inventory] = []
    created: list[Inventory] = []
    rows: list[Inventory] = []
    for name, values in wanted.items():
        rc = classes[name]
        row = existing.get(rc.id)
        if row is None:
            row = Inventory(resource_provider=provider, resource_class=rc, **asdict(values))
            created.append(row)
        else:
            for field, value in asdict(values).items():
                setattr(row, field, value)
            row.updated_at = now
            updated.append(row)
        rows.append(row)

    if removed_ids:
        Inventory.objects.filter(
            resource_provider=provider, resource_class_id__in=removed_ids
        ).delete()
    if updated:
        Inventory.objects.bulk_update(updated, [*FIELDS, "updated_at"])
    if created:
        Inventory.objects.bulk_create(created)
    return rows


def inventories_replaced(
    *,
    provider: ResourceProvider,
    inventories: Mapping[str, Capacity],
    allow_reserved_equal_total: bool,
) -> list[Inventory]:
    """:func:`inventories_write` of a provider's whole inventory set at once (the endpoint's
    PUT, the host sync's held write, the reshaper): removing a class still in use is refused
    as Placement refuses it there, an "update conflict"."""
    try:
        return inventories_write(
            provider=provider,
            inventories=inventories,
            allow_reserved_equal_total=allow_reserved_equal_total,
        )
    except InventoryInUse as exc:
        raise InventoryInUse(f"update conflict: {exc.detail}") from None


# --- endpoint writes ---------------------------------------------------------


def inventories_replace(
    *,
    provider_uuid: str | uuidlib.UUID,
    generation: int,
    inventories: Mapping[str, Capacity],
    allow_reserved_equal_total: bool,
) -> tuple[ResourceProvider, list[Inventory]]:
    """``PUT .../inventories``: set the provider's whole inventory."""
    with transaction.atomic():
        provider = provider_for_update(uuid=provider_uuid)
        inventories = {name: inventory_checked(inventory=inv) for name, inv in inventories.items()}
        check_generation(provider=provider, generation=generation, message=GENERATION_CONFLICT)
        rows = inventories_replaced(
            provider=provider,
            inventories=inventories,
            allow_reserved_equal_total=allow_reserved_equal_total,
        )
        _bump(provider)
        return provider, rows


def inventories_replace_held(
    *, inventories: Mapping[str, Mapping[str, Capacity]], allow_reserved_equal_total: bool
) -> None:
    """Several providers' whole inventories set (``{provider uuid: {class: Capacity}}``), in
    one transaction, as :func:`inventories_replace` sets each one (the same checks, the same
    refusals): their rows locked in id order, each provider's inventory written, their
    generations bumped in one statement. For a writer that holds the providers' rows locked
    already (the host sync, whose plan was made from them), which has no generation to
    check but the one it holds."""
    with transaction.atomic():
        providers = providers_for_update(uuids=list(inventories))
        for uuid, wanted in inventories.items():
            provider = providers.get(str(uuid))
            if provider is None:
                raise provider_not_found(uuid=uuid)
            inventories_replaced(
                provider=provider,
                inventories=wanted,
                allow_reserved_equal_total=allow_reserved_equal_total,
            )
        bump_generations(providers=providers.values())


def inventories_delete(*, provider_uuid: str | uuidlib.UUID) -> ResourceProvider:
    """``DELETE .../inventories`` (1.5+): remove every class; refused while in use."""
    with transaction.atomic():
        provider = provider_for_update(uuid=provider_uuid)
        inventories_write(provider=provider, inventories={}, allow_reserved_equal_total=True)
        _bump(provider)
        return provider


def inventory_create(
    *,
    provider_uuid: str | uuidlib.UUID,
    resource_class: str,
    inventory: Capacity,
    allow_reserved_equal_total: bool,
) -> tuple[ResourceProvider, Inventory]:
    """``POST .../inventories``: add one class the provider has no inventory of."""
    with transaction.atomic():
        provider = provider_for_update(uuid=provider_uuid)
        fields = inventory_checked(inventory=inventory)
        check_capacity(
            provider=provider,
            resource_class=resource_class,
            inventory=fields,
            allow_reserved_equal_total=allow_reserved_equal_total,
            action="create",
        )
        rc = _resource_class(resource_class)
        if rc is None:
            raise InvalidRequest(
                f"Unable to create inventory for resource provider {provider.uuid}: "
                f"No such resource class {resource_class}."
            )
        try:
            with transaction.atomic():
                row = Inventory.objects.create(
                    resource_provider=provider, resource_class=rc, **asdict(fields)
                )
        except IntegrityError:
            raise ConcurrentUpdate(
                f"Update conflict: Inventory for '{resource_class}' on resource provider "
                f"'{provider.uuid}' already exists."
            ) from None
        _bump(provider)
        return provider, row


def inventory_update(
    *,
    provider_uuid: str | uuidlib.UUID,
    resource_class: str,
    generation: int,
    inventory: Capacity,
    allow_reserved_equal_total: bool,
) -> tuple[ResourceProvider, Inventory]:
    """``PUT .../inventories/{resource_class}``: change one existing class."""
    with transaction.atomic():
        provider = provider_for_update(uuid=provider_uuid)
        fields = inventory_checked(inventory=inventory)
        check_generation(provider=provider, generation=generation, message=GENERATION_CONFLICT)
        check_capacity(
            provider=provider,
            resource_class=resource_class,
            inventory=fields,
            allow_reserved_equal_total=allow_reserved_equal_total,
            action="update",
        )
        row = (
            Inventory.objects.filter(
                resource_provider=provider, resource_class__name=resource_class
            )
            .select_related("resource_class")
            .first()
        )
        if row is None:
            if _resource_class(resource_class) is None:
                # As Placement: a class named in the path that does not exist is not found.
                raise NotFound(f"No such resource class {resource_class}.")
            raise InvalidRequest(
                f"No inventory record with resource class for resource provider "
                f"{provider.uuid}: No inventory of class {resource_class} found."
            )
        for field, value in asdict(fields).items():
            setattr(row, field, value)
        row.save(update_fields=[*FIELDS, "updated_at"])
        _bump(provider)
        return provider, row


def inventory_delete(*, provider_uuid: str | uuidlib.UUID, resource_class: str) -> ResourceProvider:
    """``DELETE .../inventories/{resource_class}``: refused while allocations use it."""
    with transaction.atomic():
        provider = provider_for_update(uuid=provider_uuid)
        rc = _resource_class(resource_class)
        if rc is None:
            raise NotFound(
                f"No inventory of class {resource_class} found for delete: "
                f"No such resource class {resource_class}."
            )
        if classes_in_use(provider_id=provider.pk, class_ids=[rc.pk]):
            raise InventoryInUse(
                f"Unable to delete inventory of class {resource_class}: "
                + _in_use_message(provider, [resource_class])
            )
        deleted, _ = Inventory.objects.filter(
            resource_provider=provider, resource_class=rc
        ).delete()
        if not deleted:
            raise NotFound(
                f"No inventory of class {resource_class} found for delete: "
                f"No inventory of class {resource_class} found for delete"
            )
        _bump(provider)
        return provider


def _bump(provider: ResourceProvider) -> None:
    """Bump the generation; the row lock makes a lost race impossible, but say it well."""
    try:
        bump_generation(provider=provider)
    except ConcurrentUpdate:
        raise ConcurrentUpdate(f"update conflict: {CONCURRENTLY_UPDATED}") from None
