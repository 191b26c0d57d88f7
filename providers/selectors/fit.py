"""Which providers can satisfy a request group on their own, and why the others cannot.

The dashboard's "try a request" page asks this for a handful of request
groups (:class:`~providers.request_groups.RequestGroup`, keyed
by suffix, ``""`` being the unnumbered group). Nothing here decides on its
own whether a provider fits:

* names are resolved by :func:`providers.request_groups.resolve_groups`;
* which rules each provider fails comes from the engine's set-based
  conditions (:func:`~providers.selectors.resource_providers.unmet_rules`,
  whose capacity rule is :func:`providers.capacity.can_provide_q`), for every
  provider and every group in one query;
* the amounts in the words (short of X by N, max_unit, step_size) come from
  the capacity model (:meth:`providers.capacity.Capacity.shortfalls` and
  :meth:`providers.capacity.Shortfall.describe`), read only for providers
  that failed a resource rule while having an inventory of the class.

Words are built only for the providers shown (the first ``shown`` of each
side, by name); the counts, including how many providers were left out for
each kind of reason, cover every provider. Providers that give the same
answers to every rule share one verdict, so the Python work grows with the
number of distinct answers, not with the number of providers.

Hosts: a host (a root provider) fits a group when some provider of its tree
fits it on its own, so a host whose VCPU sits on its NUMA children fits
through them; left-out hosts are counted once each, with the reasons of
their closest provider. Sharing providers (MISC_SHARES_VIA_AGGREGATE) are
reported apart: they lend resources to the hosts of their aggregates rather
than hosting anything. When no host fits, the largest free amount of each
requested class anywhere says how far the request is from fitting.

Scope, said plainly: providers are judged one by one. A group's resources
must all come from the one provider; trees (resources spread over a root and
its children) and sharing providers are not combined here, as the
allocation candidates engine does. Each provider of a tree is shown on its
own line with its own verdict.
"""

from collections import defaultdict
from dataclasses import dataclass, field
from heapq import merge
from itertools import islice, repeat
from typing import NamedTuple

from django.db.models import BooleanField, ExpressionWrapper, Q

from placementsite.core.db import reading_connection

from ..capacity import CAPACITY_FIELDS, EXCEEDS_CAPACITY, Capacity
from ..models import (
    SHARING_TRAIT,
    Inventory,
    ResourceProvider,
    ResourceProviderAggregate,
    ResourceProviderTrait,
)
from ..request_groups import (
    RequestGroup,
    ResolvedGroup,
    UnknownResourceClass,
    UnknownTrait,
    resolve_groups,
)
from ..usage import usage_subquery
from . import resource_providers as engine

# Kinds of reason, besides the capacity model's own rules
# (providers.capacity.BELOW_MIN_UNIT, ABOVE_MAX_UNIT, NOT_A_STEP, EXCEEDS_CAPACITY).
NO_INVENTORY = "no_inventory"
MISSING_TRAIT = "missing_trait"
FORBIDDEN_TRAIT = "forbidden_trait"
NOT_A_MEMBER = "not_member"
FORBIDDEN_AGGREGATE = "forbidden_aggregate"
OUTSIDE_TREE = "not_in_tree"

# The kind of reason a failed engine rule gives (resource rules are split further:
# no inventory at all, or the capacity model's shortfalls).
_KIND_OF_RULE = {
    engine.REQUIRED_TRAITS: MISSING_TRAIT,
    engine.FORBIDDEN_TRAITS: FORBIDDEN_TRAIT,
    engine.MEMBER_OF: NOT_A_MEMBER,
    engine.FORBIDDEN_AGGREGATES: FORBIDDEN_AGGREGATE,
    engine.IN_TREE: OUTSIDE_TREE,
}


class FitRequestError(ValueError):
    """The request names a resource class or trait that does not exist."""


class Reason(NamedTuple):
    kind: str
    text: str


class ProviderRef(NamedTuple):
    id: int
    uuid: object
    name: str
    parent_id: int | None
    root_id: int | None

    @property
    def is_root(self):
        return self.parent_id is None


