"""Resource class writes."""

from django.db import IntegrityError, transaction

from placementsite.core.exceptions import Conflict, DuplicateName, InvalidRequest, NotFound

from ..models import CUSTOM_NAME_RE, ResourceClass
from ..usage import classes_in_use


def resource_class_get(*, name: str) -> ResourceClass:
    rc = ResourceClass.objects.filter(name=name).first()
    if rc is None:
        raise NotFound(f"No such resource class {name}.")
    return rc


def _require_custom(name: str) -> None:
    if not name.startswith("CUSTOM_"):
        raise InvalidRequest(f"Cannot update standard resource class {name}")


def _require_valid_custom_name(name: str) -> None:
    # The API's schema refuses such names first (with its own message); other edges (the
    # admin) rely on this check.
    if len(name) > 255 or not CUSTOM_NAME_RE.fullmatch(name):
        raise InvalidRequest(
            f"Name {name!r} must start with CUSTOM_ and use only A-Z, 0-9 and _ "
            "(at most 255 characters)."
        )


def resource_class_create(*, name: str) -> ResourceClass:
    _require_valid_custom_name(name)
    try:
        with transaction.atomic():
            return ResourceClass.objects.create(name=name)
    except IntegrityError:
        raise DuplicateName(f"Conflicting resource class already exists: {name}") from None


def resource_class_ensure(*, name: str) -> tuple[ResourceClass, bool]:
    """Create ``name`` if it does not exist; returns (resource_class, created)."""
    _require_custom(name)
    existing = ResourceClass.objects.filter(name=name).first()
    if existing is not None:
        return existing, False
    try:
        return resource_class_create(name=name), True
    except DuplicateName:  # created concurrently: that is what we wanted
        return ResourceClass.objects.get(name=name), False


def resource_class_rename(*, name: str, new_name: str) -> ResourceClass:
    _require_custom(name)
    _require_valid_custom_name(new_name)
    with transaction.atomic():
        rc = ResourceClass.objects.select_for_update().filter(name=name).first()
        if rc is None:
            raise NotFound(f"No such resource class {name}.")
        rc.name = new_name
        try:
            with transaction.atomic():
                rc.save(update_fields=["name", "updated_at"])
        except IntegrityError:
            raise DuplicateName(f"Resource class already exists: {new_name}") from None
        return rc


def resource_class_delete(*, name: str) -> None:
    if not name.startswith("CUSTOM_"):
        raise InvalidRequest(
            f"Error in delete resource class: Cannot delete standard resource class {name}"
        )
    with transaction.atomic():
        rc = ResourceClass.objects.select_for_update().filter(name=name).first()
        if rc is None:
            raise NotFound(f"No such resource class {name}.")
        if rc.inventories.exists() or classes_in_use(class_ids=[rc.pk]):
            raise Conflict(
                f"Error in delete resource class: Cannot delete resource class {name}. "
                "Class is in use in inventory."
            )
        rc.delete()


def resource_class_describe(
    *,
    name: str,
    kind: str | None = None,
    unit: str | None = None,
    description: str | None = None,
) -> ResourceClass:
    """Set a custom class's type, unit or description (None: unchanged).

    Standard classes keep the metadata seeded for them (providers/standards.py).
    """
    with transaction.atomic():
        rc = ResourceClass.objects.select_for_update().filter(name=name).first()
        if rc is None:
            raise NotFound(f"No such resource class {name}.")
        if not rc.is_custom:
            raise InvalidRequest(
                f"Cannot update standard resource class {name}", code="api.standard_class"
            )
        for field, value in (("kind", kind), ("unit", unit), ("description", description)):
            if value is not None:
                setattr(rc, field, value)
        rc.save(update_fields=["kind", "unit", "description", "updated_at"])
        return rc
