"""Which providers can satisfy a request group on their own, and why the others cannot.

The dashboard's "try a request" page asks this for a handful of request
groups (:class:`~providers.request_groups.RequestGroup`, keyed
by suffix, ``""`` being the unnumbered group). Nothing here decides on its
own whether a provider fits:

* names are resolved by :func:`providers.request_groups.resolve_groups`;
* which rules each provider fails comes from the provider filter's set-based
  conditions (:func:`~providers.selectors.resource_providers.rule_verdicts`,
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

import uuid as uuidlib
from bisect import bisect_left
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from heapq import merge
from itertools import chain, compress, islice, repeat
from operator import itemgetter, ne
from typing import Any, NamedTuple, cast

from django.db.models import (
    BigIntegerField,
    BooleanField,
    Case,
    ExpressionWrapper,
    F,
    IntegerField,
    Q,
    Sum,
    Value,
    When,
)
from django.db.models.functions import Coalesce

from placementsite.core.db import query_rows, reading_connection

from ..capacity import (
    CAPACITY_FIELDS,
    EXCEEDS_CAPACITY,
    Capacity,
    Shortfall,
    can_provide_q,
    usable_expression,
)
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
from ..usage import usage_joined_rows
from . import resource_providers as provider_filter
from .resource_providers import Rule

# Kinds of reason, besides the capacity model's own rules
# (providers.capacity.BELOW_MIN_UNIT, ABOVE_MAX_UNIT, NOT_A_STEP, EXCEEDS_CAPACITY).
NO_INVENTORY = "no_inventory"
MISSING_TRAIT = "missing_trait"
FORBIDDEN_TRAIT = "forbidden_trait"
NOT_A_MEMBER = "not_member"
FORBIDDEN_AGGREGATE = "forbidden_aggregate"
OUTSIDE_TREE = "not_in_tree"

# The kind of reason a failed provider filter rule gives (resource rules are split further:
# no inventory at all, or the capacity model's shortfalls).
_KIND_OF_RULE = {
    provider_filter.REQUIRED_TRAITS: MISSING_TRAIT,
    provider_filter.FORBIDDEN_TRAITS: FORBIDDEN_TRAIT,
    provider_filter.MEMBER_OF: NOT_A_MEMBER,
    provider_filter.FORBIDDEN_AGGREGATES: FORBIDDEN_AGGREGATE,
    provider_filter.IN_TREE: OUTSIDE_TREE,
}

# One provider's answers: whether it has an inventory of each class asked, then whether it
# meets each rule of each group (booleans). Providers with the same pattern of answers get the
# same verdict. Providers are known by their *position* in name order: ``ids[position]`` and
# ``patterns[position]``.
Pattern = tuple[bool, ...]


class FitRequestError(ValueError):
    """The request names a resource class or trait that does not exist."""


class Reason(NamedTuple):
    kind: str
    text: str


class ProviderRef(NamedTuple):
    id: int
    uuid: uuidlib.UUID
    name: str
    parent_id: int | None
    root_id: int | None

    @property
    def is_root(self) -> bool:
        return self.parent_id is None


class LargestFree(NamedTuple):
    resource_class: str
    asked: int
    free: int | None  # None: no provider has inventory of the class
    provider: ProviderRef | None


@dataclass
class GroupReport:
    """One group's verdict: counts over every provider, and the first ``shown`` of each side."""

    suffix: str
    group: RequestGroup
    fitting_count: int = 0
    left_out_count: int = 0
    # (kind, count), most common first
    reason_counts: list[tuple[str, int]] = field(default_factory=list)
    fitting: list[tuple[ProviderRef, list[Reason]]] = field(default_factory=list)  # reasons: []
    left_out: list[tuple[ProviderRef, list[Reason]]] = field(default_factory=list)
    # Per host (root provider) rather than per provider; sharing providers apart.
    host_count: int = 0
    hosts_fitting: int = 0
    # (kind, hosts), most common first
    host_reason_counts: list[tuple[str, int]] = field(default_factory=list)
    # (host, whether the host itself fits, [its fitting children])
    fitting_hosts: list[tuple[ProviderRef, bool, list[ProviderRef]]] = field(default_factory=list)
    sharing: list[tuple[ProviderRef, list[Reason]]] = field(default_factory=list)  # [] = fits
    largest_free: list[LargestFree] = field(default_factory=list)  # per class, when none fits

    @property
    def hosts_left_out(self) -> int:
        return self.host_count - self.hosts_fitting

    @property
    def label(self) -> str:
        return f"group {self.suffix}" if self.suffix else "unnumbered group"

    # What the group asks, in a stable order for the page.
    @property
    def required_traits(self) -> list[str]:
        return [" or ".join(sorted(any_of)) for any_of in self.group.required_traits]

    @property
    def forbidden_traits(self) -> list[str]:
        return sorted(self.group.forbidden_traits)

    @property
    def member_of(self) -> list[list[str]]:
        return [sorted(any_of) for any_of in self.group.member_of]

    @property
    def forbidden_aggregates(self) -> list[str]:
        return sorted(self.group.forbidden_aggregates)


# Ranking a left-out provider's failures to find its host's closest provider: lacking the
# class altogether is further from fitting than being short of it.
_DISTANCE = {NO_INVENTORY: 2}