@dataclass
class GroupReport:
    """One group's verdict: counts over every provider, and the first ``shown`` of each side."""

    suffix: str
    group: RequestGroup
    fitting_count: int = 0
    left_out_count: int = 0
    reason_counts: list = field(default_factory=list)  # (kind, count), most common first
    fitting: list = field(default_factory=list)  # (ProviderRef, [])
    left_out: list = field(default_factory=list)  # (ProviderRef, [Reason, ...])
    # Per host (root provider) rather than per provider; sharing providers apart.
    host_count: int = 0
    hosts_fitting: int = 0
    host_reason_counts: list = field(default_factory=list)  # (kind, hosts), most common first
    fitting_hosts: list = field(default_factory=list)  # (host ProviderRef, [fitting children])
    sharing: list = field(default_factory=list)  # (ProviderRef, [Reason, ...]); [] = fits
    largest_free: list = field(default_factory=list)  # LargestFree per class, when none fits

    @property
    def hosts_left_out(self):
        return self.host_count - self.hosts_fitting

    @property
    def label(self):
        return f"group {self.suffix}" if self.suffix else "unnumbered group"

    # What the group asks, in a stable order for the page.
    @property
    def required_traits(self):
        return [" or ".join(sorted(any_of)) for any_of in self.group.required_traits]

    @property
    def forbidden_traits(self):
        return sorted(self.group.forbidden_traits)

    @property
    def member_of(self):
        return [sorted(any_of) for any_of in self.group.member_of]

    @property
    def forbidden_aggregates(self):
        return sorted(self.group.forbidden_aggregates)


class LargestFree(NamedTuple):
    resource_class: str
    asked: int
    free: int | None  # None: no provider has inventory of the class
    provider: ProviderRef | None


# Ranking a left-out provider's failures to find its host's closest provider: lacking the
# class altogether is further from fitting than being short of it.
_DISTANCE = {NO_INVENTORY: 2}


def largest_free_by_class(class_ids, judge=None):
    """{class id: (provider id, free)} of the inventory with the most free units per class
    (free by the capacity model). Classes whose every inventory ``judge`` (a _CapacityJudge)
    has read already are answered from it; the others in one read of their inventories."""
    known = set(class_ids) & judge.whole_classes if judge is not None else set()
    rows = (
        [
            (rp, rc, capacity, used)
            for (rp, rc), (capacity, used) in judge.rows.items()
            if rc in known
        ]
        if known
        else []
    )
    rest = sorted(set(class_ids) - known)
    if rest:
        rows += [
            (rp, rc, Capacity(*shape), used)
            for rp, rc, *shape, used in Inventory.objects.filter(resource_class_id__in=rest)
            .annotate(used=usage_subquery())
            .values_list("resource_provider_id", "resource_class_id", *CAPACITY_FIELDS, "used")
        ]
    best = {}
    for rp, rc, capacity, used in rows:
        free = capacity.free(used)
        if rc not in best or free > best[rc][1]:
            best[rc] = (rp, free)
    return best


def provider_refs(ids):
    """{id: ProviderRef} for the providers to be shown (one query)."""
    rows = ResourceProvider.objects.filter(id__in=ids).values_list(
        "id", "uuid", "name", "parent_id", "root_id"
    )
    return {row[0]: ProviderRef._make(row) for row in rows}


def resolve_request(groups):
    """``{suffix: ResolvedGroup}``; an unknown class or trait name is a FitRequestError."""
    try:
        return resolve_groups(groups)
    except UnknownResourceClass as exc:
        raise FitRequestError(f"No such resource class: {', '.join(exc.names)}") from exc
    except UnknownTrait as exc:
        raise FitRequestError(f"No such trait: {', '.join(exc.names)}") from exc


@dataclass
class _Tally:
    """One group's counts, and the positions (in name order) of the providers kept."""

    resolved: ResolvedGroup
    fitting_count: int = 0
    left_out_count: int = 0
    counts: dict = field(default_factory=lambda: defaultdict(int))
    fitting: list = field(default_factory=list)  # lists of row positions, one per pattern
    left_out: list = field(default_factory=list)  # (positions, failed rules) per pattern
    left_kinds: list = field(default_factory=list)  # (kinds, classes short of) per pattern
    refined: dict = field(default_factory=dict)  # position -> capacity model's kinds
    failed_by_pattern: dict = field(default_factory=dict)  # pattern -> failed rules
    fitting_roots: set = field(default_factory=set)
    host_reason_counts: list = field(default_factory=list)


