"""Names a scheduling request gives (a target host, an availability zone): each must exist, or
the request is a 400 naming it, never a 409 no_valid_host after a pass that could not succeed."""

from django.db.models import F, Q, QuerySet

from placementsite.core import uuids
from placementsite.core.exceptions import InvalidRequest
from providers.models import Aggregate, ResourceProvider

from ..models import AggregateMetadata


class UnknownName(InvalidRequest):
    code = "scheduler.unknown_name"


def _hosts_named(name: str) -> QuerySet[ResourceProvider]:
    """The hosts (root providers) of this name or uuid."""
    match = Q(name=name)
    parsed = uuids.parse(name)
    if parsed is not None:
        match |= Q(uuid=parsed)
    return ResourceProvider.objects.filter(match, root_id=F("id"))


def host_exists(*, name: str) -> bool:
    """A host (a root provider) of this name or uuid."""
    return _hosts_named(name).exists()


def target_host_roots(*, target: str) -> frozenset[int]:
    """The root ids of the hosts a ``target_host`` hint names (by name or uuid): a superset
    of those the target host filter keeps (it compares the hint's text)."""
    return frozenset(_hosts_named(target).values_list("id", flat=True))


def zone_exists(*, zone: str) -> bool:
    """An availability zone: an aggregate's uuid, or a name or zone in aggregate metadata."""
    parsed = uuids.parse(zone)
    if parsed is not None and Aggregate.objects.filter(uuid=parsed).exists():
        return True
    return AggregateMetadata.objects.filter(Q(availability_zone=zone) | Q(name=zone)).exists()


def check_names(*, target_host: str | None = None, availability_zone: str | None = "") -> None:
    """Raise UnknownName for a target host or an availability zone that does not exist."""
    if target_host and not host_exists(name=target_host):
        raise UnknownName(f"No host {target_host}.")
    if availability_zone and not zone_exists(zone=availability_zone):
        raise UnknownName(f"No availability zone {availability_zone}.")
