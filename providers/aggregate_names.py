"""The seam through which providers read aggregates' names, which another app keeps.

Placement knows an aggregate by its uuid only; names (with zones and metadata) are what
Nova's host aggregates add, and here the scheduling app keeps them
(``scheduling.models.AggregateMetadata``, served as ``/api/aggregates/``). A resource pool's
``members`` may name an aggregate by its name, so the pool report and the pool sync need to
resolve names; importing the scheduling app would reverse the one-way arrow
(``tests/test_layering.py``). As with :mod:`providers.allocations_port`, the need is declared
here as a Protocol and the scheduling app installs its answer when Django starts
(``SchedulingConfig.ready``); ``tests/providers/test_pool_member_names.py`` checks both.
"""

from collections.abc import Iterable
from typing import Protocol

from django.core.exceptions import ImproperlyConfigured


class AggregateNames(Protocol):
    def aggregate_uuids_named(self, *, names: Iterable[str]) -> dict[str, str]:
        """``{name: aggregate uuid}`` for the names among ``names`` that an aggregate has."""


_installed: AggregateNames | None = None


def install(implementation: AggregateNames) -> None:
    """Called once, by the scheduling app when Django starts."""
    global _installed
    _installed = implementation


def aggregate_uuids_named(names: Iterable[str]) -> dict[str, str]:
    """``{name: aggregate uuid}`` of the named aggregates; ImproperlyConfigured when no app
    keeps aggregate names."""
    if _installed is None:
        raise ImproperlyConfigured("Aggregate names need the scheduling app in INSTALLED_APPS.")
    names = sorted(set(names))
    return _installed.aggregate_uuids_named(names=names) if names else {}
