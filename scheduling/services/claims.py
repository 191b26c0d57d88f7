"""Claiming resources for a consumer: the same write as ``PUT /allocations/{consumer}``.

Kept apart from servers so that moves (resize, migrate, evacuate) claim the same way.
"""

import logging
from collections.abc import Callable, Sequence
from uuid import UUID

from django.db import transaction

from allocations.services.allocations import (
    AllocationRefused,
    ConsumerAllocationWrite,
    ProviderGone,
    allocation_replace,
    allocations_replace,
)
from placementsite.core.exceptions import ConcurrentUpdate, Conflict

from ..host_limits import claim_checked

logger = logging.getLogger("placement.scheduler")

# A concurrent update (a provider generation moved under us, a deadlock) is retried this many
# times with a fresh read before the host is given up.
CONCURRENT_RETRIES = 3


class ClaimFailed(Exception):
    """The host could not take the allocations (capacity taken since the candidates were read,
    a provider of the candidate deleted since by a host sync, or concurrent updates past the
    retries)."""

    def __init__(self, detail: str, *, retries: int = 0, provider_uuid: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.retries = retries
        self.provider_uuid = provider_uuid  # the provider that refused, when known


def allocation_claim(
    *,
    consumer_uuid: UUID | str,
    allocations: dict[str, dict[str, int]],
    project_id: str,
    user_id: str,
    generation: int | None = None,
    consumer_type: str = "INSTANCE",
    then: Callable[[], object] | None = None,
) -> int:
    """Write ``allocations`` (``{provider uuid: {class: amount}}``) for the consumer, with
    ``consumer_generation`` ``generation`` (None: a new consumer). ``then()`` runs in the same
    transaction once the allocations are written (e.g. saving the server record), so both stay
    or neither does.

    A concurrent-update 409 is retried with a fresh read (the write re-reads everything after
    its row locks); a capacity 409 raises ClaimFailed at once. Returns how many retries it took.
    """
    consumer = ConsumerAllocationWrite(
        consumer_uuid=str(consumer_uuid),
        allocations=allocations,
        project_id=project_id,
        user_id=user_id,
        generation=generation,
        consumer_type=consumer_type,
        assign_devices=True,
    )
    retries = 0
    while True:
        try:
            # This savepoint undoes a failed write for the retry: the write needs none of its own.
            with transaction.atomic():
                allocation_replace(consumer=consumer, savepoint=False)
                claim_checked([allocations])
                if then is not None:
                    then()
            return retries
        except ProviderGone as exc:  # the candidate is stale: its host changed shape
            raise ClaimFailed(exc.detail, retries=retries) from None
        except Conflict as exc:
            if not isinstance(exc, ConcurrentUpdate) or retries >= CONCURRENT_RETRIES:
                raise ClaimFailed(exc.detail, retries=retries) from None
            retries += 1
            logger.info(
                "Claim for %s hit a concurrent update, retrying (%d)", consumer_uuid, retries
            )


def allocations_claim(
    *,
    claims: Sequence[tuple[UUID | str, dict[str, dict[str, int]]]],
    project_id: str,
    user_id: str,
    consumer_type: str = "INSTANCE",
    then: Callable[[], object] | None = None,
    host_limits: bool = True,
) -> int:
    """Write the allocations of several new consumers (``[(consumer uuid, {provider uuid:
    {class: amount}})]``) in one write, all or none (``POST /allocations``'s: every provider
    locked once, in id order). ``then()`` runs in the same transaction once they are written.

    Retries a concurrent update as :func:`allocation_claim` does; a refusal raises ClaimFailed
    naming the provider that refused (``provider_uuid``) when the write says which.
    ``host_limits``: False when the caller's pass saw no host with a host-level limit among
    the claim's (scheduling.host_limits), sparing the check's statement.
    """
    consumers = [
        ConsumerAllocationWrite(
            consumer_uuid=str(consumer_uuid),
            allocations=allocations,
            project_id=project_id,
            user_id=user_id,
            generation=None,
            consumer_type=consumer_type,
            assign_devices=True,
        )
        for consumer_uuid, allocations in claims
    ]
    retries = 0
    while True:
        try:
            # This savepoint undoes a failed write for the retry: the write needs none of its own.
            with transaction.atomic():
                allocations_replace(consumers=consumers, savepoint=False)
                if host_limits:
                    claim_checked([allocations for _uuid, allocations in claims])
                if then is not None:
                    then()
            return retries
        except ProviderGone as exc:
            raise ClaimFailed(exc.detail, retries=retries, provider_uuid=_named(exc)) from None
        except Conflict as exc:
            if not isinstance(exc, ConcurrentUpdate) or retries >= CONCURRENT_RETRIES:
                provider = (
                    getattr(exc, "provider_uuid", None)
                    if isinstance(exc, AllocationRefused)
                    else None
                )
                raise ClaimFailed(exc.detail, retries=retries, provider_uuid=provider) from None
            retries += 1
            logger.info("Claims hit a concurrent update, retrying (%d)", retries)


def _named(exc: ProviderGone) -> str | None:
    """The provider uuid a ProviderGone names in its detail."""
    detail = exc.detail
    start = detail.find("'")
    end = detail.find("'", start + 1)
    return detail[start + 1 : end] if 0 <= start < end else None
