"""Which providers can satisfy a request group on their own, and why the others cannot.

Given a parsed request (request groups of resources, required and forbidden
traits, ``member_of`` aggregates), every provider either fits a group or
gets a list of reasons in words. Amounts are judged by the capacity model
(:meth:`providers.capacity.Capacity.shortfalls` and
:meth:`providers.capacity.Shortfall.describe`), never by a second copy of the
rules.

Scope, said plainly: providers are judged one by one. A group's resources
must all come from the one provider; trees (resources spread over a root and
its children) and sharing providers are not combined here, as the
allocation candidates engine does. Each provider of a tree is shown on its
own line with its own verdict.

The reads are set-based: a fixed handful of queries whatever the number of
providers, restricted to the classes, traits and aggregates the request
names.
"""

from collections import defaultdict
from dataclasses import dataclass, field
from typing import NamedTuple

from django.db.models import Sum

from allocations.models import Allocation

from ..capacity import Capacity
from ..models import (
    Aggregate,
    Inventory,
    ResourceClass,
    ResourceProvider,
    ResourceProviderAggregate,
    ResourceProviderTrait,
    Trait,
)

# Kinds of reason, besides the capacity model's own rules
# (providers.capacity.BELOW_MIN_UNIT, ABOVE_MAX_UNIT, NOT_A_STEP, EXCEEDS_CAPACITY).
NO_INVENTORY = "no_inventory"
MISSING_TRAIT = "missing_trait"
FORBIDDEN_TRAIT = "forbidden_trait"
NOT_A_MEMBER = "not_member"
FORBIDDEN_AGGREGATE = "forbidden_aggregate"


class FitRequestError(ValueError):
    """The request names a resource class or trait that does not exist."""


@dataclass(frozen=True)
class RequestGroup:
    """One request group: the unnumbered one (``suffix=""``) or a granular one."""

    suffix: str = ""
    resources: dict = field(default_factory=dict)  # class name -> amount
    required_traits: frozenset = frozenset()
    forbidden_traits: frozenset = frozenset()
    # Each entry is one member_of: the provider must be in at least one of its uuids.
    member_of: tuple = ()
    forbidden_aggregates: frozenset = frozenset()

    @property
    def label(self):
        return f"group {self.suffix}" if self.suffix else "unnumbered group"

    @property
    def is_empty(self):
        return not (
            self.resources
            or self.required_traits
            or self.forbidden_traits
            or self.member_of
            or self.forbidden_aggregates
        )


@dataclass(frozen=True)
class ParsedRequest:
    groups: tuple = ()


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


class ProviderFit(NamedTuple):
    provider_id: int
    reasons: list

    @property
    def fits(self):
        return not self.reasons


@dataclass
class GroupFit:
    group: RequestGroup
    results: list  # ProviderFit for every provider, in name order

    @property
    def fitting(self):
        return [r for r in self.results if r.fits]

    @property
    def left_out(self):
        return [r for r in self.results if not r.fits]

    def reason_counts(self):
        """How many providers were left out for each kind of reason, most common first."""
        counts = defaultdict(int)
        for result in self.results:
            for kind in {reason.kind for reason in result.reasons}:
                counts[kind] += 1
        return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


def _resolve(model, names, what):
    found = dict(model.objects.filter(name__in=names).values_list("name", "id"))
    missing = sorted(set(names) - set(found))
    if missing:
        raise FitRequestError(f"No such {what}: {', '.join(missing)}")
    return found


def provider_refs(ids):
    """{id: ProviderRef} for the providers to be shown (one query)."""
    rows = ResourceProvider.objects.filter(id__in=ids).values_list(
        "id", "uuid", "name", "parent_id", "root_id"
    )
    return {row[0]: ProviderRef._make(row) for row in rows}


def _capacities(class_ids):
    """{(provider_id, class_id): Capacity} for the classes asked for."""
    rows = Inventory.objects.filter(resource_class_id__in=class_ids).values_list(
        "resource_provider_id",
        "resource_class_id",
        "total",
        "reserved",
        "min_unit",
        "max_unit",
        "step_size",
        "allocation_ratio",
    )
    shapes = {}  # identical inventories share one (immutable) Capacity
    found = {}
    for rp, rc, *shape in rows:
        shape = tuple(shape)
        capacity = shapes.get(shape)
        if capacity is None:
            total, reserved, min_unit, max_unit, step_size, ratio = shape
            capacity = shapes[shape] = Capacity(
                total=total,
                reserved=reserved,
                min_unit=min_unit,
                max_unit=max_unit,
                step_size=step_size,
                allocation_ratio=ratio,
            )
        found[rp, rc] = capacity
    return found


def _usages(class_ids):
    """{(provider_id, class_id): used} for the classes asked for."""
    rows = (
        Allocation.objects.filter(resource_class_id__in=class_ids)
        .values("resource_provider_id", "resource_class_id")
        .annotate(used=Sum("used"))
        .values_list("resource_provider_id", "resource_class_id", "used")
    )
    return {(rp, rc): used for rp, rc, used in rows}


def _links(model, column, ids):
    """{provider_id: {id, ...}} for the trait or aggregate links asked for."""
    links = defaultdict(set)
    rows = model.objects.filter(**{f"{column}_id__in": ids}).values_list(
        "resource_provider_id", f"{column}_id"
    )
    for provider_id, linked_id in rows:
        links[provider_id].add(linked_id)
    return links


