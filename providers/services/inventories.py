"""Inventory writes: what a provider has of each resource class, and its limits.

Every endpoint write here is one transaction that locks the provider row,
checks the generation the client sent (where Placement asks for one),
changes inventory rows and bumps the generation. Validation follows
Placement: the JSON-schema limits of each field, the defaults of omitted
fields, and a capacity check that depends on the microversion (before 1.26
``reserved`` must be below ``total``; from 1.26 it may equal it).

:func:`inventories_write` is the building block the reshaper reuses inside
its own transaction.
"""

import math

from django.db import IntegrityError, transaction
from django.utils import timezone

from placementsite.core import json_schema
from placementsite.core.exceptions import (
    ConcurrentUpdate,
    InvalidRequest,
    InventoryInUse,
    NotFound,
)

from ..capacity import Capacity
from ..models import MAX_INT, Inventory, ResourceClass
from .generations import (
    bump_generation,
    check_generation,
    provider_for_update,
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


def _integer(minimum):
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

GENERATION_CONFLICT = "resource provider generation conflict"
CONCURRENTLY_UPDATED = "Another thread concurrently updated the data. Please retry your update"


# --- validation --------------------------------------------------------------


def inventory_fields(record):
    """Validate one inventory record and return its six fields, defaults filled in."""
    json_schema.check(record, INVENTORY_RECORD)
    ratio = record.get("allocation_ratio")
    if ratio is not None and not math.isfinite(ratio):
        raise InvalidRequest(f"JSON does not validate: {ratio} is not a finite number")
    fields = {**DEFAULTS, **{k: v for k, v in record.items() if k in FIELDS}}
    # JSON numbers like 8.0 are integers to the schema; store and echo them as such.
    for name in FIELDS[:-1]:
        fields[name] = int(fields[name])
    fields["allocation_ratio"] = float(fields["allocation_ratio"])
    return fields


def _capacity_problem(fields, microversion):
    """Placement's capacity rule: usable capacity must be positive (>= 0 from 1.26)."""
    usable = Capacity(**fields).usable
    if microversion >= (1, 26):
        return "greater than total" if usable < 0 else None
    return "greater than or equal to total" if usable <= 0 else None


def check_capacity(provider, resource_class, fields, microversion, action):
    problem = _capacity_problem(fields, microversion)
    if problem:
        raise InvalidRequest(
            f"Unable to {action} inventory for resource provider {provider.uuid}: "
            f"Invalid inventory for '{resource_class}' on resource provider "
            f"'{provider.uuid}'. The reserved value is {problem}."
        )


def _in_use_message(provider, class_names):
    return (
        f"Inventory for '{', '.join(class_names)}' on resource provider '{provider.uuid}' in use."
    )


def _resource_class(name):
    return ResourceClass.objects.filter(name=name).first()


# --- the reshaper's building block -------------------------------------------


class InventoryClassUnknown(InvalidRequest):
    """An inventory record names a resource class that does not exist."""

    def __init__(self, provider, name):
        super().__init__(
            f"Unknown resource class in inventory for resource provider "
            f"{provider.uuid}: No such resource class {name}."
        )
        self.name = name


def classes_named(provider, names):
    """``{name: ResourceClass}`` for ``names``; an unknown name is InventoryClassUnknown."""
    classes = {rc.name: rc for rc in ResourceClass.objects.filter(name__in=list(names))}
    for name in names:
        if name not in classes:
            raise InventoryClassUnknown(provider, name)
    return classes


def _check_not_in_use(provider, class_ids):
    """Refuse (InventoryInUse) to remove inventory of classes the provider has allocations of."""
    in_use = list(
        provider.allocations.filter(resource_class_id__in=class_ids)
        .order_by("resource_class_id")
        .values_list("resource_class__name", flat=True)
        .distinct()
    )
    if in_use:
        raise InventoryInUse(_in_use_message(provider, in_use))


def inventories_write(*, provider, inventories, microversion, check_in_use=True):
    """Validate and write ``provider``'s complete inventory, in the caller's transaction.

    ``inventories`` is the request's dict mapping resource class names to
    inventory records (``{"VCPU": {"total": 8, ...}}``); omitted fields take
    Placement's defaults. Classes the provider has and ``inventories`` does
    not name are removed, named ones are updated or created. ``microversion``
    (a Version or ``(major, minor)`` tuple) decides whether ``reserved`` may
    equal ``total`` (from 1.26).

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
    wanted = {}
    for name, record in inventories.items():
        wanted[name] = inventory_fields(record)
    for name, fields in wanted.items():
        check_capacity(provider, name, fields, microversion, "update")

    classes = classes_named(provider, wanted)
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
    updated, created, rows = [], [], []
    for name, fields in wanted.items():
        rc = classes[name]
        inventory = existing.get(rc.id)
        if inventory is None:
            inventory = Inventory(resource_provider=provider, resource_class=rc, **fields)
            created.append(inventory)
        else:
            for field, value in fields.items():
                setattr(inventory, field, value)
            inventory.updated_at = now
            updated.append(inventory)
        rows.append(inventory)

    if removed_ids:
        Inventory.objects.filter(
            resource_provider=provider, resource_class_id__in=removed_ids
        ).delete()
    if updated:
        Inventory.objects.bulk_update(updated, [*FIELDS, "updated_at"])
    if created:
        Inventory.objects.bulk_create(created)
    return rows


# --- endpoint writes ---------------------------------------------------------


def inventories_replace(*, provider_uuid, generation, inventories, microversion):
    """``PUT .../inventories``: set the provider's whole inventory."""
    with transaction.atomic():
        provider = provider_for_update(provider_uuid)
        for record in inventories.values():
            inventory_fields(record)
        check_generation(provider, generation, GENERATION_CONFLICT)
        try:
            rows = inventories_write(
                provider=provider, inventories=inventories, microversion=microversion
            )
        except InventoryInUse as exc:
            raise InventoryInUse(f"update conflict: {exc.detail}") from None
        _bump(provider)
        return provider, rows


def inventories_delete(*, provider_uuid, microversion):
    """``DELETE .../inventories`` (1.5+): remove every class; refused while in use."""
    with transaction.atomic():
        provider = provider_for_update(provider_uuid)
        inventories_write(provider=provider, inventories={}, microversion=microversion)
        _bump(provider)
        return provider


def inventory_create(*, provider_uuid, resource_class, fields, microversion):
    """``POST .../inventories``: add one class the provider has no inventory of."""
    with transaction.atomic():
        provider = provider_for_update(provider_uuid)
        fields = inventory_fields(fields)
        check_capacity(provider, resource_class, fields, microversion, "create")
        rc = _resource_class(resource_class)
        if rc is None:
            raise InvalidRequest(
                f"Unable to create inventory for resource provider {provider.uuid}: "
                f"No such resource class {resource_class}."
            )
        try:
            with transaction.atomic():
                inventory = Inventory.objects.create(
                    resource_provider=provider, resource_class=rc, **fields
                )
        except IntegrityError:
            raise ConcurrentUpdate(
                f"Update conflict: Inventory for '{resource_class}' on resource provider "
                f"'{provider.uuid}' already exists."
            ) from None
        _bump(provider)
        return provider, inventory


def inventory_update(*, provider_uuid, resource_class, generation, fields, microversion):
    """``PUT .../inventories/{resource_class}``: change one existing class."""
    with transaction.atomic():
        provider = provider_for_update(provider_uuid)
        fields = inventory_fields(fields)
        check_generation(provider, generation, GENERATION_CONFLICT)
        check_capacity(provider, resource_class, fields, microversion, "update")
        inventory = (
            Inventory.objects.filter(
                resource_provider=provider, resource_class__name=resource_class
            )
            .select_related("resource_class")
            .first()
        )
        if inventory is None:
            if _resource_class(resource_class) is None:
                # As Placement: a class named in the path that does not exist is not found.
                raise NotFound(f"No such resource class {resource_class}.")
            raise InvalidRequest(
                f"No inventory record with resource class for resource provider "
                f"{provider.uuid}: No inventory of class {resource_class} found."
            )
        for field, value in fields.items():
            setattr(inventory, field, value)
        inventory.save(update_fields=[*FIELDS, "updated_at"])
        _bump(provider)
        return provider, inventory


def inventory_delete(*, provider_uuid, resource_class):
    """``DELETE .../inventories/{resource_class}``: refused while allocations use it."""
    with transaction.atomic():
        provider = provider_for_update(provider_uuid)
        rc = _resource_class(resource_class)
        if rc is None:
            raise NotFound(
                f"No inventory of class {resource_class} found for delete: "
                f"No such resource class {resource_class}."
            )
        if provider.allocations.filter(resource_class=rc).exists():
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


def _bump(provider):
    """Bump the generation; the row lock makes a lost race impossible, but say it well."""
    try:
        bump_generation(provider)
    except ConcurrentUpdate:
        raise ConcurrentUpdate(f"update conflict: {CONCURRENTLY_UPDATED}") from None
