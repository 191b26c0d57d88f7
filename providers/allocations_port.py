"""The one seam between providers and allocations: what providers may ask of allocations.

The arrow is ``allocations -> providers``: allocations consume providers' inventories, and
providers import nothing of allocations (``tests/test_layering.py``). Yet some of providers'
rules need what only allocations know: capacity checks and reports need usage, deleting a
host needs to know whether anything is allocated on it, and the host sync, when a host's tree
changes shape under running workloads, must move the consumers' allocations to the new
providers in the same transaction as the tree write (Nova's reshape).

This module declares that need as a Protocol, :class:`AllocationsPort`, and the named types
that cross it. The allocations app provides the implementation (``allocations/port.py``) and
installs it when Django starts (``AllocationsConfig.ready``); providers call :func:`port`.
One mechanism, chosen over the alternatives because it keeps the sync where the
architecture puts it (with the providers, beside the plugins and the diff) while the
allocation rows are written only by the allocation service, in its documented lock order:

- moving the sync to a layer above both apps would split "desired tree, diff, apply" across
  two places, and resource pools (which use the same machinery) would follow it there;
- reverse ORM relations (``provider.allocations``) would have providers read another app's
  tables directly, and writing them would bypass the allocation service's locks
  (``tests/test_layering.py`` refuses them in providers' code).

``tests/providers/test_allocations_port.py`` checks that the installed implementation offers
every member of the Protocol and that calling before installation fails loudly.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, NamedTuple, Protocol

from django.core.exceptions import ImproperlyConfigured

if TYPE_CHECKING:  # the services import this module: the type is for annotations only
    from .services.inventories import ProviderInventories


class ConsumerHoldings(NamedTuple):
    """Everything one consumer holds, as of its ``generation``: ``allocations`` maps provider
    uuids to ``{resource class: amount}`` (on every provider, not only the ones asked about)."""

    consumer_uuid: str
    generation: int
    project_id: str
    user_id: str
    consumer_type: str | None
    allocations: Mapping[str, Mapping[str, int]]


class AllocationsPort(Protocol):
    """What the allocations app offers providers (see the module docstring)."""

    def usage_subquery(self, *, provider: str, resource_class: str):
        """A subquery of the units allocated of one provider and class (for ``annotate``)."""

    def usage_joined_rows(self, *, inventories, name: str = "used"):
        """``inventories`` (a queryset) each with its usage joined in, not grouped."""

    def usage_by_provider_and_class(
        self, *, provider_ids: Iterable[int] | None = None, class_ids: Iterable[int] | None = None
    ) -> dict[tuple[int, int], int]:
        """``{(provider id, class id): used}``."""

    def classes_in_use(
        self, *, provider_id: int | None = None, class_ids: Iterable[int] | None = None
    ) -> list[str]:
        """The names of the classes allocated on ``provider_id`` (any provider when None),
        among ``class_ids`` (any class when None), in class id order."""

    def consumers_holding(self, *, provider_ids: Iterable[int]) -> list[ConsumerHoldings]:
        """Every consumer that holds anything on these providers, in uuid order."""

    def holdings_move(
        self,
        *,
        inventories: Mapping[str, ProviderInventories],
        consumers: list[ConsumerHoldings],
    ) -> None:
        """Write the providers' new inventories and the consumers' new allocations at once
        (the reshaper), each consumer's generation checked: a consumer changed since it was
        read is a ConcurrentUpdate. In the caller's transaction when there is one."""

    def device_unit_holders(self, *, unit_ids: Iterable[int]) -> dict[int, str]:
        """``{unit id: consumer uuid}`` of the device units among ``unit_ids`` assigned to a
        consumer (the sync never lets an assigned unit vanish)."""


_installed: AllocationsPort | None = None


def install(implementation: AllocationsPort) -> None:
    """Called once, by the allocations app when Django starts."""
    global _installed
    _installed = implementation


def port() -> AllocationsPort:
    """The installed implementation; ImproperlyConfigured without the allocations app."""
    if _installed is None:
        raise ImproperlyConfigured("Providers need the allocations app in INSTALLED_APPS.")
    return _installed