def largest_free_by_class(
    *, class_ids: Iterable[int], judge: "_CapacityJudge | None" = None
) -> dict[int, tuple[int, int]]:
    """{class id: (provider id, free)} of the inventory with the most free units per class
    (free by the capacity model: its usable units, :func:`providers.capacity.usable_expression`,
    less its usage), the lowest provider id among equals. Classes whose every inventory
    ``judge`` (a _CapacityJudge) has read already are answered from it; each of the others by
    a query of its own that keeps the best row of the class in the database (its every row
    read into Python took 0.5 s at 100,000 providers; numbering every row with a window, to
    keep the first of each class in one query, sorted them all: 0.12-0.36 s, load 8, against
    0.09-0.13 s for the best row alone)."""
    wanted = set(class_ids)
    known = wanted & judge.whole_classes if judge is not None else set()
    found = judge.most_free(class_ids=known) if judge is not None and known else {}
    free = ExpressionWrapper(usable_expression() - F("used"), output_field=BigIntegerField())
    for class_id in sorted(wanted - known):
        best = (
            usage_joined_rows(Inventory.objects.filter(resource_class_id=class_id))
            .annotate(free=free)
            .order_by("-free", "resource_provider_id")
            .values_list("resource_provider_id", "free")[:1]
        )
        found.update((class_id, (rp, units)) for rp, units in best)
    return found


def provider_refs(*, ids: Iterable[int]) -> dict[int, ProviderRef]:
    """{id: ProviderRef} for the providers to be shown (one query)."""
    rows = ResourceProvider.objects.filter(id__in=ids).values_list(
        "id", "uuid", "name", "parent_id", "root_id"
    )
    return {row[0]: ProviderRef._make(row) for row in rows}


def resolve_request(*, groups: Mapping[str, RequestGroup]) -> dict[str, ResolvedGroup]:
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
    counts: defaultdict[str, int] = field(default_factory=lambda: defaultdict(int))
    # lists of row positions, one per pattern
    fitting: list[list[int]] = field(default_factory=list)
    # (positions, failed rules) per pattern
    left_out: list[tuple[list[int], list[Rule]]] = field(default_factory=list)
    # (kinds, class ids short of) per pattern
    left_kinds: list[tuple[set[str], list[int]]] = field(default_factory=list)
    # index in left_out -> the capacity model's kinds of each of its providers, in its order
    refined: dict[int, list[frozenset[str]]] = field(default_factory=dict)
    failed_by_pattern: dict[Pattern, list[Rule]] = field(default_factory=dict)
    fitting_roots: set[int] = field(default_factory=set)
    host_reason_counts: list[tuple[str, int]] = field(default_factory=list)


# (index in the tally's left_out, positions, class ids short of): providers that have an
# inventory of a class but failed its resource rule, whose reasons the capacity model must tell.
Shortfalls = list[tuple[int, list[int], list[int]]]


_NOT = bytes([1, 0]) + bytes(254)  # bytes.translate's table: 0 -> 1, 1 -> 0
# The providers not alone in their tree are looked up one by one among positions when at
# most one in this many of them (_Cloud.apart_in).
_FEW_APART_ONE_IN = 8


class _Cloud(NamedTuple):
    """Every provider, by its position in name order, and what the counts need of each."""

    ids: list[int]
    roots: list[int]  # the id of each provider's root (its own for a root)
    patterns: list[Pattern]
    sharing_ids: set[int]
    sharing: list[int]  # positions of the sharing providers
    # 1 for a provider alone in its tree and not sharing: it is its own host's only provider,
    # so its host's reasons are its own and it is counted per pattern, not one by one.
    alone: bytearray
    apart: list[int]  # the positions of the others (0 in alone), in order

    @classmethod
    def of(cls, ids: list[int], roots: list[int], patterns: list[Pattern]) -> "_Cloud":
        sharing_ids = set(
            ResourceProviderTrait.objects.filter(trait__name=SHARING_TRAIT).values_list(
                "resource_provider_id", flat=True
            )
        )
        sharing = list(compress(range(len(ids)), map(sharing_ids.__contains__, ids)))
        # The roots of the providers that are not roots: the trees of more than one provider.
        in_trees = set(compress(roots, map(ne, ids, roots)))
        if in_trees:
            alone = bytearray(root not in in_trees for root in roots)
        else:
            alone = bytearray(b"\x01") * len(ids)
        for position in sharing:
            alone[position] = 0
        apart = list(compress(range(len(ids)), alone.translate(_NOT)))
        return cls(ids, roots, patterns, sharing_ids, sharing, alone, apart)

    def apart_in(self, where: list[int]) -> list[int]:
        """The indexes in ``where`` (positions, in order) of the providers not alone in
        their tree: looked up one by one when they are few (a cloud of hosts alone in their
        trees, and a few sharing providers), else picked from every position in C."""
        if len(self.apart) * _FEW_APART_ONE_IN <= len(where):
            found = []
            for position in self.apart:
                index = bisect_left(where, position)
                if index < len(where) and where[index] == position:
                    found.append(index)
            return found
        others = self.alone.translate(_NOT)
        return list(compress(range(len(where)), map(others.__getitem__, where)))


class _Picked(NamedTuple):
    """The providers shown for one group, the first ``shown`` of each side by name."""

    fitting: list[int]  # provider ids
    hosts: list[int]  # the root of each fitting provider
    left_out: list[tuple[int, list[Rule]]]  # (provider id, failed rules)
    sharing: list[tuple[int, list[Rule]]]  # (provider id, failed rules; [] = fits)


def fit_report(*, groups: Mapping[str, RequestGroup], shown: int = 100) -> list[GroupReport]:
    """One :class:`GroupReport` per group of ``groups`` (``{suffix: RequestGroup}``) that asks
    something, in the order given.

    Raises :class:`FitRequestError` for a resource class or trait name that
    does not exist (Placement answers such a request with a 400). A fixed
    number of queries whatever the number of providers or groups, but one per class asked
    by a group no host fits (its largest free amount).
    """
    resolved = resolve_request(groups={s: g for s, g in groups.items() if g.asks_something()})
    class_ids = sorted({class_id for r in resolved.values() for class_id in r.resources})
    rules, ids, roots, patterns, positions = _verdict_rows(resolved, class_ids)
    tallies = [_Tally(r) for r in resolved.values()]
    short, wanted = _tally_groups(tallies, rules, ids, positions, class_ids)

    judge = _CapacityJudge(wanted)
    for tally, shortfalls in zip(tallies, short, strict=True):
        _count_shortfalls(tally, shortfalls, judge, ids)

    # Hosts: which trees have a fitting provider; sharing providers apart (one query).
    cloud = _Cloud.of(ids, roots, patterns)
    for tally in tallies:
        _count_hosts(tally, cloud)
    hosts = set(roots) - cloud.sharing_ids
    picked = [_pick(tally, cloud, shown) for tally in tallies]
    return _reports(resolved, tallies, picked, judge, len(hosts))


