"""Reads about traits: which exist, which a provider has, in a stable order.

Placement lists a provider's traits standard ones first, then custom ones,
each group in the order the traits were created (id order); clients and
tests compare those lists, so every listing here uses the same order.
"""

from collections import defaultdict
from collections.abc import Iterable

from django.db.models import BooleanField, Case, Exists, OuterRef, QuerySet, Value, When

from placementsite.core.exceptions import NotFound

from ..models import CUSTOM_PREFIX, ResourceProvider, ResourceProviderTrait, Trait
from ..services.generations import provider_not_found


def trait_not_found(*, names: Iterable[str]) -> NotFound:
    return NotFound(f"No such trait(s): {', '.join(names)}.")


def in_stable_order(*, traits: QuerySet) -> QuerySet:
    """Order a Trait queryset: standard before custom, each by id."""
    return traits.annotate(
        is_custom_trait=Case(
            When(name__startswith=CUSTOM_PREFIX, then=Value(True)),
            default=Value(False),
            output_field=BooleanField(),
        )
    ).order_by("is_custom_trait", "id")


def trait_get(*, name: str) -> Trait:
    """The trait called ``name``; 404 when there is none."""
    trait = Trait.objects.filter(name=name).first()
    if trait is None:
        raise trait_not_found(names=[name])
    return trait


def traits_list(
    *,
    names_in: Iterable[str] | None = None,
    prefix: str | None = None,
    associated: bool | None = None,
) -> list[Trait]:
    """Traits filtered as ``GET /traits`` filters them, in stable order.

    ``names_in``: only these names; ``prefix``: only names starting with it;
    ``associated``: True for traits some provider has, False for traits no
    provider has, None for both.
    """
    traits = Trait.objects.all()
    if names_in is not None:
        traits = traits.filter(name__in=list(names_in))
    if prefix is not None:
        traits = traits.filter(name__startswith=prefix)
    if associated is not None:
        in_use = Exists(ResourceProviderTrait.objects.filter(trait_id=OuterRef("pk")))
        traits = traits.filter(in_use) if associated else traits.exclude(in_use)
    return list(in_stable_order(traits=traits))


def traits_of_provider(*, provider: ResourceProvider | int) -> list[Trait]:
    """The traits of one provider (a ResourceProvider or its id), in stable order."""
    provider_id = getattr(provider, "pk", provider)
    return list(
        in_stable_order(
            traits=Trait.objects.filter(resourceprovidertrait__resource_provider_id=provider_id)
        )
    )


def trait_names_by_provider(*, provider_ids: Iterable[int]) -> dict[int, list[str]]:
    """``{provider_id: [trait names in stable order]}`` for many providers, in one query.

    Providers without traits map to an empty list.
    """
    ids = list(provider_ids)
    found: defaultdict[int, list[str]] = defaultdict(list)
    rows = in_stable_order(
        traits=Trait.objects.filter(resourceprovidertrait__resource_provider_id__in=ids)
    ).values_list("resourceprovidertrait__resource_provider_id", "name")
    for provider_id, name in rows:
        found[provider_id].append(name)
    return {provider_id: found.get(provider_id, []) for provider_id in ids}


def trait_ids_by_name(*, names: Iterable[str]) -> dict[str, int]:
    """``{name: id}`` for those of ``names`` that exist (unknown names are absent)."""
    return dict(Trait.objects.filter(name__in=list(names)).values_list("name", "id"))


def provider_traits(*, provider_uuid: str) -> tuple[ResourceProvider, list[Trait]]:
    """``(provider, its traits in stable order)``; 404 for an unknown provider."""
    provider = ResourceProvider.objects.filter(uuid=provider_uuid).first()
    if provider is None:
        raise provider_not_found(uuid=provider_uuid)
    return provider, traits_of_provider(provider=provider)