def fit_report(groups, shown=100):
    """One :class:`GroupReport` per group of ``groups`` (``{suffix: RequestGroup}``) that asks
    something, in the order given.

    Raises :class:`FitRequestError` for a resource class or trait name that
    does not exist (Placement answers such a request with a 400). A fixed
    number of queries whatever the number of providers or groups.
    """
    resolved = resolve_request({s: g for s, g in groups.items() if g.asks_something()})
    class_ids = sorted({class_id for r in resolved.values() for class_id in r.resources})
    column_of = {class_id: index for index, class_id in enumerate(class_ids)}
    has_inventory = {
        f"has_inventory_{class_id}": ExpressionWrapper(
            engine.has_inventory(resource_class_id=class_id), output_field=BooleanField()
        )
        for class_id in class_ids
    }
    rules, rows = engine.rule_verdicts(
        resolved_groups=list(resolved.values()),
        providers=ResourceProvider.objects.order_by("name"),
        **has_inventory,
    )
    rows = list(rows)

    # Providers with the same answers (which classes they have inventory of, which
    # rules they meet) get the same verdict: judge each such pattern once.
    positions = defaultdict(list)  # pattern -> positions of its providers in name order
    for position, row in enumerate(rows):
        positions[row[1:]].append(position)

    tallies = [_Tally(r) for r in resolved.values()]
    wanted = defaultdict(set)  # class id -> providers whose inventory of it must be read
    short = []  # per group: (positions, class ids short of)
    column = len(class_ids)
    for tally, rules_of_group in zip(tallies, rules, strict=True):
        stop = column + len(rules_of_group)
        short.append(_tally_group(tally, rules_of_group, positions, (column, stop), column_of))
        for where, short_of in short[-1]:
            for class_id in short_of:
                wanted[class_id].update(rows[p][0] for p in where)
        column = stop

    judge = _CapacityJudge(wanted)
    for tally, shortfalls in zip(tallies, short, strict=True):
        _count_shortfalls(tally, shortfalls, judge, rows)

    # Hosts: which trees have a fitting provider; sharing providers apart (two queries).
    root_of = dict(ResourceProvider.objects.values_list("id", "root_id"))
    sharing_ids = set(
        ResourceProviderTrait.objects.filter(trait__name=SHARING_TRAIT).values_list(
            "resource_provider_id", flat=True
        )
    )
    for tally in tallies:
        _count_hosts(tally, rows, root_of, sharing_ids)
    hosts = {root_of[pid] or pid for pid in root_of} - sharing_ids
    picked = [_pick(tally, rows, shown, root_of, sharing_ids) for tally in tallies]
    return _reports(resolved, tallies, picked, judge, root_of, len(hosts))


def _tally_group(tally, rules, positions, span, column_of):
    """Count one group's verdict over every pattern of answers into ``tally``.

    ``span`` is the ``(start, stop)`` of the group's rule columns in a pattern. Returns
    ``[(positions, class ids), ...]``: providers that have an inventory of a class but
    failed its resource rule, whose reasons the capacity model must tell.
    """
    start, stop = span
    shortfalls = []
    for pattern, where in positions.items():
        met = pattern[start:stop]
        if all(met):
            tally.fitting_count += len(where)
            tally.fitting.append(where)
            continue
        failed = [rule for rule, ok in zip(rules, met, strict=True) if not ok]
        tally.left_out_count += len(where)
        tally.left_out.append((where, failed))
        tally.failed_by_pattern[pattern] = failed
        kinds, short_of = set(), []
        tally.left_kinds.append((kinds, short_of))
        for rule in failed:
            if rule.kind != engine.RESOURCES:
                kinds.add(_KIND_OF_RULE[rule.kind])
            elif pattern[column_of[rule.subject]]:
                short_of.append(rule.subject)
            else:
                kinds.add(NO_INVENTORY)
        for kind in kinds:
            tally.counts[kind] += len(where)
        if short_of:
            shortfalls.append((where, short_of))
    return shortfalls


def _count_shortfalls(tally, shortfalls, judge, rows):
    """Count which of the capacity model's rules refused, for providers with the inventory."""
    amounts = tally.resolved.resources
    for where, short_of in shortfalls:
        for position in where:
            provider_id = rows[position][0]
            kinds = frozenset()
            for class_id in short_of:
                kinds |= judge.kinds(provider_id, class_id, amounts[class_id])
            for kind in kinds:
                tally.counts[kind] += 1
            tally.refined[position] = kinds


