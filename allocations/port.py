"""What the allocations app offers providers: the implementation of
:class:`providers.allocations_port.AllocationsPort`, installed at startup
(``AllocationsConfig.ready``). Each member is one of this app's selectors or services, so the
rules stay where they are written."""

from providers.allocations_port import ConsumerHoldings
from providers.services.inventories import ProviderInventories

from .selectors.allocations import consumers_holding
from .selectors.devices import device_unit_holders
from .selectors.usage import (
    classes_in_use,
    usage_by_provider_and_class,
    usage_joined_rows,
    usage_subquery,
)
from .services.allocations import ConsumerAllocationWrite, allocations_reshape

__all__ = [
    "classes_in_use",
    "consumers_holding",
    "device_unit_holders",
    "holdings_move",
    "usage_by_provider_and_class",
    "usage_joined_rows",
    "usage_subquery",
]


def holdings_move(
    *, inventories: dict[str, ProviderInventories], consumers: list[ConsumerHoldings]
) -> None:
    """The reshaper, for a caller that speaks in holdings: every consumer's whole new
    allocations, checked against the generation it was read at."""
    allocations_reshape(
        inventories=inventories,
        consumers=[
            ConsumerAllocationWrite(
                consumer_uuid=c.consumer_uuid,
                allocations={rp: dict(resources) for rp, resources in c.allocations.items()},
                project_id=c.project_id,
                user_id=c.user_id,
                generation=c.generation,
                consumer_type=c.consumer_type,
            )
            for c in consumers
        ],
        allow_reserved_equal_total=True,
    )
