"""Trait writes: custom traits, and the set of traits a provider has.

Each function is one transaction. Writes to a provider's traits lock the
provider row, check the generation the client read and bump it (see
generations.py). The traits a provider is about to reference are held with
``FOR KEY SHARE`` so that a concurrent ``trait_delete`` either waits and then
sees them in use, or finishes first and the write reports them unknown: it
never ends in a foreign-key error at commit.
"""

import uuid as uuidlib
from collections.abc import Collection, Iterable

from django.db import IntegrityError, connection, transaction

from placementsite.core.exceptions import Conflict, InvalidRequest

from ..models import CUSTOM_NAME_RE, ResourceProvider, ResourceProviderTrait, Trait
from ..selectors.traits import trait_not_found, traits_of_provider
from .generations import bump_generation, check_generation, provider_for_update

INVALID_TRAIT_NAME = (
    "The trait is invalid. A valid trait must be no longer than 255 characters, start with "
    'the prefix "CUSTOM_" and use following characters: "A"-"Z", "0"-"9" and "_"'
)
PROVIDER_GENERATION_CHANGED = (
    "Resource provider's generation already changed. Please update the generation and try again."
)


def _require_custom_name(name: str) -> None:
    if len(name) > 255 or not CUSTOM_NAME_RE.fullmatch(name):
        raise InvalidRequest(INVALID_TRAIT_NAME)


def trait_ensure(*, name: str) -> tuple[Trait, bool]:
    """Create the custom trait ``name`` unless it exists; returns ``(trait, created)``."""
    _require_custom_name(name)
    existing = Trait.objects.filter(name=name).first()
    if existing is not None:
        return existing, False
    try:
        with transaction.atomic():
            return Trait.objects.create(name=name), True
    except IntegrityError:  # created concurrently: that is what was asked for
        return Trait.objects.get(name=name), False


def trait_delete(*, name: str) -> None:
    """Delete a custom trait no provider has."""
    with transaction.atomic():
        trait = Trait.objects.select_for_update().filter(name=name).first()
        if trait is None:
            raise trait_not_found(names=[name])
        if not trait.is_custom:
            raise InvalidRequest(f"Cannot delete standard trait {name}.")
        if ResourceProviderTrait.objects.filter(trait=trait).exists():
            raise Conflict(f"The trait {name} is in use by a resource provider.")
        trait.delete()


def trait_ids_held(*, names: Collection[str]) -> dict[str, int]:
    """``{name: id}`` of the existing traits among ``names``, held until the transaction ends.

    ``FOR KEY SHARE`` lets other writers reference the same traits but makes
    ``trait_delete`` (``FOR UPDATE``) wait; a trait deleted while this waits
    is simply not returned.
    """
    if not names:
        return {}
    if connection.vendor != "postgresql":  # SQLite serialises writers
        return dict(Trait.objects.filter(name__in=names).values_list("name", "id"))
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT name, id FROM {Trait._meta.db_table} WHERE name = ANY(%s) "
            "ORDER BY id FOR KEY SHARE",
            [list(names)],
        )
        return dict(cursor.fetchall())


def _replace_traits(provider: ResourceProvider, trait_ids: Iterable[int]) -> bool:
    """Make ``trait_ids`` the provider's traits; True when anything was added or removed."""
    current = set(
        ResourceProviderTrait.objects.filter(resource_provider=provider).values_list(
            "trait_id", flat=True
        )
    )
    wanted = set(trait_ids)
    if wanted == current:
        return False
    ResourceProviderTrait.objects.filter(
        resource_provider=provider, trait_id__in=current - wanted
    ).delete()
    ResourceProviderTrait.objects.bulk_create(
        [
            ResourceProviderTrait(resource_provider=provider, trait_id=trait_id)
            for trait_id in sorted(wanted - current)
        ]
    )
    return True


def provider_traits_set(
    *, provider_uuid: str | uuidlib.UUID, traits: Iterable[str], generation: int
) -> tuple[ResourceProvider, list[Trait]]:
    """Replace a provider's traits; returns ``(provider, its traits in stable order)``.

    A stale ``generation`` is a 409 ``placement.concurrent_update``; unknown
    trait names are a 400 naming them. The generation is bumped when a trait is added or
    removed; the traits the provider already has, sent again (as agents do on every resync),
    change nothing, as in Placement.
    """
    names = list(dict.fromkeys(traits))
    with transaction.atomic():
        provider = provider_for_update(uuid=provider_uuid)
        check_generation(
            provider=provider, generation=generation, message=PROVIDER_GENERATION_CHANGED
        )
        found = trait_ids_held(names=names)
        missing = [name for name in names if name not in found]
        if missing:
            raise InvalidRequest(f"No such trait {', '.join(missing)}")
        if _replace_traits(provider, found.values()):
            bump_generation(provider=provider)
        return provider, traits_of_provider(provider=provider)


def provider_traits_delete(*, provider_uuid: str | uuidlib.UUID) -> ResourceProvider:
    """Remove every trait of a provider; bumps its generation when it had any."""
    with transaction.atomic():
        provider = provider_for_update(uuid=provider_uuid)
        if _replace_traits(provider, []):
            bump_generation(provider=provider)
        return provider
