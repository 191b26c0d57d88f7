"""Flavor access: which projects may list and use a private flavor (Nova's flavor access)."""

from django.db import IntegrityError, transaction

from placementsite.core.exceptions import Conflict, NotFound

from ..models import Flavor, FlavorAccess


class FlavorAccessConflict(Conflict):
    code = "scheduler.flavor_access_conflict"


def flavor_access_add(*, flavor: Flavor, project_id: str) -> FlavorAccess:
    """Give ``project_id`` the private ``flavor``."""
    if flavor.is_public:
        raise FlavorAccessConflict(f"Flavor {flavor.name} is public: every project has it.")
    try:
        with transaction.atomic():
            return FlavorAccess.objects.create(flavor=flavor, project_id=project_id)
    except IntegrityError:
        raise FlavorAccessConflict(
            f"Project {project_id} already has access to flavor {flavor.name}."
        ) from None


def flavor_access_remove(*, flavor: Flavor, project_id: str) -> None:
    """Take the private ``flavor`` from ``project_id``."""
    deleted, _ = FlavorAccess.objects.filter(flavor=flavor, project_id=project_id).delete()
    if not deleted:
        raise NotFound(f"Project {project_id} has no access to flavor {flavor.name}.")
