"""What a resource pool's ``members`` name, resolved in one place (the report's check and
the pool sync both ask here).

A member is an aggregate's uuid, or a name: the name of a host (one that has reported, or
will: a pool may list hosts before they report) and/or of an aggregate (resolved through
:mod:`providers.aggregate_names` each time, so the hosts of a named aggregate join and leave
as the aggregate, its name or its members change). A name that is no aggregate's and cannot
be a host name is unknown: the report is refused naming it.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

from placementsite.core import uuids

from ..aggregate_names import aggregate_uuids_named
from ..host_reports import hostname_valid


@dataclass(frozen=True)
class PoolMembers:
    hostnames: list[str] = field(default_factory=list)  # names that may be hosts
    aggregates: list[str] = field(default_factory=list)  # aggregate uuids, given or named
    unknown: list[str] = field(default_factory=list)  # names neither a host's nor an aggregate's


def pool_members(*, members: Sequence[str]) -> PoolMembers:
    """Resolve a pool's ``members`` (in their order) with one read of aggregate names."""
    names = [m for m in members if uuids.parse(m) is None]
    named = aggregate_uuids_named(names)
    found = PoolMembers()
    for member in members:
        parsed = uuids.parse(member)
        if parsed is not None:
            found.aggregates.append(str(parsed))
            continue
        if member in named:
            found.aggregates.append(named[member])
        if hostname_valid(member):
            found.hostnames.append(member)
        elif member not in named:
            found.unknown.append(member)
    return found
