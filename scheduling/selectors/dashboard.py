"""The dashboard's reads about flavors: the list with server counts, "fits N more", and those
the Schedule page offers."""

import time

from django.db.models import Count

from placementsite.core.exceptions import DomainError

from ..models import Flavor
from .capacity import flavor_capacity

# How long a page may spend counting "fits N more" (each count is a simulated fill of every
# host); flavors not reached within it show no count rather than slow the page.
FITS_PAGE_BUDGET = 3.0


def flavors_to_schedule():
    """The flavors the Schedule page offers: every enabled one, smallest first."""
    return Flavor.objects.filter(disabled=False).order_by("vcpus", "ram", "name")


def flavors_with_counts():
    return Flavor.objects.annotate(server_count=Count("servers")).order_by("vcpus", "ram", "name")


def flavor_fits(*, budget=FITS_PAGE_BUDGET):
    """``[(flavor, instances that still fit)]`` for every enabled public flavor, smallest
    first, each the capacity simulation's total; a flavor naming an unknown class, or not
    reached within ``budget`` seconds, counts as None."""
    found = []
    deadline = time.monotonic() + budget
    for flavor in Flavor.objects.filter(disabled=False, is_public=True).order_by(
        "vcpus", "ram", "name"
    ):
        if time.monotonic() > deadline:
            found.append((flavor, None))
            continue
        try:
            found.append((flavor, flavor_capacity(flavor=flavor).total))
        except (DomainError, LookupError):
            found.append((flavor, None))
    return found
