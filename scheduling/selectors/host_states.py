"""The scheduler's host states: the hosts of the engine's answer, each with what filters and
weighers read of it.

A pass over a thousand hosts reads each kind of fact once for all of them, and only when a
plugin (or the scheduler) first asks for it: usage and capacity per class (every weigher
asks), the tree's providers and traits, the compute reports, the candidates rendered with
uuids (the claim asks for one host's, the answer for a few alternates'). Aggregates and the
enabled/stale marks, which the built-in filters read, are read up front: two small queries.
"""

from collections import defaultdict

from providers.capacity import usable_units
from providers.models import ComputeNode
from providers.selectors import compute_nodes

from .. import queries
from ..candidates import trait_lists
from ..models import AggregateMetadata
from ..plugins import HostState


def host_states(found):
    """``[HostState]`` (by name) for the hosts of the engine's answer (a
    :class:`~scheduling.candidates.Found`), each with the candidates that land on it.

    A candidate lands on the tree of its providers that are not sharing providers (the one
    tree the engine built it for); a candidate of sharing providers alone on the first tree
    they belong to.
    """
    by_host = {}
    for candidate in found.candidates:
        by_host.setdefault(candidate_root(found, candidate), []).append(candidate)
    if not by_host:
        return []
    tree = PassTrees(found, by_host)
    hosts = {}
    for provider_id, uuid, name in queries.provider_names(by_host):
        tree.uuids[provider_id] = uuid
        hosts[provider_id] = HostState(uuid=uuid, name=name, id=provider_id, tree=tree)
    _add_aggregates(hosts)
    _add_availability(hosts)
    return sorted(hosts.values(), key=lambda h: h.name)


def candidate_root(found, candidate):
    """The root id of the host a candidate lands on (see :func:`host_states`)."""
    allocations = candidate[0]
    root_of, sharing = found.root_of, found.sharing
    if not sharing:  # every provider is of the one tree the candidate was built for
        return root_of[allocations[0][0][0]]
    providers = {p for (p, _c), _a in allocations}
    roots = {root_of[p] for p in providers if p not in sharing}
    return min(roots or {root_of[p] for p in providers})


