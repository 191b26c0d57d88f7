"""Claiming resources for a consumer: the same write as ``PUT /allocations/{consumer}``.

Kept apart from servers so that moves (resize, migrate, evacuate) claim the same way.
"""

import logging

from django.db import transaction

from allocations.services.allocations import (
    ConsumerAllocations,
    ProviderGone,
    allocation_replace,
)
from placementsite.core.exceptions import ConcurrentUpdate, Conflict

logger = logging.getLogger("placement.scheduler")

# A concurrent update (a provider generation moved under us, a deadlock) is retried this many
# times with a fresh read before the host is given up.
CONCURRENT_RETRIES = 3


class ClaimFailed(Exception):
    """The host could not take the allocations (capacity taken since the candidates were read,
    a provider of the candidate deleted since by a host sync, or concurrent updates past the
    retries)."""

    def __init__(self, detail, *, retries=0):
        super().__init__(detail)
        self.detail = detail
        self.retries = retries


def allocation_claim(
    *,
    consumer_uuid,
    allocations,
    project_id,
    user_id,
    generation=None,
    consumer_type="INSTANCE",
    then=None,
):
    """Write ``allocations`` (``{provider uuid: {class: amount}}``) for the consumer, with
    ``consumer_generation`` ``generation`` (None: a new consumer). ``then()`` runs in the same
    transaction once the allocations are written (e.g. saving the server record), so both stay
    or neither does.

    A concurrent-update 409 is retried with a fresh read (the write re-reads everything after
    its row locks); a capacity 409 raises ClaimFailed at once. Returns how many retries it took.
    """
    consumer = ConsumerAllocations(
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
            with transaction.atomic():
                allocation_replace(consumer=consumer)
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