def fit_for_request(request):
    """One :class:`GroupFit` per group of ``request``, in the order given.

    Raises :class:`FitRequestError` for a resource class or trait name that
    does not exist (Placement answers such a request with a 400).
    """
    groups = [g for g in request.groups if not g.is_empty]
    class_names = {name for g in groups for name in g.resources}
    trait_names = {name for g in groups for name in g.required_traits | g.forbidden_traits}
    aggregate_uuids = {str(u) for g in groups for any_of in g.member_of for u in any_of}
    aggregate_uuids |= {str(u) for g in groups for u in g.forbidden_aggregates}

    class_ids = _resolve(ResourceClass, class_names, "resource class") if class_names else {}
    trait_ids = _resolve(Trait, trait_names, "trait") if trait_names else {}
    aggregate_ids = {
        str(u): i
        for u, i in Aggregate.objects.filter(uuid__in=aggregate_uuids).values_list("uuid", "id")
    }

    providers = list(ResourceProvider.objects.order_by("name").values_list("id", flat=True))
    capacities = _capacities(class_ids.values()) if class_ids else {}
    usages = _usages(class_ids.values()) if class_ids else {}
    traits = _links(ResourceProviderTrait, "trait", trait_ids.values()) if trait_ids else {}
    aggregates = (
        _links(ResourceProviderAggregate, "aggregate", aggregate_ids.values())
        if aggregate_ids
        else {}
    )

    judge = _Judge(class_ids, trait_ids, aggregate_ids, capacities, usages, traits, aggregates)
    return [
        GroupFit(group, [ProviderFit(p, judge.reasons(group, p)) for p in providers])
        for group in groups
    ]


class _Judge:
    """Judges providers against one group; the group's names are resolved once."""

    def __init__(self, class_ids, trait_ids, aggregate_ids, capacities, usages, traits, aggs):
        self.class_ids = class_ids
        self.trait_ids = trait_ids
        self.aggregate_ids = aggregate_ids
        self.capacities = capacities
        self.usages = usages
        self.traits = traits
        self.aggregates = aggs
        self._plans = {}
        self._verdicts = {}

    def _plan(self, group):
        plan = self._plans.get(id(group))
        if plan is None:
            member_of = []
            for any_of in group.member_of:
                uuids = sorted(str(u) for u in any_of)
                ids = {self.aggregate_ids.get(u) for u in uuids} - {None}
                if len(uuids) == 1:
                    text = f"not in aggregate {uuids[0]}"
                else:
                    text = f"not in any of aggregates {', '.join(uuids)}"
                member_of.append((ids, Reason(NOT_A_MEMBER, text)))
            plan = self._plans[id(group)] = (
                [(name, self.class_ids[name], amount) for name, amount in group.resources.items()],
                [
                    (self.trait_ids[name], Reason(MISSING_TRAIT, f"missing trait {name}"))
                    for name in sorted(group.required_traits)
                ],
                [
                    (self.trait_ids[name], Reason(FORBIDDEN_TRAIT, f"has forbidden trait {name}"))
                    for name in sorted(group.forbidden_traits)
                ],
                member_of,
                [
                    (
                        self.aggregate_ids.get(u),
                        Reason(FORBIDDEN_AGGREGATE, f"in forbidden aggregate {u}"),
                    )
                    for u in sorted(str(u) for u in group.forbidden_aggregates)
                ],
            )
        return plan

    def reasons(self, group, provider):  # provider: its id
        resources, required, forbidden, member_of, forbidden_aggregates = self._plan(group)
        found = []
        for name, class_id, amount in resources:
            key = (provider, class_id)
            capacity = self.capacities.get(key)
            if capacity is None:
                found.append(Reason(NO_INVENTORY, f"has no inventory of {name}"))
                continue
            used = self.usages.get(key, 0)
            # Identical inventories share one Capacity: judge each (shape, amount, used) once.
            verdict_key = (id(capacity), name, amount, used)
            verdict = self._verdicts.get(verdict_key)
            if verdict is None:
                verdict = self._verdicts[verdict_key] = [
                    Reason(shortfall.rule, shortfall.describe(name))
                    for shortfall in capacity.shortfalls(amount, used)
                ]
            found.extend(verdict)
        if required or forbidden:
            has = self.traits.get(provider, ())
            found += [reason for trait_id, reason in required if trait_id not in has]
            found += [reason for trait_id, reason in forbidden if trait_id in has]
        if member_of or forbidden_aggregates:
            within = self.aggregates.get(provider, set())
            found += [reason for ids, reason in member_of if not ids & within]
            found += [reason for agg_id, reason in forbidden_aggregates if agg_id in within]
        return found


@dataclass
class GroupReport:
    """A :class:`GroupFit` summed up, with the first ``shown`` providers of each side."""

    group: RequestGroup
    fitting_count: int
    left_out_count: int
    reason_counts: list  # (kind, count), most common first
    fitting: list  # (ProviderRef, [])
    left_out: list  # (ProviderRef, [Reason, ...])


def fit_report(request, shown=100):
    """:func:`fit_for_request` for a page: counts, and the first ``shown`` of each side by name."""
    group_fits = fit_for_request(request)
    picked = []
    for group_fit in group_fits:
        fitting = [r for r in group_fit.results if r.fits]
        left_out = [r for r in group_fit.results if not r.fits]
        picked.append((group_fit, fitting, left_out))
    ids = {r.provider_id for _, f, lo in picked for r in f[:shown] + lo[:shown]}
    refs = provider_refs(ids)
    return [
        GroupReport(
            group=group_fit.group,
            fitting_count=len(fitting),
            left_out_count=len(left_out),
            reason_counts=group_fit.reason_counts(),
            fitting=[(refs[r.provider_id], r.reasons) for r in fitting[:shown]],
            left_out=[(refs[r.provider_id], r.reasons) for r in left_out[:shown]],
        )
        for group_fit, fitting, left_out in picked
    ]
