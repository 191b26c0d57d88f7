"""The dashboard's reads about flavors: the list with server counts, "fits N more", and those
the Schedule page offers."""

from django.db.models import Count

from placementsite.core.exceptions import DomainError

from ..models import Flavor
from .capacity import flavor_capacity

# How many flavors the overview counts "fits N more" for (each count reads every host).
OVERVIEW_FLAVORS = 8


def flavors_to_schedule():
    """The flavors the Schedule page offers: every enabled one, smallest first."""
    return Flavor.objects.filter(disabled=False).order_by("vcpus", "ram", "name")


def flavors_with_counts():
    return Flavor.objects.annotate(server_count=Count("servers")).order_by("vcpus", "ram", "name")


def flavor_fits(*, limit=OVERVIEW_FLAVORS):
    """``[(flavor, instances that still fit)]`` for the first ``limit`` enabled public flavors,
    smallest first; a flavor naming an unknown class counts as None."""
    found = []
    for flavor in Flavor.objects.filter(disabled=False, is_public=True).order_by(
        "vcpus", "ram", "name"
    )[:limit]:
        try:
            found.append((flavor, flavor_capacity(flavor=flavor).total))
        except (DomainError, LookupError):
            found.append((flavor, None))
    return found