class _Verdicts(NamedTuple):
    """What :func:`_verdict_rows` read."""

    rules: list[list[Rule]]  # of each group
    ids: list[int]  # every provider, in name order
    roots: list[int]
    patterns: list[Pattern]
    positions: dict[Pattern, list[int]]  # the positions of each pattern's providers, in order


def _verdict_rows(resolved: Mapping[str, ResolvedGroup], class_ids: Sequence[int]) -> _Verdicts:
    """Every provider's root and answers, in name order: whether it has an inventory of each
    class asked and whether it meets each rule of each group.

    Two queries: how many inventory rows could take an amount asked, then the answers, in
    the shape that costs less for that many (:func:`_verdict_sql`)."""
    groups = list(resolved.values())
    pattern_of: Callable[[tuple[int, ...]], Pattern] | None = None  # None: booleans
    if _few_could_fit(groups, class_ids):
        rules, sql, params = _verdict_sql_per_rule(groups, class_ids)
    else:
        rules = [provider_filter.group_rules(resolved=r) for r in groups]
        sql, params, pattern_of = _verdict_sql(groups, rules, class_ids)
    # Straight from the cursor, as the capacity judge reads: 100,000 rows of ids and booleans
    # or integers need no converters (SQLite's 0 and 1 answer as False and True do).
    with reading_connection().cursor() as cursor:
        cursor.execute(sql, params)
        fetched = cursor.fetchall()
    ids, roots = list(map(itemgetter(0), fetched)), list(map(itemgetter(1), fetched))
    if pattern_of is None:
        answers = list(map(itemgetter(slice(2, None)), fetched))
        return _Verdicts(rules, ids, roots, answers, _positions_of(answers))
    # Providers grouped by their masks (an int each when there is one: cheaper to hash than
    # a pattern), each distinct masks decoded once into a pattern the providers share.
    one_mask = not fetched or len(fetched[0]) == 3
    keys: list[Any] = list(map(itemgetter(2 if one_mask else slice(2, None)), fetched))
    by_key = _positions_of(keys)
    decoded = {key: pattern_of((key,) if one_mask else key) for key in by_key}
    positions = {decoded[key]: where for key, where in by_key.items()}
    return _Verdicts(rules, ids, roots, list(map(decoded.__getitem__, keys)), positions)


def _positions_of(keys: Iterable[Any]) -> dict[Any, list[int]]:
    """``{key: [positions]}``: where each key stands in ``keys``, in order."""
    positions: defaultdict[Any, list[int]] = defaultdict(list)
    for position, key in enumerate(keys):
        positions[key].append(position)
    return positions


# "Few" inventory rows could take the amounts asked: at most one in this many of the classes'.
_FEW_ONE_IN = 8


def _few_could_fit(resolved_groups: Sequence[ResolvedGroup], class_ids: Sequence[int]) -> bool:
    """Whether few of the inventory rows of the classes asked could take an amount asked of
    their class were they unused (the capacity rule with no usage, no join): then the
    answers are best read one rule at a time (:func:`_verdict_sql_per_rule`), each rule's
    set of providers built from those few rows, rather than counted over every row
    (:func:`_verdict_sql`). A request nothing fits takes twice as long (0.09 to 0.22 s at
    100,000 providers, load 4) counted over every row.

    One statement: the rows of the classes asked are counted, then the rows that could take
    an amount, a (class, amount) at a time, but only until there are too many to be few: a
    request most providers fit stops after an eighth of the rows (at 100,000 providers and
    four classes, 20 ms of the database's CPU where counting every row took 49 ms)."""
    asked = sorted({pair for r in resolved_groups for pair in r.resources.items()})
    if not asked:
        return False
    rows_sql, params = (
        Inventory.objects.filter(resource_class_id__in=list(class_ids))
        .order_by()
        .values_list("resource_class_id")
        .query.sql_with_params()
    )
    could = []
    for class_id, amount in asked:
        rows = Inventory.objects.filter(Q(resource_class_id=class_id) & can_provide_q(amount))
        branch_sql, branch_params = rows.order_by().values_list("id").query.sql_with_params()
        could.append(branch_sql)
        params += branch_params
    sql = (
        f'WITH "r" AS (SELECT COUNT(*) AS "n" FROM ({rows_sql}) "rows") '
        f'SELECT "r"."n", (SELECT COUNT(*) FROM ({" UNION ALL ".join(could)} '
        f'LIMIT (SELECT "n" FROM "r") / {_FEW_ONE_IN} + 1) "could") FROM "r"'
    )
    with reading_connection().cursor() as cursor:
        cursor.execute(sql, params)
        rows_of_classes, could_take = cursor.fetchone()
    return could_take * _FEW_ONE_IN <= rows_of_classes


def _verdict_sql_per_rule(
    resolved_groups: Sequence[ResolvedGroup], class_ids: Sequence[int]
) -> tuple[list[list[Rule]], str, tuple[Any, ...]]:
    """``(rules of each group, sql, params)``: :func:`_verdict_sql`'s rows, each rule a
    condition of its own on the provider (:func:`provider_filter.rule_verdicts`: a resource
    rule is the set of the providers with the capacity) and each class held one more."""
    has_inventory = {
        f"has_inventory_{class_id}": ExpressionWrapper(
            provider_filter.has_inventory(resource_class_id=class_id),
            output_field=BooleanField(),
        )
        for class_id in class_ids
    }
    rules, rows = provider_filter.rule_verdicts(
        resolved_groups=resolved_groups,
        providers=ResourceProvider.objects.order_by("name"),
        tree_root=Coalesce(F("root_id"), F("id")),
        **has_inventory,
    )
    sql, params = rows.query.sql_with_params()
    return rules, sql, params