def _count_hosts(tally, rows, root_of, sharing_ids):
    """The hosts with a fitting provider, and per kind of reason how many other hosts'
    closest provider fails for it."""
    tally.fitting_roots = {
        root_of[rows[p][0]] or rows[p][0] for where in tally.fitting for p in where
    } - sharing_ids
    closest = {}  # left-out host -> (distance, kinds) of its closest provider
    scored = {}  # (pattern's kinds, capacity model's kinds) -> (distance, all kinds)
    refined = tally.refined
    for (where, _failed), (kinds, _short_of) in zip(tally.left_out, tally.left_kinds, strict=True):
        kinds = frozenset(kinds)
        for p in where:
            pid = rows[p][0]
            root = root_of[pid] or pid
            if root in tally.fitting_roots or pid in sharing_ids:
                continue
            key = (kinds, refined.get(p, frozenset()))
            score = scored.get(key)
            if score is None:
                found = key[0] | key[1]
                score = scored[key] = (sum(_DISTANCE.get(kind, 1) for kind in found), found)
            if root not in closest or score[0] < closest[root][0]:
                closest[root] = score
    host_counts = defaultdict(int)
    for _distance, kinds in closest.values():
        for kind in kinds:
            host_counts[kind] += 1
    tally.host_reason_counts = sorted(host_counts.items(), key=lambda i: (-i[1], i[0]))


def _pick(tally, rows, shown, root_of, sharing_ids):
    """The first ``shown`` of each side, by name: ``(fitting ids, [(left-out id, failed
    rules)], [(sharing id, failed rules)])``. A provider of a host that fits is not listed
    as left out; sharing providers are listed apart."""
    fitting = list(islice(merge(*tally.fitting), shown))
    # (position, failed rules) in name order, without a dict over every provider.
    in_order = merge(
        *(zip(where, repeat(failed)) for where, failed in tally.left_out),
        key=lambda item: item[0],
    )
    kept = (
        (p, failed)
        for p, failed in in_order
        if (root_of[rows[p][0]] or rows[p][0]) not in tally.fitting_roots
        and rows[p][0] not in sharing_ids
    )
    left_out = list(islice(kept, shown))
    sharing = [
        (row[0], tally.failed_by_pattern.get(row[1:], [])) for row in rows if row[0] in sharing_ids
    ][:shown]
    return (
        [rows[p][0] for p in fitting],
        [(rows[p][0], failed) for p, failed in left_out],
        sharing,
    )


def _reports(resolved, tallies, picked, judge, root_of, host_count):
    """One GroupReport per group, with words for the providers shown."""
    words = _Words(
        judge,
        [left_out + sharing for _, left_out, sharing in picked],
        [t.resolved for t in tallies],
    )
    hosts_shown = {root_of[pid] or pid for fitting, _, _ in picked for pid in fitting}
    refs = provider_refs(
        {pid for fitting, _, _ in picked for pid in fitting}
        | {pid for _, left_out, _ in picked for pid, _ in left_out}
        | {pid for _, _, sharing in picked for pid, _ in sharing}
        | hosts_shown
    )
    nothing_fits = [t for t in tallies if not t.fitting_roots]
    asked = sorted({c for t in nothing_fits for c in t.resolved.resources})
    largest = largest_free_by_class(asked, judge) if asked else {}
    if largest:
        refs.update(provider_refs({rp for rp, _free in largest.values()} - set(refs)))
    return [
        GroupReport(
            suffix=suffix,
            group=tally.resolved.group,
            fitting_count=tally.fitting_count,
            left_out_count=tally.left_out_count,
            reason_counts=sorted(tally.counts.items(), key=lambda item: (-item[1], item[0])),
            fitting=[(refs[pid], []) for pid in fitting if pid in refs],
            left_out=[
                (refs[pid], words.reasons(tally.resolved, pid, failed))
                for pid, failed in left_out
                if pid in refs
            ],
            host_count=host_count,
            hosts_fitting=len(tally.fitting_roots),
            host_reason_counts=tally.host_reason_counts,
            fitting_hosts=_by_host([refs[pid] for pid in fitting if pid in refs], refs),
            sharing=[
                (refs[pid], words.reasons(tally.resolved, pid, failed) if failed else [])
                for pid, failed in sharing
                if pid in refs
            ],
            largest_free=(
                [
                    _largest(tally.resolved, class_id, largest.get(class_id), refs)
                    for class_id in tally.resolved.resources
                ]
                if not tally.fitting_roots
                else []
            ),
        )
        for suffix, tally, (fitting, left_out, sharing) in zip(
            resolved, tallies, picked, strict=True
        )
    ]


