"""Flavors as a caller sees them: the public ones, the private ones its project was given
(Nova's flavor access), or every one for those a policy rule lets see all projects'. The one
lookup of a flavor by name or id that every edge uses."""

import re
from dataclasses import dataclass

from django.db.models import Exists, OuterRef, Q, QuerySet

from ..models import Flavor, FlavorAccess

# A flavor id is ASCII digits (str.isdigit() also accepts "²", which int() refuses).
_ID = re.compile(r"[0-9]{1,10}")
_MAX_ID = 2**31 - 1


@dataclass(frozen=True)
class FlavorViewer:
    """Who looks: the caller's project, and whether it may see every private flavor."""

    project_id: str | None
    all_projects: bool = False


#: Internal callers (commands, the operator's dashboard): every flavor.
EVERY_FLAVOR = FlavorViewer(project_id=None, all_projects=True)


def flavors_visible(*, viewer: FlavorViewer) -> QuerySet:
    """The flavors ``viewer`` may list and use."""
    flavors = Flavor.objects.all()
    if viewer.all_projects:
        return flavors
    given = FlavorAccess.objects.filter(flavor=OuterRef("pk"), project_id=viewer.project_id)
    return flavors.filter(Q(is_public=True) | Exists(given))


def flavor_lookup(*, value: str | int, viewer: FlavorViewer = EVERY_FLAVOR) -> Flavor | None:
    """The flavor named ``value``, else the one of that id; None when there is none the
    viewer may see (a private flavor of other projects looks like no flavor at all)."""
    flavors = flavors_visible(viewer=viewer)
    text = str(value)
    found = flavors.filter(name=text).first()
    if found is None and _ID.fullmatch(text) and int(text) <= _MAX_ID:
        found = flavors.filter(pk=int(text)).first()
    return found


def flavor_projects(*, flavor: Flavor) -> list[str]:
    """The projects given a private flavor, in order."""
    return list(
        FlavorAccess.objects.filter(flavor=flavor)
        .order_by("project_id")
        .values_list("project_id", flat=True)
    )