# Bits per mask column of :func:`_verdict_sql`: a sum of 30 distinct bits stays an integer
# (PostgreSQL sums integers into a bigint; a bigint's sum would be a numeric).
_MASK_BITS = 30


def _verdict_sql(
    resolved_groups: Sequence[ResolvedGroup], rules: Sequence[list[Rule]], class_ids: Sequence[int]
) -> tuple[str, tuple[Any, ...], Callable[[tuple[int, ...]], Pattern]]:
    """``(sql, params, pattern of)``: ``(id, root id, *masks)`` per provider, in name order (a
    root is its own root), and the function giving the pattern of a row's masks.

    The answers are bits of a few integers (:data:`_MASK_BITS` each) rather than a column
    each: the database sums them once per row and hands back one small integer rather than
    a dozen booleans (at 100,000 providers, 0.33 s of the database's CPU and 60 ms of
    fetching became 0.27 s and 30 ms), and identical rows give identical integers, decoded
    once. The rules on a provider's own rows (traits, aggregates, tree) are columns of the
    provider read, turned into bits. The resource rules and "has an inventory of the class"
    are summed in one pass over the inventory rows of the classes asked, their usage joined,
    grouped per provider and LEFT JOINed to the providers: a provider has one row per class,
    so the sum of its rows' bits is the union of its answers. Each resource rule had been a
    set of the providers with the capacity, built in a subquery of its own: PostgreSQL
    guessed the capacity rule at about 70 rows of 100,000 and joined the usage by a nested
    loop (about 120 ms per rule at 100,000 providers), and "has an inventory" was one more
    set per class."""
    bit_of: dict[tuple[str, Any], int] = {}  # (kind of answer, subject) -> its bit
    row_rules: dict[str, ExpressionWrapper] = {}  # the provider read's columns
    positions: list[int] = []  # the pattern's bits, in order: see Pattern

    def bit(key: tuple[str, Any]) -> int:
        return bit_of.setdefault(key, len(bit_of))

    positions += [bit(("held", class_id)) for class_id in class_ids]
    for resolved, group_rules in zip(resolved_groups, rules, strict=True):
        for rule in group_rules:
            if rule.kind == provider_filter.RESOURCES:
                class_id = cast(int, rule.subject)
                positions.append(bit(("fits", (class_id, resolved.resources[class_id]))))
            else:
                alias = f"rule_{len(row_rules)}"
                row_rules[alias] = ExpressionWrapper(rule.condition, output_field=BooleanField())
                positions.append(bit(("rule", alias)))
    masks = max(1, -(-len(bit_of) // _MASK_BITS))
    providers = (
        ResourceProvider.objects.order_by()
        .annotate(p_id=F("id"), p_root=F("root_id"), p_name=F("name"), **row_rules)
        .values_list("p_id", "p_root", "p_name", *row_rules)
    )
    sql, params = providers.query.sql_with_params()
    columns: list[list[str]] = [[] for _mask in range(masks)]  # the terms of each mask
    summed_by_inventory: set[int] = set()  # the masks with bits of the inventory pass
    for (kind, subject), n in bit_of.items():
        if kind == "rule":
            terms = columns[n // _MASK_BITS]
            terms.append(f'CASE WHEN "p"."{subject}" THEN {1 << n % _MASK_BITS} ELSE 0 END')
        else:
            summed_by_inventory.add(n // _MASK_BITS)
    for mask in sorted(summed_by_inventory):
        columns[mask].append(f'COALESCE("v"."mask_{mask}", 0)')
    root = 'COALESCE("p"."p_root", "p"."p_id")'
    summed = ", ".join(" + ".join(terms) or "0" for terms in columns)
    sql = f'SELECT "p"."p_id", {root}, {summed} FROM ({sql}) "p"'
    if class_ids:
        counts_sql, counts_params = _inventory_masks_sql(resolved_groups, class_ids, bit_of, masks)
        sql += f' LEFT JOIN ({counts_sql}) "v" ON "v"."resource_provider_id" = "p"."p_id"'
        params += counts_params

    def pattern_of(row_masks: tuple[int, ...]) -> Pattern:
        return tuple(bool(row_masks[n // _MASK_BITS] >> n % _MASK_BITS & 1) for n in positions)

    return f'{sql} ORDER BY "p"."p_name"', params, pattern_of


def _inventory_masks_sql(
    resolved_groups: Sequence[ResolvedGroup],
    class_ids: Sequence[int],
    bit_of: Mapping[tuple[str, Any], int],
    masks: int,
) -> tuple[str, tuple[Any, ...]]:
    """``(sql, params)`` of ``(resource_provider_id, mask_0, ...)``: per provider, the bits
    of the classes it holds and of the (class, amount) its inventory can take, usage joined.
    Each row's class is tested first: the capacity rules of the other classes are skipped."""
    amounts: defaultdict[int, set[int]] = defaultdict(set)
    for resolved in resolved_groups:
        for class_id, amount in resolved.resources.items():
            amounts[class_id].add(amount)
    terms: list[list[Any]] = [[] for _mask in range(masks)]
    for class_id in class_ids:
        per_mask: list[list[Any]] = [[] for _mask in range(masks)]
        held = bit_of["held", class_id]
        per_mask[held // _MASK_BITS].append(Value(1 << held % _MASK_BITS))
        for amount in sorted(amounts[class_id]):
            n = bit_of.get(("fits", (class_id, amount)))
            if n is not None:
                fits = can_provide_q(amount, used=F("used"))
                per_mask[n // _MASK_BITS].append(
                    Case(When(fits, then=Value(1 << n % _MASK_BITS)), default=Value(0))
                )
        for mask, bits in enumerate(per_mask):
            if bits:
                this_class = When(Q(resource_class_id=class_id), then=_plus(bits))
                terms[mask].append(Case(this_class, default=Value(0)))
    summed = {
        f"mask_{mask}": Sum(_plus(bits), output_field=IntegerField())
        for mask, bits in enumerate(terms)
        if bits
    }
    inventories = Inventory.objects.filter(resource_class_id__in=list(class_ids))
    per_provider = (
        usage_joined_rows(inventories).order_by().values("resource_provider_id").annotate(**summed)
    )
    return per_provider.query.sql_with_params()


def _plus(terms: Sequence[Any]) -> Any:
    """The sum of integer expressions."""
    total = terms[0]
    for term in terms[1:]:
        total = ExpressionWrapper(total + term, output_field=IntegerField())
    return total


def _tally_groups(
    tallies: Sequence[_Tally],
    rules: Sequence[list[Rule]],
    ids: Sequence[int],
    positions: Mapping[Pattern, list[int]],
    class_ids: Sequence[int],
) -> tuple[list[Shortfalls], dict[int, set[int]]]:
    """Count each group's verdict into its tally. Providers with the same answers (which
    classes they have inventory of, which rules they meet) get the same verdict: each such
    pattern (``positions``: its providers' positions, in name order) is judged once. Returns
    each group's :data:`Shortfalls` and ``{class id: providers whose inventory of it the
    capacity model must read}``."""
    column_of = {class_id: index for index, class_id in enumerate(class_ids)}
    wanted: defaultdict[int, set[int]] = defaultdict(set)
    short = []  # per group
    column = len(class_ids)
    for tally, rules_of_group in zip(tallies, rules, strict=True):
        stop = column + len(rules_of_group)
        short.append(_tally_group(tally, rules_of_group, positions, (column, stop), column_of))
        for _index, where, short_of in short[-1]:
            for class_id in short_of:
                wanted[class_id].update(map(ids.__getitem__, where))
        column = stop
    return short, wanted


def _tally_group(
    tally: _Tally,
    rules: Sequence[Rule],
    positions: Mapping[Pattern, list[int]],
    span: tuple[int, int],
    column_of: Mapping[int, int],
) -> Shortfalls:
    """Count one group's verdict over every pattern of answers into ``tally``.

    ``span`` is the ``(start, stop)`` of the group's rule columns in a pattern. Returns
    ``[(index in left_out, positions, class ids), ...]``: providers that have an inventory of
    a class but failed its resource rule, whose reasons the capacity model must tell.
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
        kinds: set[str] = set()
        short_of: list[int] = []
        tally.left_kinds.append((kinds, short_of))
        for rule in failed:
            if rule.kind != provider_filter.RESOURCES:
                kinds.add(_KIND_OF_RULE[rule.kind])
                continue
            class_id = cast(int, rule.subject)  # a resource rule's subject: its class id
            if pattern[column_of[class_id]]:
                short_of.append(class_id)
            else:
                kinds.add(NO_INVENTORY)
        for kind in kinds:
            tally.counts[kind] += len(where)
        if short_of:
            shortfalls.append((len(tally.left_out) - 1, where, short_of))
    return shortfalls


def _count_shortfalls(
    tally: _Tally, shortfalls: Shortfalls, judge: "_CapacityJudge", ids: Sequence[int]
) -> None:
    """Count which of the capacity model's rules refused, for providers with the inventory;
    each provider's kinds are kept in ``tally.refined`` for its host's reasons."""
    amounts = tally.resolved.resources
    providers_by_kinds: Counter[frozenset[str]] = Counter()
    for index, where, short_of in shortfalls:
        provider_ids = list(map(ids.__getitem__, where))
        # Per class, each provider's case (its inventory and usage) and the kinds of each
        # case, judged once: 100,000 providers have few cases.
        per_class = []
        for class_id in short_of:
            cases = list(map(judge.case_of[class_id].get, provider_ids))
            kinds_of = {case: judge.case_kinds(case, amounts[class_id]) for case in set(cases)}
            per_class.append(list(map(kinds_of.__getitem__, cases)))
        if len(per_class) == 1:
            refined = per_class[0]
        else:
            combined = list(zip(*per_class, strict=True))
            union_of = {kinds: frozenset().union(*kinds) for kinds in set(combined)}
            refined = list(map(union_of.__getitem__, combined))
        tally.refined[index] = refined
        providers_by_kinds.update(refined)
    # Counted per set of kinds, not per provider: a cloud has few such sets.
    for kinds, providers in providers_by_kinds.items():
        for kind in kinds:
            tally.counts[kind] += providers


def _count_hosts(tally: _Tally, cloud: _Cloud) -> None:
    """The hosts with a fitting provider, and per kind of reason how many other hosts'
    closest provider fails for it (a provider alone in its tree is its host's closest:
    those are counted per set of reasons, the providers of trees one by one)."""
    tally.fitting_roots = (
        set(map(cloud.roots.__getitem__, chain.from_iterable(tally.fitting))) - cloud.sharing_ids
    )
    closest: dict[int, tuple[int, frozenset[str]]] = {}  # left-out host -> its closest's score
    # (pattern's kinds, capacity model's kinds) -> (distance, all kinds)
    scored: dict[tuple[frozenset[str], frozenset[str]], tuple[int, frozenset[str]]] = {}
    alone_by_key: Counter[tuple[frozenset[str], frozenset[str]]] = Counter()
    nothing: frozenset[str] = frozenset()
    for index, ((where, _failed), (kinds, _short_of)) in enumerate(
        zip(tally.left_out, tally.left_kinds, strict=True)
    ):
        pattern_kinds = frozenset(kinds)
        refined = tally.refined.get(index)
        apart = cloud.apart_in(where)  # indexes in where
        if refined is None:
            alone_by_key[pattern_kinds, nothing] += len(where) - len(apart)
        else:
            # Counted per set of kinds first (a frozenset keeps its hash), then keyed.
            per_kinds = Counter(refined)
            per_kinds.subtract(map(refined.__getitem__, apart))
            for model_kinds, hosts in per_kinds.items():
                alone_by_key[pattern_kinds, model_kinds] += hosts
        if apart:
            _closest_in_trees(tally, cloud, where, apart, pattern_kinds, refined, closest, scored)
    host_counts: defaultdict[str, int] = defaultdict(int)
    for key, hosts in alone_by_key.items():
        if hosts:
            for kind in _score(key, scored)[1]:
                host_counts[kind] += hosts
    for _distance, found_kinds in closest.values():
        for kind in found_kinds:
            host_counts[kind] += 1
    tally.host_reason_counts = _most_common_first(host_counts)


def _score(
    key: tuple[frozenset[str], frozenset[str]],
    scored: dict[tuple[frozenset[str], frozenset[str]], tuple[int, frozenset[str]]],
) -> tuple[int, frozenset[str]]:
    """``(distance, all kinds)`` of a left-out provider's (pattern's kinds, model's kinds)."""
    score = scored.get(key)
    if score is None:
        found = key[0] | key[1]
        score = scored[key] = (sum(_DISTANCE.get(kind, 1) for kind in found), found)
    return score


def _closest_in_trees(
    tally: _Tally,
    cloud: _Cloud,
    where: list[int],
    apart: list[int],
    pattern_kinds: frozenset[str],
    refined: list[frozenset[str]] | None,
    closest: dict[int, tuple[int, frozenset[str]]],
    scored: dict[tuple[frozenset[str], frozenset[str]], tuple[int, frozenset[str]]],
) -> None:
    """Keep in ``closest`` each host's closest left-out provider among those of ``where``
    that share their tree (``apart``: their indexes in ``where``, sharing providers
    skipped), the first met among equals."""
    roots, fitting_roots = cloud.roots, tally.fitting_roots
    nothing: frozenset[str] = frozenset()
    for index in apart:
        p = where[index]
        if cloud.ids[p] in cloud.sharing_ids:
            continue
        kinds = refined[index] if refined is not None else nothing
        root = roots[p]
        if root in fitting_roots:
            continue
        score = _score((pattern_kinds, kinds), scored)
        current = closest.get(root)
        if current is None or score[0] < current[0]:
            closest[root] = score


def _most_common_first(counts: Mapping[str, int]) -> list[tuple[str, int]]:
    """``[(kind, count)]``, the most common first, then by kind."""
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def _pick(tally: _Tally, cloud: _Cloud, shown: int) -> _Picked:
    """The first ``shown`` of each side, by name. A provider of a host that fits is not
    listed as left out; sharing providers are listed apart."""
    ids, roots = cloud.ids, cloud.roots
    fitting = list(islice(merge(*tally.fitting), shown))
    # (position, failed rules) in name order, without a dict over every provider.
    in_order: Iterator[tuple[int, list[Rule]]] = merge(
        *(zip(where, repeat(failed)) for where, failed in tally.left_out),
        key=lambda item: item[0],
    )
    kept = (
        (p, failed)
        for p, failed in in_order
        if roots[p] not in tally.fitting_roots and ids[p] not in cloud.sharing_ids
    )
    left_out = list(islice(kept, shown))
    sharing = [
        (ids[p], tally.failed_by_pattern.get(cloud.patterns[p], [])) for p in cloud.sharing[:shown]
    ]
    return _Picked(
        fitting=[ids[p] for p in fitting],
        hosts=[roots[p] for p in fitting],
        left_out=[(ids[p], failed) for p, failed in left_out],
        sharing=sharing,
    )


def _reports(
    resolved: Mapping[str, ResolvedGroup],
    tallies: Sequence[_Tally],
    picked: Sequence[_Picked],
    judge: "_CapacityJudge",
    host_count: int,
) -> list[GroupReport]:
    """One GroupReport per group, with words for the providers shown."""
    words = _Words(
        judge,
        [shown.left_out + shown.sharing for shown in picked],
        [t.resolved for t in tallies],
    )
    refs = provider_refs(ids=_ids_shown(picked))
    largest = _largest_free_where_nothing_fits(tallies, judge)
    if largest:
        refs.update(provider_refs(ids={rp for rp, _free in largest.values()} - set(refs)))
    return [
        _report(suffix, tally, shown, words, refs, largest, host_count)
        for suffix, tally, shown in zip(resolved, tallies, picked, strict=True)
    ]


def _ids_shown(picked: Iterable[_Picked]) -> set[int]:
    """The providers the reports show: those picked, and the hosts of the fitting ones."""
    ids: set[int] = set()
    for shown in picked:
        ids.update(shown.fitting)
        ids.update(shown.hosts)
        ids.update(pid for pid, _failed in shown.left_out)
        ids.update(pid for pid, _failed in shown.sharing)
    return ids


def _largest_free_where_nothing_fits(
    tallies: Iterable[_Tally], judge: "_CapacityJudge"
) -> dict[int, tuple[int, int]]:
    """:func:`largest_free_by_class` of the classes asked by groups no host fits."""
    nothing_fits = [t for t in tallies if not t.fitting_roots]
    asked = sorted({c for t in nothing_fits for c in t.resolved.resources})
    return largest_free_by_class(class_ids=asked, judge=judge) if asked else {}


def _report(
    suffix: str,
    tally: _Tally,
    shown: _Picked,
    words: "_Words",
    refs: Mapping[int, ProviderRef],
    largest: Mapping[int, tuple[int, int]],
    host_count: int,
) -> GroupReport:
    """One group's report: its counts, and the providers shown with their reasons."""
    resolved = tally.resolved
    fitting = [refs[pid] for pid in shown.fitting if pid in refs]
    return GroupReport(
        suffix=suffix,
        group=resolved.group,
        fitting_count=tally.fitting_count,
        left_out_count=tally.left_out_count,
        reason_counts=_most_common_first(tally.counts),
        fitting=[(ref, []) for ref in fitting],
        left_out=_with_reasons(words, resolved, shown.left_out, refs),
        host_count=host_count,
        hosts_fitting=len(tally.fitting_roots),
        host_reason_counts=tally.host_reason_counts,
        fitting_hosts=_fitting_hosts(fitting, refs),
        sharing=_with_reasons(words, resolved, shown.sharing, refs),
        largest_free=([] if tally.fitting_roots else _largest_free_of(resolved, largest, refs)),
    )


def _with_reasons(
    words: "_Words",
    resolved: ResolvedGroup,
    failures: Iterable[tuple[int, list[Rule]]],
    refs: Mapping[int, ProviderRef],
) -> list[tuple[ProviderRef, list[Reason]]]:
    """``[(provider, its reasons in words)]``; no failed rule gives no reason."""
    return [
        (refs[pid], words.reasons(resolved, pid, failed)) for pid, failed in failures if pid in refs
    ]


def _fitting_hosts(
    fitting: Iterable[ProviderRef], refs: Mapping[int, ProviderRef]
) -> list[tuple[ProviderRef, bool, list[ProviderRef]]]:
    """Fitting providers grouped under their host, hosts in the order first met:
    ``[(host ref, whether the host itself fits, [fitting children])]``."""
    children: dict[int, list[ProviderRef]] = {}  # host id -> fitting children, hosts in order
    host_fits: set[int] = set()
    for ref in fitting:
        root_id = ref.root_id or ref.id
        under = children.setdefault(root_id, [])
        if ref.id == root_id:
            host_fits.add(root_id)
        else:
            under.append(ref)
    return [
        (refs[root_id], root_id in host_fits, under)
        for root_id, under in children.items()
        if root_id in refs
    ]


def _largest_free_of(
    resolved: ResolvedGroup,
    largest: Mapping[int, tuple[int, int]],
    refs: Mapping[int, ProviderRef],
) -> list[LargestFree]:
    """The most free of each class the group asks, in the order asked."""
    return [
        _largest(resolved, class_id, largest.get(class_id), refs) for class_id in resolved.resources
    ]


def _largest(
    resolved: ResolvedGroup,
    class_id: int,
    best: tuple[int, int] | None,
    refs: Mapping[int, ProviderRef],
) -> LargestFree:
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

    def __init__(self, wanted: Mapping[int, set[int]]) -> None:
        # Identical (inventory, usage) rows are one case: cases[n] = (Capacity, used), and
        # {class id: {provider id: n}} says which case each row read is.
        self.cases: list[tuple[Capacity, int]] = []
        self.case_of: defaultdict[int, dict[int, int]] = defaultdict(dict)
        self._verdicts: dict[tuple[int, int], tuple[Shortfall, ...]] = {}  # (case, amount) ->
        self._kinds: dict[tuple[int, int], frozenset[str]] = {}
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
        # The usage rows joined (one pass) rather than looked up per inventory row.
        query = usage_joined_rows(Inventory.objects.filter(which)).values_list(
            "resource_provider_id", "resource_class_id", *CAPACITY_FIELDS, "used"
        )
        # Straight from the cursor: thousands of rows of ints and floats need no converters.
        rows = query_rows(query.query)
        case_index: dict[tuple[Any, ...], int] = {}  # (*inventory shape, used) -> case
        case_of = self.case_of
        for row in rows:
            key = row[2:]
            case = case_index.get(key)
            if case is None:
                case = case_index[key] = len(self.cases)
                self.cases.append((Capacity(*row[2:-1]), row[-1]))
            case_of[row[1]][row[0]] = case

    def kinds(self, provider_id: int, class_id: int, amount: int) -> frozenset[str]:
        """The rules (shortfall kinds) that refuse ``amount``; plain capacity when the model
        has no objection (the SQL rule refused on usage the model did not see)."""
        return self.case_kinds(self.case_of[class_id].get(provider_id), amount)

    def case_kinds(self, case: int | None, amount: int) -> frozenset[str]:
        """:meth:`kinds` of a case (``None``: no row read)."""
        if case is None:
            return _CAPACITY_ONLY
        found = self._kinds.get((case, amount))
        if found is None:
            found = frozenset(s.rule for s in self._case_shortfalls(case, amount))
            found = self._kinds[case, amount] = found or _CAPACITY_ONLY
        return found

    def most_free(self, *, class_ids: Collection[int]) -> dict[int, tuple[int, int]]:
        """{class id: (provider id, free)} of the row with the most free units per class of
        ``class_ids`` among the rows read, the lowest provider id among equals."""
        best: dict[int, tuple[int, int]] = {}
        for class_id in class_ids:
            case_of = self.case_of.get(class_id)
            if not case_of:
                continue
            free_of: dict[int, int] = {}  # case -> free units, judged once per case
            for case in set(case_of.values()):
                capacity, used = self.cases[case]
                free_of[case] = capacity.usable - used
            most = max(free_of.values())
            winners = {case for case, free in free_of.items() if free == most}
            best[class_id] = (min(rp for rp, case in case_of.items() if case in winners), most)
        return best

    def has(self, provider_id: int, class_id: int) -> bool:
        return provider_id in self.case_of.get(class_id, ())

    def shortfalls(self, provider_id: int, class_id: int, amount: int) -> tuple[Shortfall, ...]:
        """The capacity model's shortfalls (``()`` when it has no objection or no row)."""
        case = self.case_of.get(class_id, {}).get(provider_id)
        return () if case is None else self._case_shortfalls(case, amount)

    def _case_shortfalls(self, case: int, amount: int) -> tuple[Shortfall, ...]:
        found = self._verdicts.get((case, amount))
        if found is None:
            capacity, used = self.cases[case]
            found = self._verdicts[case, amount] = tuple(capacity.shortfalls(amount, used))
        return found


class _Words:
    """Reasons in words for the providers shown; reads which forbidden traits and
    aggregates they hold (one query each, only when such a rule failed)."""

    def __init__(
        self,
        judge: _CapacityJudge,
        left_out_lists: Iterable[Iterable[tuple[int, list[Rule]]]],
        resolved_groups: Sequence[ResolvedGroup],
    ) -> None:
        self.judge = judge
        failed = [(pid, rule) for left in left_out_lists for pid, rules in left for rule in rules]
        trait_ids: set[int] = set()
        trait_providers: set[int] = set()
        uuids: set[str] = set()
        aggregate_providers: set[int] = set()
        for pid, rule in failed:
            if rule.kind == provider_filter.FORBIDDEN_TRAITS:
                trait_ids |= _subject_set(rule)
                trait_providers.add(pid)
            elif rule.kind == provider_filter.FORBIDDEN_AGGREGATES:
                uuids |= _subject_set(rule)
                aggregate_providers.add(pid)
        self.traits: defaultdict[int, set[int]] = defaultdict(set)
        if trait_ids:
            for pid, trait_id in ResourceProviderTrait.objects.filter(
                resource_provider_id__in=trait_providers, trait_id__in=trait_ids
            ).values_list("resource_provider_id", "trait_id"):
                self.traits[pid].add(trait_id)
        self.aggregates: defaultdict[int, set[str]] = defaultdict(set)
        if uuids:
            for pid, uuid in ResourceProviderAggregate.objects.filter(
                resource_provider_id__in=aggregate_providers, aggregate__uuid__in=sorted(uuids)
            ).values_list("resource_provider_id", "aggregate__uuid"):
                self.aggregates[pid].add(str(uuid))

    def reasons(
        self, resolved: ResolvedGroup, provider_id: int, failed: Iterable[Rule]
    ) -> list[Reason]:
        """Every reason ``provider_id`` fails the group, in the order of the filter's rules."""
        found = []
        for rule in failed:
            found += self._by_kind[rule.kind](self, resolved, provider_id, rule)
        return found

    # One method per kind of rule: the only place the refusals are put into words.

    def _in_tree(self, resolved: ResolvedGroup, provider_id: int, rule: Rule) -> list[Reason]:
        return [Reason(OUTSIDE_TREE, f"not in the tree of provider {rule.subject}")]

    def _required_traits(
        self, resolved: ResolvedGroup, provider_id: int, rule: Rule
    ) -> list[Reason]:
        names = sorted(resolved.trait_names[t] for t in _subject_set(rule))
        if len(names) == 1:
            return [Reason(MISSING_TRAIT, f"missing trait {names[0]}")]
        return [Reason(MISSING_TRAIT, f"has none of traits {', '.join(names)}")]

    def _forbidden_traits(
        self, resolved: ResolvedGroup, provider_id: int, rule: Rule
    ) -> list[Reason]:
        forbidden: frozenset[int] = _subject_set(rule)
        held = sorted(resolved.trait_names[t] for t in forbidden & self.traits[provider_id])
        if not held:  # not among the providers read: name the forbidden set
            names = ", ".join(sorted(resolved.trait_names[t] for t in forbidden))
            return [Reason(FORBIDDEN_TRAIT, f"has a forbidden trait of {names}")]
        return [Reason(FORBIDDEN_TRAIT, f"has forbidden trait {name}") for name in held]

    def _member_of(self, resolved: ResolvedGroup, provider_id: int, rule: Rule) -> list[Reason]:
        uuids: list[str] = sorted(_subject_set(rule))
        if len(uuids) == 1:
            return [Reason(NOT_A_MEMBER, f"not in aggregate {uuids[0]}")]
        return [Reason(NOT_A_MEMBER, f"not in any of aggregates {', '.join(uuids)}")]

    def _forbidden_aggregates(
        self, resolved: ResolvedGroup, provider_id: int, rule: Rule
    ) -> list[Reason]:
        forbidden: frozenset[str] = _subject_set(rule)
        held = sorted(forbidden & self.aggregates[provider_id])
        if not held:
            names = ", ".join(sorted(forbidden))
            return [Reason(FORBIDDEN_AGGREGATE, f"in a forbidden aggregate of {names}")]
        return [Reason(FORBIDDEN_AGGREGATE, f"in forbidden aggregate {uuid}") for uuid in held]

    def _resource(self, resolved: ResolvedGroup, provider_id: int, rule: Rule) -> list[Reason]:
        class_id = cast(int, rule.subject)  # a resource rule's subject: its class id
        name = resolved.class_names[class_id]
        if not self.judge.has(provider_id, class_id):
            return [Reason(NO_INVENTORY, f"has no inventory of {name}")]
        amount = resolved.resources[class_id]
        found = self.judge.shortfalls(provider_id, class_id, amount)
        if not found:  # the SQL rule refused what the model allows: say what the rule says
            return [Reason(EXCEEDS_CAPACITY, f"no room for {amount} {name}")]
        return [Reason(s.rule, s.describe(name)) for s in found]

    _by_kind: dict[str, Callable[["_Words", ResolvedGroup, int, Rule], list[Reason]]] = {
        provider_filter.IN_TREE: _in_tree,
        provider_filter.RESOURCES: _resource,
        provider_filter.REQUIRED_TRAITS: _required_traits,
        provider_filter.FORBIDDEN_TRAITS: _forbidden_traits,
        provider_filter.MEMBER_OF: _member_of,
        provider_filter.FORBIDDEN_AGGREGATES: _forbidden_aggregates,
    }


def _subject_set(rule: Rule) -> frozenset[Any]:
    """The subject of a trait or aggregate rule: a frozenset of trait ids or aggregate uuids
    (see :class:`~providers.selectors.resource_providers.Rule`)."""
    return cast(frozenset[Any], rule.subject)