class PassTrees:
    """What one scheduling pass knows of its hosts' trees, by root id; each part is read for
    every host at once on first use (see the module docstring)."""

    def __init__(self, found, by_host):
        self.found = found
        self.by_host = by_host  # root id -> [candidates by id]
        self.uuids = {}  # provider id -> uuid, the roots' first
        self._totals = None
        self._rows = None
        self._inventories = None
        self._members = None
        self._traits = None
        self._reports = None
        self._rendered = {}

    # usage and capacity
    def totals(self, root_id):
        """``{class: [capacity, used]}`` summed over the tree."""
        if self._totals is None:
            self._read_inventories()
        return self._totals.get(root_id, {})

    def _read_inventories(self):
        """Sum each tree's classes; keep the rows for :meth:`inventories`."""
        totals = defaultdict(dict)
        rows = []
        for row in queries.tree_inventories_with_usage(self.by_host):
            root_id, provider_id, name, total, reserved, ratio, used = row
            capacity = usable_units(total, reserved, ratio)
            rows.append((provider_id, name, capacity, used))
            pair = totals[root_id].get(name)
            if pair is None:
                totals[root_id][name] = [capacity, used]
            else:
                pair[0] += capacity
                pair[1] += used
        self._totals, self._rows = totals, rows

    # the trees' providers
    def _tree_members(self):
        """``{root id: [(id, uuid, parent id)]}`` in id order."""
        if self._members is None:
            self._members = defaultdict(list)
            for provider_id, uuid, parent_id, root_id in queries.tree_members(self.by_host):
                self.uuids[provider_id] = uuid
                self._members[root_id].append((provider_id, uuid, parent_id))
        return self._members

    def providers(self, root_id):
        uuids = self.uuids
        members = self._tree_members()[root_id]
        return [(uuid, uuids[parent] if parent else None) for _id, uuid, parent in members]

    def inventories(self, root_id):
        if self._inventories is None:
            if self._totals is None:
                self._read_inventories()
            self._inventories = defaultdict(dict)
            for provider_id, name, capacity, used in self._rows:
                self._inventories[provider_id][name] = {"capacity": capacity, "used": used}
        return {
            uuid: self._inventories.get(provider_id, {})
            for provider_id, uuid, _parent in self._tree_members()[root_id]
        }

    def traits(self, root_id):
        members = self._tree_members()
        if self._traits is None:
            self._traits = trait_lists([m[0] for tree in members.values() for m in tree])
        return {
            uuid: self._traits.get(provider_id, []) for provider_id, uuid, _p in members[root_id]
        }

    # the host's report
    def report(self, root_id):
        if self._reports is None:
            self._reports = {
                node.provider.root_id: node
                for node in ComputeNode.objects.filter(
                    provider__root_id__in=list(self.by_host)
                ).select_related("provider")
            }
        return self._reports.get(root_id)

    # the candidates, as a client sees them
    def candidates(self, root_id):
        """The host's candidates as a client sees them; one naming a provider deleted since
        the engine read it (a host sync changed the tree's shape) is stale and left out."""
        if root_id not in self._rendered:
            found = self.by_host[root_id]
            self._know_uuids(p for (p, _c), _a in _allocations(found))
            uuids = self.uuids
            self._rendered[root_id] = [
                self.found.render(c, uuids)
                for c in found
                if all(p in uuids for (p, _c), _a in c[0])
                and all(p in uuids for _s, ps in c[1] for p in ps)
            ]
        return self._rendered[root_id]

    def _know_uuids(self, provider_ids):
        """Read the uuids not known yet (children and sharing providers) in one query."""
        missing = set(provider_ids) - self.uuids.keys()
        if missing:
            self.uuids.update((pk, uuid) for pk, uuid, _name in queries.provider_names(missing))


def _allocations(candidates):
    return [entry for allocations, _mappings in candidates for entry in allocations]


def _add_aggregates(hosts):
    aggregate_ids = {}
    for provider_id, aggregate_id, uuid in queries.provider_aggregates(hosts):
        aggregate_ids.setdefault(provider_id, set()).add(aggregate_id)
        hosts[provider_id].aggregates |= {uuid}
    wanted = set().union(*aggregate_ids.values()) if aggregate_ids else set()
    if not wanted:
        return
    metadata = {
        row["aggregate_id"]: row
        for row in AggregateMetadata.objects.filter(aggregate_id__in=wanted).values(
            "aggregate_id", "name", "availability_zone", "metadata"
        )
    }
    for provider_id, ids in aggregate_ids.items():
        hosts[provider_id].aggregate_metadata = [metadata[i] for i in sorted(ids) if i in metadata]


def availability_zone_of(provider_id):
    """The zone of the host ``provider_id`` as its host state gives it ("" for none): the
    first of its aggregates (by id) with a zone. One query."""
    zone = (
        AggregateMetadata.objects.filter(aggregate__resource_providers__id=provider_id)
        .exclude(availability_zone="")
        .order_by("aggregate_id")
        .values_list("availability_zone", flat=True)
        .first()
    )
    return zone or ""


def _add_availability(hosts):
    """Disabled and stale hosts as the host-sync selector says (hosts made through the
    Placement API alone have no report and count as enabled). Only the unavailable hosts are
    read here: they are few, the available ones need nothing."""
    unavailable = set(compute_nodes.unavailable_root_ids()) & set(hosts)
    if unavailable:
        for root_id, state in compute_nodes.host_states(provider_ids=unavailable).items():
            hosts[root_id].enabled = state["enabled"]
            hosts[root_id].disabled_reason = state["disabled_reason"]
            hosts[root_id].forced_down = state["forced_down"]
            hosts[root_id].stale = state["stale"]
