"""Provider generations: the optimistic lock every provider write takes.

A write reads the provider row ``FOR UPDATE`` (so concurrent writers queue
instead of both passing the check), compares the generation the client
sent, changes what it changes, and bumps the generation with a
compare-and-swap update, all in one transaction.
"""

import uuid as uuidlib
from collections.abc import Iterable

from django.db import connection
from django.db.models import F

from placementsite.core import uuids
from placementsite.core.exceptions import ConcurrentUpdate, NotFound

from ..models import ResourceProvider

GENERATION_CONFLICT = (
    "resource provider generation conflict: the provider was changed by another "
    "request. Please update the generation and try again."
)


def provider_not_found(*, uuid: str | uuidlib.UUID) -> NotFound:
    return NotFound(f"No resource provider with uuid {uuid} found")


def provider_for_update(*, uuid: str | uuidlib.UUID) -> ResourceProvider:
    """Lock and return the provider; 404 when there is none (or ``uuid`` names no uuid, as
    a URL may). Needs a transaction."""
    named = uuids.parse(uuid)
    provider = None
    if named is not None:
        provider = ResourceProvider.objects.select_for_update().filter(uuid=named).first()
    if provider is None:
        raise provider_not_found(uuid=uuid)
    return provider


def providers_for_update(*, uuids: Iterable[str]) -> dict[str, ResourceProvider]:
    """Lock several providers, always in id order so writers cannot deadlock."""
    found = list(ResourceProvider.objects.select_for_update().filter(uuid__in=uuids).order_by("id"))
    return {str(p.uuid): p for p in found}


def check_generation(
    *, provider: ResourceProvider, generation: int, message: str = GENERATION_CONFLICT
) -> None:
    if generation != provider.generation:
        raise ConcurrentUpdate(message)


def bump_generation(*, provider: ResourceProvider) -> int:
    """Increment the generation iff nobody else did; updates ``provider`` in place."""
    updated = ResourceProvider.objects.filter(
        pk=provider.pk, generation=provider.generation
    ).update(generation=F("generation") + 1)
    if not updated:
        raise ConcurrentUpdate(GENERATION_CONFLICT)
    provider.generation += 1
    return provider.generation


_BUMP = """
    UPDATE providers_resourceprovider p SET generation = p.generation + 1
    FROM unnest(%s::bigint[], %s::bigint[]) AS seen(id, generation)
    WHERE p.id = seen.id AND p.generation = seen.generation
    RETURNING p.id
"""


def bump_generations(*, providers: Iterable[ResourceProvider]) -> None:
    """:func:`bump_generation` for several providers (locked by the caller) in one statement:
    each incremented iff nobody else did; raises ConcurrentUpdate unless all were."""
    ordered = sorted(providers, key=lambda p: p.id)
    if not ordered:
        return
    if connection.vendor != "postgresql":
        for provider in ordered:
            bump_generation(provider=provider)
        return
    with connection.cursor() as cursor:
        cursor.execute(_BUMP, [[p.id for p in ordered], [p.generation for p in ordered]])
        bumped = {row_id for (row_id,) in cursor.fetchall()}
    if len(bumped) != len(ordered):
        raise ConcurrentUpdate(GENERATION_CONFLICT)
    for provider in ordered:
        provider.generation += 1