def _by_host(fitting, refs):
    """Fitting providers grouped under their host, hosts in the order first met:
    ``[(host ref, whether the host itself fits, [fitting children])]``."""
    hosts = {}
    for ref in fitting:
        root_id = ref.root_id or ref.id
        entry = hosts.setdefault(root_id, [False, []])
        if ref.id == root_id:
            entry[0] = True
        else:
            entry[1].append(ref)
    return [
        (refs[root_id], itself, children)
        for root_id, (itself, children) in hosts.items()
        if root_id in refs
    ]


def _largest(resolved, class_id, best, refs):
    name = resolved.class_names[class_id]
    if best is None:
        return LargestFree(name, resolved.resources[class_id], None, None)
    provider_id, free = best
    return LargestFree(name, resolved.resources[class_id], free, refs.get(provider_id))


_CAPACITY_ONLY = frozenset({EXCEEDS_CAPACITY})


class _CapacityJudge:
    """The capacity model's verdict on the inventories of providers that failed a resource rule.

    One query reads those inventory rows with their usage; identical
    (inventory, amount, usage) cases are judged once. A class wanted for many providers (a
    request nothing fits) is read whole rather than through a list of thousands of ids:
    ``whole_classes`` names them, and their rows also answer "the most free anywhere".
    """

    WHOLE_CLASS_ABOVE = 500  # providers

    def __init__(self, wanted):
        self.rows = {}  # (provider id, class id) -> (Capacity, used)
        self._verdicts = {}
        self._kinds = {}
        self.whole_classes = {
            class_id for class_id, ids in wanted.items() if len(ids) > self.WHOLE_CLASS_ABOVE
        }
        if not wanted:
            return
        which = Q(resource_class_id__in=sorted(self.whole_classes))
        for class_id, provider_ids in wanted.items():
            if class_id not in self.whole_classes:
                which |= Q(
                    resource_class_id=class_id, resource_provider_id__in=sorted(provider_ids)
                )
        query = (
            Inventory.objects.filter(which)
            .annotate(used=usage_subquery())
            .values_list("resource_provider_id", "resource_class_id", *CAPACITY_FIELDS, "used")
        )
        # Straight from the cursor: thousands of rows of ints and floats need no converters.
        with reading_connection().cursor() as cursor:
            cursor.execute(*query.query.sql_with_params())
            rows = cursor.fetchall()
        shapes = {}  # identical inventories share one (immutable) Capacity
        store = self.rows
        for row in rows:
            shape = row[2:-1]
            capacity = shapes.get(shape)
            if capacity is None:
                capacity = shapes[shape] = Capacity(*shape)
            store[row[0], row[1]] = (capacity, row[-1])

    def kinds(self, provider_id, class_id, amount):
        """The rules (shortfall kinds) that refuse ``amount``; plain capacity when the model
        has no objection (the SQL rule refused on usage the model did not see)."""
        row = self.rows.get((provider_id, class_id))
        if row is None:
            return _CAPACITY_ONLY
        capacity, used = row
        key = (id(capacity), amount, used)
        found = self._kinds.get(key)
        if found is None:
            found = frozenset(s.rule for s in self.shortfalls(provider_id, class_id, amount))
            found = self._kinds[key] = found or _CAPACITY_ONLY
        return found

    def has(self, provider_id, class_id):
        return (provider_id, class_id) in self.rows

    def shortfalls(self, provider_id, class_id, amount):
        """The capacity model's shortfalls (``()`` when it has no objection or no row)."""
        row = self.rows.get((provider_id, class_id))
        if row is None:
            return ()
        capacity, used = row
        key = (id(capacity), amount, used)
        found = self._verdicts.get(key)
        if found is None:
            found = self._verdicts[key] = tuple(capacity.shortfalls(amount, used))
        return found


