"""Which providers satisfy a request: the provider filter engine.

A request is a :class:`~providers.request_groups.RequestGroup` (Placement's
word): resources with amounts, required traits (each entry a set of which any
one will do), forbidden traits, ``member_of`` aggregate sets (each entry a set
of which the provider must be in at least one), forbidden aggregates and an
``in_tree`` provider. Groups, their query-string language and the resolver
of names to ids live in :mod:`providers.request_groups`.

Everything is decided in SQL, set-based: :func:`group_rules` states one
rule per condition, correlated on the provider row, with its kind and
subject; :func:`providers_matching` ANDs them into a single query and
:func:`rule_verdicts` evaluates them for several groups and every provider in
one query (the dashboard's "why not"). Capacity comes from providers.capacity
(:func:`~providers.capacity.can_provide_q`), never from a copy of its rules.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from operator import itemgetter
from typing import Any, NamedTuple, cast

from django.db import connection
from django.db.models import (
    BigIntegerField,
    BooleanField,
    Case,
    Count,
    Exists,
    ExpressionWrapper,
    F,
    Func,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    When,
)
from django.db.models.expressions import RawSQL
from django.db.models.functions import Coalesce
from django.db.models.lookups import In

from placementsite.core.db import EpochSeconds, UuidText, query_rows

from .. import usage
from ..capacity import CAPACITY_FIELDS, can_provide_q, usable_expression
from ..models import (
    Inventory,
    ResourceProvider,
    ResourceProviderAggregate,
    ResourceProviderTrait,
)
from ..request_groups import RequestGroup, ResolvedGroup, resolve
from ..services.generations import provider_not_found

# --- building blocks --------------------------------------------------------


def inventories_that_fit(*, resource_class_id: int, amount: int) -> QuerySet:
    """Inventory rows of a class that can take ``amount`` more, on any provider.

    Annotated with ``used`` and ``usable``; the candidates engine starts here.
    """
    return (
        Inventory.objects.filter(resource_class_id=resource_class_id)
        .annotate(used=usage.usage_subquery(), usable=usable_expression())
        .filter(can_provide_q(amount, used=F("used")))
    )


def has_capacity(*, resource_class_id: int, amount: int) -> Q:
    """Condition on a provider row: its own inventory of the class can take ``amount``."""
    return Q(
        Exists(
            inventories_that_fit(resource_class_id=resource_class_id, amount=amount).filter(
                resource_provider_id=OuterRef("pk")
            )
        )
    )


def providers_with_capacity(*, resources: Mapping[int, int]) -> QuerySet:
    """The ids (a values queryset) of the providers whose own inventories can take every
    amount of ``resources`` (``{class id: amount}``): one pass over those classes' inventory
    rows, each with its usage joined, the rows that fit counted per provider (one inventory
    per provider and class: all of them must fit).

    With several classes the fit is counted in the aggregate (``COUNT(*) FILTER``), not
    filtered before it: the rows read are then those of the classes alone, which PostgreSQL
    counts right from its statistics, while it guesses a fit (an OR of per-class conditions
    on expressions) at a few hundred rows of 300,000 and joined the usage by a nested loop,
    in parallel workers whose rows it merged again (100,000 providers: a third less SQL time)."""
    inventories = Inventory.objects.filter(resource_class_id__in=list(resources))
    rows = usage.usage_joined_rows(inventories)
    if len(resources) == 1:  # a provider's one row of the class: nothing to count
        return rows.filter(_row_fits(resources)).values("resource_provider_id")
    return (
        rows.values("resource_provider_id")
        .annotate(fitting=Count("id", filter=_row_fits(resources)))
        .filter(fitting=len(resources))
        .values("resource_provider_id")
    )


class _IsTrue(Func):
    template = "(%(expressions)s) IS TRUE"
    output_field = BooleanField()


def has_capacity_for_all(*, resources: Mapping[int, int]) -> Q:
    """Condition on a provider row: it is among :func:`providers_with_capacity`, a set built
    once and probed per provider (PostgreSQL's hashed subplan): for judging a whole cloud,
    where per-provider checks cost an index lookup per provider and class.

    ``IS TRUE`` keeps PostgreSQL from turning the ``IN`` into a semi-join: it would plan it on
    its count of the set, misjudged at a row or two, and scan every provider once per member
    (minutes at 100,000 providers)."""
    return Q(_IsTrue(In(F("pk"), providers_with_capacity(resources=resources))))


def has_inventory(*, resource_class_id: int) -> Q:
    """Condition on a provider row: it has an inventory of the class (whatever its room)."""
    return Q(
        Exists(
            Inventory.objects.filter(
                resource_provider_id=OuterRef("pk"), resource_class_id=resource_class_id
            )
        )
    )


def has_any_trait(*, trait_ids: Iterable[int]) -> Q:
    return Q(
        Exists(
            ResourceProviderTrait.objects.filter(
                resource_provider_id=OuterRef("pk"), trait_id__in=list(trait_ids)
            )
        )
    )


def in_any_aggregate(*, aggregate_uuids: Iterable[str]) -> Q:
    return Q(
        Exists(
            ResourceProviderAggregate.objects.filter(
                resource_provider_id=OuterRef("pk"), aggregate__uuid__in=list(aggregate_uuids)
            )
        )
    )


def in_tree_of(*, provider_uuid: str) -> Q:
    """Condition: the provider shares the root of ``provider_uuid`` (false if unknown)."""
    root = ResourceProvider.objects.filter(uuid=provider_uuid).values("root_id")[:1]
    return Q(root_id=Subquery(root))


# Kinds of rule a group can state (:attr:`Rule.kind`).
IN_TREE = "in_tree"
RESOURCES = "resources"
REQUIRED_TRAITS = "required_traits"
FORBIDDEN_TRAITS = "forbidden_traits"
MEMBER_OF = "member_of"
FORBIDDEN_AGGREGATES = "forbidden_aggregates"


@dataclass(frozen=True)
class Rule:
    """One rule of a group: what it is about, and as a condition.

    ``subject`` is what the rule names: the provider uuid (IN_TREE), the
    resource class id (RESOURCES, amount in ``resolved.resources``), a
    frozenset of trait ids (REQUIRED_TRAITS: any one will do;
    FORBIDDEN_TRAITS: none may be there) or of aggregate uuids (MEMBER_OF,
    FORBIDDEN_AGGREGATES). The words a refusal is explained with are built
    in one place, :mod:`providers.selectors.fit`, keyed by ``kind``.
    """

    kind: str
    subject: object
    condition: Q  # on a ResourceProvider row


def group_rules(*, resolved: ResolvedGroup) -> list[Rule]:
    """Every rule of the group as a :class:`Rule`, in a fixed order.

    In-tree, resources (in the order asked), required traits, forbidden
    traits, member_of, forbidden aggregates.
    """
    group = resolved.group
    rules: list[Rule] = []
    if group.in_tree is not None:
        rules.append(Rule(IN_TREE, group.in_tree, in_tree_of(provider_uuid=group.in_tree)))
    for class_id, amount in resolved.resources.items():
        capacity = has_capacity(resource_class_id=class_id, amount=amount)
        rules.append(Rule(RESOURCES, class_id, capacity))
    for any_of in resolved.required_traits:
        rules.append(Rule(REQUIRED_TRAITS, any_of, has_any_trait(trait_ids=any_of)))
    if resolved.forbidden_traits:
        forbidden = resolved.forbidden_traits
        rules.append(Rule(FORBIDDEN_TRAITS, forbidden, ~has_any_trait(trait_ids=forbidden)))
    for any_of in group.member_of:
        rules.append(Rule(MEMBER_OF, any_of, in_any_aggregate(aggregate_uuids=any_of)))
    if group.forbidden_aggregates:
        forbidden_uuids = group.forbidden_aggregates
        not_in = ~in_any_aggregate(aggregate_uuids=forbidden_uuids)
        rules.append(Rule(FORBIDDEN_AGGREGATES, forbidden_uuids, not_in))
    return rules


def provider_conditions(*, resolved: ResolvedGroup) -> list[Q]:
    """Every rule of the group as a condition on ResourceProvider rows."""
    return [rule.condition for rule in group_rules(resolved=resolved)]


def with_tree_uuids(*, providers: QuerySet) -> QuerySet:
    """Annotate ``parent_provider_uuid`` and ``root_provider_uuid`` (no extra query).

    Each is a primary-key lookup per row, not a join: the request's conditions (correlated
    capacity checks) make PostgreSQL expect a row or two, and for that few it would join the
    parent and root by scanning the whole provider table once per row, quadratic in the cloud.
    """
    uuid_of = ResourceProvider.objects.values("uuid")
    return providers.annotate(
        parent_provider_uuid=Subquery(uuid_of.filter(pk=OuterRef("parent_id"))[:1]),
        root_provider_uuid=Subquery(uuid_of.filter(pk=OuterRef("root_id"))[:1]),
    )


# --- the selectors ----------------------------------------------------------


def providers_matching(
    *, group: RequestGroup | None = None, name: str | None = None, uuid: str | None = None
) -> QuerySet:
    """Providers (annotated with tree uuids, in id order) that satisfy ``group``.

    One query after :func:`resolve`; raises UnknownResourceClass / UnknownTrait.
    """
    return with_tree_uuids(providers=_providers_filtered(group, name, uuid)).order_by("id")


# A provider as ``GET /resource_providers`` lists it: uuid, name, generation, parent uuid, root
# uuid (the uuids as text, None for a root's parent), when it last changed (whole seconds since
# the epoch, UTC). Plain tuples, as the database driver makes them.
ProviderRow = tuple[str, str, int, str | None, str | None, int]


class ProviderListing(NamedTuple):
    rows: list[ProviderRow]  # in id order
    last_modified: datetime | None  # the newest of the rows' (None when there are none)


def provider_listing(
    *, group: RequestGroup | None = None, name: str | None = None, uuid: str | None = None
) -> ProviderListing:
    """:func:`providers_matching` read as rows rather than model instances, straight from the
    cursor (no converters: every column is text or an integer on both databases): a listing
    of a whole cloud (100,000 providers) spends most of its time building objects otherwise."""
    uuid_of = ResourceProvider.objects.values("uuid")
    # A root (most providers) is its own root and has no parent: no lookup for it.
    root_uuid = Case(
        When(root_id=F("id"), then=UuidText("uuid")),
        default=UuidText(Subquery(uuid_of.filter(pk=OuterRef("root_id"))[:1])),
    )
    parent_uuid = Case(
        When(
            parent_id__isnull=False,
            then=UuidText(Subquery(uuid_of.filter(pk=OuterRef("parent_id"))[:1])),
        ),
        default=None,
    )
    query = (
        _providers_filtered(group, name, uuid)
        .order_by("id")
        .values_list(
            UuidText("uuid"),
            "name",
            "generation",
            parent_uuid,
            root_uuid,
            EpochSeconds(Coalesce("updated_at", "created_at")),
        )
        .query
    )
    rows = query_rows(query)
    if not rows:
        return ProviderListing(rows, None)
    newest = max(map(itemgetter(5), rows))
    return ProviderListing(rows, datetime.fromtimestamp(newest, UTC))


def _providers_filtered(group: RequestGroup | None, name: str | None, uuid: str | None) -> QuerySet:
    providers = ResourceProvider.objects.all()
    if name is not None:
        providers = providers.filter(name=name)
    if uuid is not None:
        providers = providers.filter(uuid=uuid)
    if group is None:
        return providers
    rules = group_rules(resolved=(resolved := resolve(group)))
    # A request narrowed to a few providers checks their capacity one by one; one over the
    # whole cloud reads the capacity of every provider at once.
    if name is None and uuid is None and group.in_tree is None and resolved.resources:
        conditions = [rule.condition for rule in rules if rule.kind != RESOURCES]
        conditions.append(has_capacity_for_all(resources=resolved.resources))
    else:
        conditions = [rule.condition for rule in rules]
    return providers.filter(*conditions)


def rule_verdicts(
    *, resolved_groups: Sequence[ResolvedGroup], providers: QuerySet, **extra: Any
) -> tuple[list[list[Rule]], QuerySet]:
    """Whether each provider of ``providers`` meets each rule of each group: one query.

    ``resolved_groups`` is a sequence of ResolvedGroup, ``providers`` a
    ResourceProvider queryset (its order is kept) and ``extra`` further
    annotations to read in the same query. Returns ``(rules, rows)``:
    ``rules`` holds the :func:`group_rules` of each group, ``rows`` (a lazy
    queryset) one tuple per provider, ``(id, *extra values, *met)``, with one
    boolean per rule, group after group, in the order of ``rules``.
    """
    rules = [group_rules(resolved=resolved) for resolved in resolved_groups]
    annotations = {
        f"meets_{g}_{r}": ExpressionWrapper(_verdict(rule, resolved), output_field=BooleanField())
        for g, (group, resolved) in enumerate(zip(rules, resolved_groups, strict=True))
        for r, rule in enumerate(group)
    }
    rows = providers.annotate(**extra, **annotations).values_list("id", *extra, *annotations)
    return rules, rows


def _verdict(rule: Rule, resolved: ResolvedGroup) -> Q:
    """``rule`` judged for every provider: a resource rule as membership of the providers
    with the capacity (:func:`providers_with_capacity`, in a column: a set built once and
    probed per provider) rather than an index lookup per provider."""
    if rule.kind != RESOURCES:
        return rule.condition
    class_id = cast(int, rule.subject)
    amount = resolved.resources[class_id]
    return Q(pk__in=providers_with_capacity(resources={class_id: amount}))


def resource_provider_get(*, uuid: str) -> ResourceProvider:
    """One provider, annotated with its tree uuids; 404 when there is none."""
    provider = with_tree_uuids(providers=ResourceProvider.objects.filter(uuid=uuid)).first()
    if provider is None:
        raise provider_not_found(uuid=uuid)
    return provider


# --- additions for the allocation candidates engine -------------------------


def in_any_aggregate_via_root(*, aggregate_uuids: Iterable[str]) -> Q:
    """Condition: the provider or its root is in one of the aggregates.

    For the unsuffixed group of allocation candidates an aggregate on a root
    provider spans its whole tree (an aggregate on a child does not).
    """
    # Two EXISTS rather than one with an OR inside: each is an index lookup (PostgreSQL
    # cannot use an index for "provider = pk OR provider = root" and scans the pairs).
    members = ResourceProviderAggregate.objects.filter(aggregate__uuid__in=list(aggregate_uuids))
    return Q(Exists(members.filter(resource_provider_id=OuterRef("pk")))) | Q(
        Exists(members.filter(resource_provider_id=OuterRef("root_id")))
    )


def providers_meeting(
    *, resolved: ResolvedGroup, aggregates_via_root: bool = False, traits_on_provider: bool = True
) -> QuerySet:
    """Providers satisfying every rule of ``resolved`` except its resources.

    No query of its own (a queryset to use as a subquery). With
    ``aggregates_via_root`` membership is judged as :func:`in_any_aggregate_via_root`;
    without ``traits_on_provider`` the required traits are left out (the caller
    checks them over a set of providers) while forbidden traits stay.
    """
    group = resolved.group
    trimmed = RequestGroup(
        required_traits=group.required_traits if traits_on_provider else (),
        forbidden_traits=group.forbidden_traits,
        member_of=() if aggregates_via_root else group.member_of,
        forbidden_aggregates=frozenset() if aggregates_via_root else group.forbidden_aggregates,
        in_tree=group.in_tree,
    )
    without_resources = ResolvedGroup(
        group=trimmed,
        resources={},
        class_names={},
        required_traits=resolved.required_traits if traits_on_provider else (),
        forbidden_traits=resolved.forbidden_traits,
        trait_names=resolved.trait_names,
    )
    conditions = provider_conditions(resolved=without_resources)
    if aggregates_via_root:
        conditions += [
            in_any_aggregate_via_root(aggregate_uuids=any_of) for any_of in group.member_of
        ]
        if group.forbidden_aggregates:
            forbidden = group.forbidden_aggregates
            conditions.append(~in_any_aggregate_via_root(aggregate_uuids=forbidden))
    # One filter() with every condition: each filter() call copies the whole query.
    return ResourceProvider.objects.filter(*conditions)


def fitting_inventories_sql(
    *,
    resolved: ResolvedGroup,
    providers: QuerySet,
    columns: Sequence[str],
    hashed: bool = False,
    rows_among: Q | None = None,
) -> tuple[str, tuple[Any, ...]]:
    """``(sql, params)`` of the inventory rows of ``providers`` (a queryset) that can take
    the group's amount of their class, each as ``columns`` (inventory fields, ``root_id``
    and ``used``), in no order.

    One query; the capacity rule is :func:`~providers.capacity.can_provide_q`, given the
    usage of the row's provider and class (the allocations' maintained usage row, one at
    most) LEFT JOINed. The rows with their usage are chosen in a subquery and the rule is
    applied to them outside it: as a WHERE beside the joins, PostgreSQL misjudged how many
    rows pass and ran a filter on providers (traits, aggregates) once per inventory row,
    twice as slow at 10,000 and 100,000 providers (docs/performance.md, issue 28).
    ``OFFSET 0`` keeps PostgreSQL from pulling the rule into the subquery; grouping per row
    (a HAVING) did the same but sorted every row, on disk past ``work_mem`` (300,000 rows at
    100,000 providers: 0.65 against 0.31 s in EXPLAIN ANALYZE).

    ``hashed``: ``providers`` judged as membership of their set, built once and probed per
    inventory row (``IS TRUE`` keeps PostgreSQL from a semi-join), for a selection over the
    whole cloud. Without planner statistics (a fresh database) PostgreSQL guessed the rows of
    the asked classes at a few dozen of thousands and checked the providers' rules (an
    aggregate) once per row through the primary key; judged as membership, the rules run
    once per provider whatever the guess.

    ``rows_among``: a condition on the inventory rows themselves (their provider's columns
    through ``resource_provider__``, the join ``root_id`` is read from), beside ``providers``.
    """
    inventories = Inventory.objects.filter(resource_class_id__in=list(resolved.resources))
    if rows_among is not None:
        inventories = inventories.filter(rows_among)
    if providers.query.where and hashed:
        among = _IsTrue(In(F("resource_provider_id"), providers.values("id")))
        inventories = inventories.filter(among)
    elif providers.query.where:  # no condition on providers: no semi-join
        inventories = inventories.filter(resource_provider_id__in=providers.values("id"))
    chosen = usage.usage_joined_rows(
        inventories.annotate(root_id=F("resource_provider__root_id"))
    ).values_list(*_FITTING_COLUMNS)
    inner, inner_params = chosen.order_by().query.sql_with_params()
    # The rule over the subquery's columns: its rows named as the inventory table, so the
    # rule's fields are its columns, and ``used`` its column too.
    table = Inventory._meta.db_table
    rule = Inventory.objects.annotate(
        used=RawSQL(f'"{table}"."used"', (), output_field=BigIntegerField())
    ).filter(_row_fits(resolved.resources))
    compiler = rule.query.get_compiler(connection=connection)
    condition, condition_params = compiler.compile(rule.query.where)
    barrier = " OFFSET 0" if connection.vendor == "postgresql" else ""
    selected = ", ".join(f'"{table}"."{column}"' for column in columns)
    sql = f'SELECT {selected} FROM ({inner}{barrier}) "{table}" WHERE {condition}'
    return sql, (*inner_params, *condition_params)


# What fitting_inventories_sql's subquery selects: the columns it may answer and those the
# rule reads.
_FITTING_COLUMNS = (
    "resource_provider_id",
    "root_id",
    "resource_class_id",
    *CAPACITY_FIELDS,
    "used",
)


def _row_fits(resources: Mapping[int, int]) -> Q:
    """Condition on an inventory row annotated with its ``used``: it is of one of the classes
    of ``resources`` (``{class id: amount}``) and can take that class's amount."""
    fits = Q()
    for class_id, amount in resources.items():
        fits |= Q(resource_class_id=class_id) & can_provide_q(amount, used=F("used"))
    return fits