class _Words:
    """Reasons in words for the providers shown; reads which forbidden traits and
    aggregates they hold (one query each, only when such a rule failed)."""

    def __init__(self, judge, left_out_lists, resolved_groups):
        self.judge = judge
        failed = [(pid, rule) for left in left_out_lists for pid, rules in left for rule in rules]
        trait_ids, trait_providers = set(), set()
        uuids, aggregate_providers = set(), set()
        for pid, rule in failed:
            if rule.kind == engine.FORBIDDEN_TRAITS:
                trait_ids |= rule.subject
                trait_providers.add(pid)
            elif rule.kind == engine.FORBIDDEN_AGGREGATES:
                uuids |= rule.subject
                aggregate_providers.add(pid)
        self.traits = defaultdict(set)
        if trait_ids:
            for pid, trait_id in ResourceProviderTrait.objects.filter(
                resource_provider_id__in=trait_providers, trait_id__in=trait_ids
            ).values_list("resource_provider_id", "trait_id"):
                self.traits[pid].add(trait_id)
        self.aggregates = defaultdict(set)
        if uuids:
            for pid, uuid in ResourceProviderAggregate.objects.filter(
                resource_provider_id__in=aggregate_providers, aggregate__uuid__in=sorted(uuids)
            ).values_list("resource_provider_id", "aggregate__uuid"):
                self.aggregates[pid].add(str(uuid))

    def reasons(self, resolved, provider_id, failed):
        """Every reason ``provider_id`` fails the group, in the order of the engine's rules."""
        found = []
        for rule in failed:
            found += self._by_kind[rule.kind](self, resolved, provider_id, rule)
        return found

    # One method per kind of rule: the only place the refusals are put into words.

    def _in_tree(self, resolved, provider_id, rule):
        return [Reason(OUTSIDE_TREE, f"not in the tree of provider {rule.subject}")]

    def _required_traits(self, resolved, provider_id, rule):
        names = sorted(resolved.trait_names[t] for t in rule.subject)
        if len(names) == 1:
            return [Reason(MISSING_TRAIT, f"missing trait {names[0]}")]
        return [Reason(MISSING_TRAIT, f"has none of traits {', '.join(names)}")]

    def _forbidden_traits(self, resolved, provider_id, rule):
        held = sorted(resolved.trait_names[t] for t in rule.subject & self.traits[provider_id])
        if not held:  # not among the providers read: name the forbidden set
            names = ", ".join(sorted(resolved.trait_names[t] for t in rule.subject))
            return [Reason(FORBIDDEN_TRAIT, f"has a forbidden trait of {names}")]
        return [Reason(FORBIDDEN_TRAIT, f"has forbidden trait {name}") for name in held]

    def _member_of(self, resolved, provider_id, rule):
        uuids = sorted(rule.subject)
        if len(uuids) == 1:
            return [Reason(NOT_A_MEMBER, f"not in aggregate {uuids[0]}")]
        return [Reason(NOT_A_MEMBER, f"not in any of aggregates {', '.join(uuids)}")]

    def _forbidden_aggregates(self, resolved, provider_id, rule):
        held = sorted(rule.subject & self.aggregates[provider_id])
        if not held:
            names = ", ".join(sorted(rule.subject))
            return [Reason(FORBIDDEN_AGGREGATE, f"in a forbidden aggregate of {names}")]
        return [Reason(FORBIDDEN_AGGREGATE, f"in forbidden aggregate {uuid}") for uuid in held]

    def _resource(self, resolved, provider_id, rule):
        class_id = rule.subject
        name = resolved.class_names[class_id]
        if not self.judge.has(provider_id, class_id):
            return [Reason(NO_INVENTORY, f"has no inventory of {name}")]
        amount = resolved.resources[class_id]
        found = self.judge.shortfalls(provider_id, class_id, amount)
        if not found:  # the SQL rule refused what the model allows: say what the rule says
            return [Reason(EXCEEDS_CAPACITY, f"no room for {amount} {name}")]
        return [Reason(s.rule, s.describe(name)) for s in found]

    _by_kind = {
        engine.IN_TREE: _in_tree,
        engine.RESOURCES: _resource,
        engine.REQUIRED_TRAITS: _required_traits,
        engine.FORBIDDEN_TRAITS: _forbidden_traits,
        engine.MEMBER_OF: _member_of,
        engine.FORBIDDEN_AGGREGATES: _forbidden_aggregates,
    }
