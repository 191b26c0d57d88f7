"""Allocation candidates: the combinations of providers that can satisfy a request.

A request is a set of :class:`~providers.request_groups.RequestGroup`
keyed by suffix (``""`` is the unsuffixed group) plus request-wide options
(:class:`CandidateRequest`). The engine works in three steps:

1. **Select** (set-based SQL, one query per group): the inventory rows that
   can take each group's amounts, on providers meeting the group's other rules
   (the provider filter engine of providers.selectors.resource_providers),
   plus one query for sharing providers and the trees they are shared with. With a
   ``limit`` (and order not randomised), only the rows of the first trees by root id and of
   the sharing providers, a window of roots at a time, until the limit is met (see
   LIMIT_IN_WINDOWS): the candidates come out in root order, so they are the same.
2. **Assemble** per tree (anchor root) in Python, lazily: the unsuffixed
   group's resources may be spread over the tree and the sharing providers
   anchored to it (one provider per class), each granular group lands on one
   provider; ``group_policy=isolate``, ``same_subtree``, ``root_required`` and
   capacity when several groups share a provider are checked while the
   combination is built, as each group is added (a partial combination that
   can no longer meet ``same_subtree`` is not extended), so that a wide tree
   stops as soon as ``limit`` candidates exist (when order is not randomised).
   A work budget bounds the combinations examined, accepted or not, and the
   time spent: past either, the request is answered with what was found so
   far, as with the candidate cap, and the cut is logged.
3. **Summarise** the trees of the chosen candidates in three queries
   (scheduling.queries: fixed-shape SQL, like the sharing providers' query).

The number of queries does not depend on the number of providers (but for the windows of
a request with a limit: one for its bounds and one per group each, and the windows grow
geometrically). The hot loops work on plain ids and tuples (named below: InventoryKey,
Allocation, the SELECTED_* positions of a selection row): a Capacity is only built when two
slots land on the same inventory (SQL has already checked each amount alone), and
when no two slots ask for the same class and ``group_policy`` is not
``isolate``, the combinations of a tree are a plain product of the options
(distinct by construction, no capacity bookkeeping).
"""

import itertools
import logging
import random
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from django.conf import settings
from django.db.models import Exists, OuterRef, Q

from providers.capacity import CAPACITY_FIELDS, Capacity
from providers.models import (
    CUSTOM_PREFIX,
    SHARING_TRAIT,
    ResourceProvider,
    ResourceProviderTrait,
)
from providers.request_groups import CandidateRequest, Names, names_found, names_wanted
from providers.selectors import resource_providers as rp_selectors
from providers.selectors.resource_providers import has_any_trait

from . import queries
from .queries import MEMBER_ID, MEMBER_ROOT_ID, TreeMember

logger = logging.getLogger("placement.candidates")

__all__ = [
    "AllocationCandidates",
    "Candidate",
    "CandidateRequest",
    "CandidatesById",
    "ProviderSummary",
    "RenderedCandidate",
    "candidates_for_request",
    "find_candidates",
    "find_candidates_in_order",
]


# --- what the engine answers ------------------------------------------------

# The hot loops build these by the hundred thousand, so they stay plain tuples, named here.
InventoryKey = tuple[int, int]  # (provider id, class id): one inventory
Allocation = tuple[InventoryKey, int]  # (inventory, amount taken from it)
GroupMapping = tuple[str, list[int]]  # (suffix, [ids of the providers giving its resources])


class Candidate(NamedTuple):
    """One combination of providers answering a request, by id: ``allocations`` in inventory
    order (provider id, then class id), ``mappings`` in suffix order."""

    allocations: list[Allocation]
    mappings: list[GroupMapping]


# A candidate as the engine answers the API's edge: a Candidate, or for one provider giving
# every amount asked (a flat host's candidate) that provider's id alone, its allocations and
# mappings following from the request (AllocationCandidates.alone_amounts, alone_suffixes),
# or for a combination of the plain product (a host and a sharing provider, say) a plain
# tuple of the provider picked for each slot (AllocationCandidates.slots: see
# picked_candidate).
AnsweredCandidate = Candidate | int | tuple[int, ...]
# What each slot of a plain product takes: (suffix, ((class id, amount), ...)) per slot.
SlotLayout = tuple[tuple[str, tuple[tuple[int, int], ...]], ...]


def picked_candidate(slots: SlotLayout, picked: Sequence[int]) -> Candidate:
    """The :class:`Candidate` of ``picked`` (a provider per slot of ``slots``), as the
    engine builds it: allocations in inventory order, each group's providers in slot order."""
    allocations = sorted(
        ((provider_id, class_id), amount)
        for (_suffix, amounts), provider_id in zip(slots, picked, strict=True)
        for class_id, amount in amounts
    )
    by_suffix: dict[str, dict[int, None]] = {}
    for (suffix, _amounts), provider_id in zip(slots, picked, strict=True):
        by_suffix.setdefault(suffix, {})[provider_id] = None
    return Candidate(allocations, [(s, list(ps)) for s, ps in sorted(by_suffix.items())])


def answered_providers(candidate: AnsweredCandidate) -> Iterable[int]:
    """The providers an :data:`AnsweredCandidate` names (its mappings': those of
    resourceless groups too)."""
    if type(candidate) is int:
        return (candidate,)
    if type(candidate) is tuple:
        return candidate
    return [p for _suffix, ps in candidate[1] for p in ps]


class RenderedCandidate(NamedTuple):
    """A candidate as a client sees it: ``allocations`` is ``{provider uuid: {class name:
    amount}}``, ``mappings`` ``{suffix: [provider uuids]}``."""

    allocations: dict[str, dict[str, int]]
    mappings: dict[str, list[str]]


# One provider of the candidates' trees, as ``provider_summaries`` lists it: (uuid, parent
# uuid, root uuid, every inventory as {class: {"capacity", "used"}}, trait names in stable
# order: see trait_lists). A plain tuple: a large answer has one per host, and building a
# NamedTuple cost ten times as much. The inventories' inner dicts are shared (read them only).
ProviderSummary = tuple[str, str | None, str, dict[str, dict[str, int]], list[str]]
SUMMARY_UUID = 0


@dataclass
class AllocationCandidates:
    """The answer of ``GET /allocation_candidates`` in plain containers (no model objects):
    the :class:`Candidate` found, by id, with the names a client reads them by (``uuids`` of
    every provider they name, ``class_names`` of every class), and one
    :class:`ProviderSummary` per provider of their trees. The edge renders the candidates
    straight from ids into its microversion's shape: building an intermediate
    :class:`RenderedCandidate` for each of thousands took a fifth of a large answer's time."""

    candidates: list[AnsweredCandidate] = field(default_factory=list)
    uuids: dict[int, str] = field(default_factory=dict)
    class_names: dict[int, str] = field(default_factory=dict)
    provider_summaries: list[ProviderSummary] = field(default_factory=list)
    requested_classes: frozenset[str] = frozenset()
    # What a candidate given as its provider's id takes: (class id, amount) in class order
    # (as its allocations are), and the suffixes of the groups that provider answers, in order.
    alone_amounts: tuple[tuple[int, int], ...] = ()
    alone_suffixes: tuple[str, ...] = ()
    # What a candidate given as a tuple of providers takes per slot (see picked_candidate).
    slots: SlotLayout = ()


# --- step 1: select ---------------------------------------------------------

# The columns of a group's selection rows: one inventory of a provider that fits the group.
SELECTION_COLUMNS = (
    "resource_provider_id",
    "root_id",
    "resource_class_id",
    *CAPACITY_FIELDS,
    "used",
)
# A row's columns by position: the hot loops index the rows as the cursor gives them.
SELECTED_PROVIDER = SELECTION_COLUMNS.index("resource_provider_id")
SELECTED_ROOT = SELECTION_COLUMNS.index("root_id")
SELECTED_CLASS = SELECTION_COLUMNS.index("resource_class_id")
SELECTED_CAPACITY = slice(3, 3 + len(CAPACITY_FIELDS))  # Capacity's fields, in its order
SELECTED_TOTAL = SELECTION_COLUMNS.index("total")
SELECTED_RESERVED = SELECTION_COLUMNS.index("reserved")
SELECTED_RATIO = SELECTION_COLUMNS.index("allocation_ratio")
SELECTED_USED = SELECTION_COLUMNS.index("used")
# When no class is asked twice the rows are their first three columns only (see _select).
_KEY_COLUMNS = SELECTION_COLUMNS[:3]
SelectedRow = tuple[Any, ...]  # as SELECTION_COLUMNS (or _KEY_COLUMNS)


def _root_traits(request):
    return set(request.root_forbidden).union(*request.root_required)


def _names_and_anchors(groups, traits, first_window=None):
    """The :class:`Names` of the classes and traits of ``groups`` and ``traits``, the
    sharing anchors (see :func:`_anchors_of`) and the last root of the first window: one
    query for all. With ``first_window`` (its number of roots, see LIMIT_IN_WINDOWS) only the
    anchors of the trees in that window are read, and its last root (None: every root is in
    it); without, every anchor, and None. The sharing trait's id is read with the names,
    asked or not (a window's sharing providers are found by it, see _among)."""
    class_names, trait_names = names_wanted(groups, traits=traits)
    read = trait_names | {SHARING_TRAIT}
    found = queries.names_and_sharing_anchors(class_names, read, first_window)
    names = names_found(class_names, trait_names, found.class_ids, found.trait_ids)
    return names, _anchors_of(found.anchors), found.window_last


def _resolve_all(request, names):
    """Every class and trait name of the request resolved with ``names`` (looked up already).

    Returns ``({suffix: ResolvedGroup}, root trait ids (any-of sets), root forbidden ids)``.
    """
    resolved = {suffix: names.resolve(group) for suffix, group in request.groups.items()}
    root_required = tuple(names.traits(any_of) for any_of in request.root_required)
    return resolved, root_required, names.traits(request.root_forbidden)


@dataclass
class _GroupFit:
    """What one group can use: per class, per root, the providers with room."""

    suffix: str
    resources: dict  # class id -> amount
    # class id (None for a resourceless group) -> root id -> [provider ids]
    by_root: dict = field(default_factory=lambda: defaultdict(lambda: defaultdict(list)))
    # class id (None for a resourceless group) -> [provider ids] (all of them)
    providers: dict = field(default_factory=lambda: defaultdict(list))


@dataclass
class _Selection:
    """What step 1 found: per group what it can use, and the rows behind it."""

    fits: dict[str, _GroupFit] = field(default_factory=dict)
    # (provider id, class id) -> the inventory row selected (see SELECTION_COLUMNS), when its
    # capacity fields were read (a pass's rows, or a class asked by two groups)
    rows: dict[InventoryKey, SelectedRow] = field(default_factory=dict)
    root_of: dict[int, int] = field(default_factory=dict)  # provider id -> root id
    # provider id -> the trait ids it has among those the unsuffixed group requires
    required_traits_of: dict[int, set[int]] = field(default_factory=dict)


def _select(resolved, full=False, read=None, window=None):
    """One query per group: the providers (and their inventory) that fit it; ``full`` reads
    every row's capacity fields and usage (the scheduler's passes keep them). ``read``: what
    runs a group's query (``queries.fetch``, or a memo of it shared by several requests).
    ``window`` (a :class:`_Window`): only the rows of the trees whose root it holds, and of
    the sharing providers (groups asking resources only). Groups asking the same (say six
    ``VGPU:1``) run the same query: it is read once."""
    read = read or _SelectionReads().read
    selection = _Selection()
    # Capacity fields are only read when two slots may land on the same inventory (a class
    # asked by two groups); otherwise SQL has said all there is to know and three columns do.
    asked = [class_id for rg in resolved.values() for class_id in rg.resources]
    columns = SELECTION_COLUMNS if full or len(asked) != len(set(asked)) else _KEY_COLUMNS
    for suffix, rg in resolved.items():
        unsuffixed = suffix == ""
        fit = selection.fits[suffix] = _GroupFit(suffix=suffix, resources=dict(rg.resources))
        if not rg.resources:
            _select_resourceless(fit, rg, unsuffixed, selection.root_of)
            continue
        rows = _group_rows(rg, unsuffixed, columns, read, window)
        if full:
            # The scheduler's passes read the rows kept in provider and class order (the
            # first three columns order them): sorted here, as the database would sort
            # thousands of rows on disk.
            rows.sort()
        keep = columns is SELECTION_COLUMNS
        if not unsuffixed:
            by_provider = _classes_by_provider(rows, selection, keep)
            _fit_granular(fit, by_provider, selection.root_of, set(rg.resources))
            continue
        _fit_unsuffixed(fit, rows, selection, keep)
        if rg.required_traits:
            _read_required_traits(selection, rg, fit)
    return selection


def _read_required_traits(selection, rg, fit):
    """Which of the unsuffixed group's required traits each of its providers has (one
    query; the traits are checked over a combination's providers while assembling)."""
    providers = sorted(set().union(*fit.providers.values()))
    if not providers:
        return
    asked_traits = set().union(*rg.required_traits)
    for provider_id, trait_id in queries.provider_traits(providers, asked_traits):
        selection.required_traits_of.setdefault(provider_id, set()).add(trait_id)


def _group_rows(rg, unsuffixed, columns, read, window):
    """A group's selection rows: all of them, or those of a window of trees and of the
    sharing providers outside it anchored to its trees (whatever their tree: each serves the
    trees it is shared with), in one statement."""
    if window is None:
        return read(*_selection_sql(rg, unsuffixed, columns))
    in_window = _selection_sql(rg, unsuffixed, columns, _IN_WINDOW)
    anchors = window.anchors
    if not anchors:
        return read(*window.bind(in_window))
    sql, params = in_window
    shared_sql, shared_params = _selection_sql(
        rg, unsuffixed, columns, _SHARING, window.sharing_trait
    )
    rows = read(*window.bind((f"{sql} UNION ALL {shared_sql}", (*params, *shared_params))))
    # The rows outside the window are the sharing providers': those anchored in it serve.
    holds, provider_at, root_at = window.holds, SELECTED_PROVIDER, SELECTED_ROOT
    return [row for row in rows if row[provider_at] in anchors or holds(row[root_at])]


def _select_resourceless(fit, rg, unsuffixed, root_of):
    """A group asking no resources: every provider meeting its other rules fits it."""
    providers = _providers_meeting(rg, unsuffixed)
    for provider_id, root_id in providers.values_list("id", "root_id"):
        root_of[provider_id] = root_id
        fit.by_root[None][root_id].append(provider_id)
        fit.providers[None].append(provider_id)


def _classes_by_provider(rows, selection, keep):
    """``{provider id: {class ids}}`` of a group's selection rows, in provider id order (the
    order of the candidates), each provider's root kept in ``selection``, and with ``keep``
    each row by inventory (rows of capacity fields: the key columns alone are never read
    again). The rows may come in any order: sorting the ids alone costs a tenth of sorting
    the rows."""
    by_provider = {}
    root_of, kept = selection.root_of, selection.rows
    provider_at, root_at, class_at = SELECTED_PROVIDER, SELECTED_ROOT, SELECTED_CLASS
    for row in rows:
        provider_id, class_id = row[provider_at], row[class_at]
        root_of[provider_id] = row[root_at]
        classes = by_provider.get(provider_id)
        if classes is None:
            by_provider[provider_id] = {class_id}
        else:
            classes.add(class_id)
        if keep:
            kept[(provider_id, class_id)] = row
    return {provider_id: by_provider[provider_id] for provider_id in sorted(by_provider)}


def _fit_unsuffixed(fit, rows, selection, keep):
    """The unsuffixed group's resources may be spread over a tree: each provider fits for
    each class it has room for (in provider id order). ``keep``: see
    :func:`_classes_by_provider`."""
    if not keep:
        _fit_unsuffixed_keys(fit, rows, selection.root_of)
        return
    by_provider = _classes_by_provider(rows, selection, keep)
    root_of = selection.root_of
    fit_by_root, fit_providers = fit.by_root, fit.providers
    for provider_id, classes in by_provider.items():
        root_id = root_of[provider_id]
        for class_id in classes:
            fit_by_root[class_id][root_id].append(provider_id)
            fit_providers[class_id].append(provider_id)


def _fit_unsuffixed_keys(fit, rows, root_of):
    """:func:`_fit_unsuffixed` of rows of the key columns alone (nothing kept): one pass
    gathers each class's providers, sorted afterwards (ints: cheap), and a class's providers
    by root are built at once when no tree has two of them (flat hosts: a list of one
    each), with a loop only otherwise. Ten thousand hosts: 10 ms down to 4.5 ms."""
    by_class = {class_id: [] for class_id in fit.resources}
    for provider_id, root_id, class_id in rows:  # as _KEY_COLUMNS
        root_of[provider_id] = root_id
        by_class[class_id].append(provider_id)
    for class_id, providers in by_class.items():
        providers.sort()
        roots = list(map(root_of.__getitem__, providers))
        by_root = dict(zip(roots, map(list, zip(providers)), strict=True))
        if len(by_root) < len(providers):  # a tree with several providers of the class
            by_root = defaultdict(list)
            for provider_id, root_id in zip(providers, roots, strict=True):
                by_root[root_id].append(provider_id)
        fit.by_root[class_id] = by_root
        fit.providers[class_id] = providers


def _fit_granular(fit, by_provider, root_of, wanted):
    """A granular group lands on one provider: those with room for every class it asks."""
    for provider_id, classes in by_provider.items():
        if classes == wanted:
            fit.by_root[None][root_of[provider_id]].append(provider_id)
            fit.providers[None].append(provider_id)


# The SQL of a group's selection, by what shapes it (see _selection_sql); per process.
_SELECTION_SQL = {}
_SELECTION_SQL_SIZE = 512


def _providers_meeting(rg, unsuffixed):
    """The providers meeting the group's rules but resources (no query of its own): for
    the unsuffixed group aggregates count through the root and required traits are checked
    over the tree later; a granular group's provider meets them itself."""
    return rp_selectors.providers_meeting(
        resolved=rg, aggregates_via_root=unsuffixed, traits_on_provider=not unsuffixed
    )


# What a window's selection is among (see _selection_sql): the providers of the trees in a
# window of roots, or the sharing providers outside it.
_IN_WINDOW = "in window"
_SHARING = "sharing"
# Placeholders for a window's bounds in the SQL built once per shape (valid bigints no
# provider id takes), replaced by the bounds in the parameters (_Window.bind).
_FIRST_ROOT_PLACEHOLDER = -(2**62) - 11
_LAST_ROOT_PLACEHOLDER = -(2**62) - 13


def _among(kind, sharing_trait):
    """The providers condition of a windowed selection (see _selection_sql). The sharing
    providers by the sharing trait's id: by its name (a join), PostgreSQL guessed the
    links of an average trait and scanned every trait link (limit=10 at 10,000 providers:
    0.40 -> 0.03 ms)."""
    if kind == _IN_WINDOW:
        return Q(root_id__gte=_FIRST_ROOT_PLACEHOLDER, root_id__lte=_LAST_ROOT_PLACEHOLDER)
    outside = Q(root_id__lt=_FIRST_ROOT_PLACEHOLDER) | Q(root_id__gt=_LAST_ROOT_PLACEHOLDER)
    sharing = Exists(
        ResourceProviderTrait.objects.filter(
            resource_provider_id=OuterRef("pk"), trait_id=sharing_trait
        )
    )
    return outside & Q(sharing)


def _windowed(providers, among, sharing_trait):
    """``(providers, rows_among)`` for fitting_inventories_sql: a window's bounds on the rows'
    own provider (the join their ``root_id`` comes from, on its root_id index), and on
    ``providers`` only when they have rules of their own. As a subquery of providers alone,
    PostgreSQL hashed it against a scan of every provider for the join (limit=10 at 10,000
    providers: the selection 2.7 -> 1.7 ms)."""
    if among != _IN_WINDOW:
        if among is not None:
            providers = providers.filter(_among(among, sharing_trait))
        return providers, None
    rows_among = Q(
        resource_provider__root_id__gte=_FIRST_ROOT_PLACEHOLDER,
        resource_provider__root_id__lte=_LAST_ROOT_PLACEHOLDER,
    )
    if providers.query.where:
        providers = providers.filter(_among(among, sharing_trait))
    return providers, rows_among


def _selection_sql(rg, unsuffixed, columns, among=None, sharing_trait=None):
    """``(sql, params)`` selecting the inventory rows that fit ``rg`` (in no order: the
    caller sorts them); ``among``: only those of the providers in a window of roots
    (``_IN_WINDOW``: its bounds are the placeholders ``_Window.bind`` fills) or of the
    sharing providers outside it (``_SHARING``, the same placeholders; ``sharing_trait``:
    the sharing trait's id).

    The text depends only on the request (class and trait ids, amounts, aggregate and tree
    uuids), never on the data, and building it through the ORM took about as long as running
    it, so it is built once per shape. Ids come from names resolved on every request, so a
    class or trait recreated under the same name is a new shape.
    """
    group = rg.group
    key = (
        tuple(sorted(rg.resources.items())),
        rg.required_traits,
        rg.forbidden_traits,
        group.member_of,
        group.forbidden_aggregates,
        group.in_tree,
        unsuffixed,
        columns,
        among,
        sharing_trait,
    )
    found = _SELECTION_SQL.get(key)
    if found is None:
        providers, rows_among = _windowed(_providers_meeting(rg, unsuffixed), among, sharing_trait)
        # Over the whole cloud (no window, no tree), the providers are judged as a set.
        hashed = among is None and group.in_tree is None
        found = rp_selectors.fitting_inventories_sql(
            resolved=rg, providers=providers, columns=columns, hashed=hashed, rows_among=rows_among
        )
        if len(_SELECTION_SQL) >= _SELECTION_SQL_SIZE:
            _SELECTION_SQL.clear()
        _SELECTION_SQL[key] = found
    return found


def _capacity(row):
    """``(Capacity, used)`` of an inventory row selected as SELECTION_COLUMNS."""
    return Capacity(*row[SELECTED_CAPACITY]), row[SELECTED_USED]


def _anchors_of(rows):
    """``{sharing provider id: {root ids of the trees it is shared with}}`` of the rows of
    ``queries.sharing_anchors()``."""
    anchors = defaultdict(set)
    for sharing_id, root_id in rows:
        anchors[sharing_id].add(root_id)
    return anchors


def _roots_meeting(root_required, root_forbidden):
    """Ids of root providers with the ``root_required`` traits (one query)."""
    roots = ResourceProvider.objects.filter(parent__isnull=True)
    for any_of in root_required:
        roots = roots.filter(has_any_trait(trait_ids=any_of))
    if root_forbidden:
        roots = roots.filter(~has_any_trait(trait_ids=root_forbidden))
    return set(roots.values_list("id", flat=True))


# --- step 2: assemble -------------------------------------------------------


_NO_OPTIONS: list[int] = []  # a slot without providers in a tree (never changed)


class _BudgetExhausted(Exception):
    pass


class _Budget:
    """Bounds the work of one request: steps (combinations examined, partial or whole,
    accepted or not) and seconds. ``None`` for no bound."""

    CLOCK_EVERY = 1024  # steps between two reads of the clock

    def __init__(self, max_steps, seconds):
        self.max_steps = max_steps
        self.deadline = None if seconds is None else time.monotonic() + seconds
        self.steps = 0
        self.reason = None

    def spend(self):
        self.steps += 1
        if self.max_steps is not None and self.steps > self.max_steps:
            self.reason = f"{self.max_steps} combinations examined"
            raise _BudgetExhausted
        if (
            self.deadline is not None
            and self.steps % self.CLOCK_EVERY == 0
            and time.monotonic() > self.deadline
        ):
            self.reason = "time budget spent"
            raise _BudgetExhausted


class _Slot(NamedTuple):
    """A place in a combination: a class of the unsuffixed group (its providers may differ
    per class), or a whole granular group (``class_id`` None: one provider gives it all)."""

    suffix: str
    class_id: int | None


# A slot with at most this many options in a tree has them tried one by one against a
# same_subtree constraint; one with more has them looked up from each ancestor (see
# :meth:`_Assembler._subtree_choices`: the same choices, in the same order).
FEW_SUBTREE_OPTIONS = 8


class _SubtreeIndex:
    """A tree's ``options`` (per slot, see :meth:`_Assembler.for_root`) as
    :meth:`_Assembler._subtree_choices` looks them up, built per slot on first use: the
    options as a set, and for a slot of many options ``{provider: [its options in its
    subtree]}`` (from each option's ``lineage``) with each option's place among them."""

    def __init__(self, options, lineage):
        self.options = options
        self._lineage = lineage
        self._sets = {}
        self._below = {}

    def option_set(self, index):
        found = self._sets.get(index)
        if found is None:
            found = self._sets[index] = frozenset(self.options[index])
        return found

    def below(self, index):
        """``({provider: [options of slot index in its subtree]}, {option: its place})``."""
        found = self._below.get(index)
        if found is None:
            below = defaultdict(list)
            for provider_id in self.options[index]:
                for ancestor in self._lineage(provider_id):
                    below[ancestor].append(provider_id)
            position = {p: n for n, p in enumerate(self.options[index])}
            found = self._below[index] = (below, position)
        return found


class _SlotAmount(NamedTuple):
    """What a slot takes of one class."""

    slot: int  # the slot's index
    class_id: int
    amount: int


class _ProductLayout(NamedTuple):
    """What :meth:`_Assembler._plain_product_candidates` builds each candidate from."""

    entries: list[_SlotAmount]  # per slot, per class it takes
    by_class: list[_SlotAmount]  # the same, in class order
    suffixes: list[tuple[str, list[int]]]  # (suffix, [its slot indexes]) in suffix order
    one_suffix: str | None  # the one suffix of every slot (a one-group request), else None


def _slots_of(resolved):
    """The slots to fill: one per class of the unsuffixed group, then one per granular
    group."""
    unsuffixed = resolved.get("")
    slots = []
    if unsuffixed is not None and unsuffixed.resources:
        slots += [_Slot("", class_id) for class_id in unsuffixed.resources]
    slots += [_Slot(suffix, None) for suffix in resolved if suffix != ""]
    return slots


def _slot_layout(resolved):
    """Per slot (see :func:`_slots_of`): its suffix and what it takes (a
    :data:`SlotLayout`)."""
    layout = []
    for suffix, class_id in _slots_of(resolved):
        resources = resolved[suffix].resources
        amounts = resources.items() if class_id is None else [(class_id, resources[class_id])]
        layout.append((suffix, tuple(amounts)))
    return tuple(layout)


@dataclass
class _Seen:
    """The candidates an assembler yielded (see :meth:`_Assembler._repeats`): ``every`` one
    (when they may repeat), ``shared`` those of sharing providers alone. Carried from one
    window of roots to the next, as one assembler over every root would carry them."""

    every: set = field(default_factory=set)
    shared: set = field(default_factory=set)


class _Assembler:
    """Builds candidates tree by tree, lazily, from what :func:`_select` found."""

    def __init__(self, request, resolved, selection, anchors, budget=None, alone_as_id=False):
        self.request = request
        # Whether a candidate of one provider giving every slot (and no sharing provider) is
        # yielded as that provider's id (an :data:`AnsweredCandidate`) rather than built.
        self.alone_as_id = alone_as_id
        self.budget = budget or _Budget(None, None)
        self.resolved = resolved
        self.fits = selection.fits
        self.capacities = selection.rows
        self.root_of = selection.root_of
        self.traits_of = selection.required_traits_of
        self.anchors = {p: roots for p, roots in anchors.items() if p in self.root_of}
        self.parent_of = {}
        self._lineages = {}
        self._shared_cache = {}
        self._sources = None
        self._anchored = None
        self._single = None
        self.isolate = request.group_policy == "isolate"
        unsuffixed = resolved.get("")
        self.unsuffixed_required = unsuffixed.required_traits if unsuffixed else ()
        self.slots = _slots_of(resolved)
        self.resourceless = {s for s, rg in resolved.items() if s and not rg.resources}
        # Per slot: its suffix and what it takes, as ((class id, amount), ...).
        self.slot_suffixes = [slot.suffix for slot in self.slots]
        self.slot_amounts = [amounts for _suffix, amounts in _slot_layout(resolved)]
        self.simple = self._is_plain_product()
        self.distinct = self._picks_distinct()
        # Index of the last slot of the unsuffixed group: its required traits are checked there.
        self.last_unsuffixed = max(
            (i for i, slot in enumerate(self.slots) if slot.suffix == ""), default=None
        )
        self.subtree_plan = self._subtree_plan()

    def _is_plain_product(self):
        """Whether every combination of options is valid capacity-wise and distinct: no two
        slots can land on the same inventory and every slot takes something. same_subtree
        is pruned while combining (the product would build every combination of a wide tree
        first), so it needs the general path."""
        classes = [class_id for amounts in self.slot_amounts for class_id, _a in amounts]
        return (
            not self.isolate
            and len(classes) == len(set(classes))
            and not self.resourceless
            and not self.request.same_subtree
        )

    def _picks_distinct(self):
        """Whether a combination's allocations tell which provider each slot took: no class
        is asked twice (no two slots share an inventory, so no capacity is summed) and every
        slot takes something. Two combinations are then never the same candidate, but for
        those of sharing providers alone found from each tree they are shared with."""
        classes = [class_id for amounts in self.slot_amounts for class_id, _a in amounts]
        return len(classes) == len(set(classes)) and not self.resourceless

    def _subtree_plan(self):
        """Per slot, for each same_subtree constraint that includes it after its first slot:
        ``(its slots before this one, its slots after it)``. At a constraint's first slot
        any option may be the top: the constraint does not narrow that slot's choices."""
        slot_of = {slot.suffix: i for i, slot in enumerate(self.slots) if slot.suffix}
        constraints = [
            tuple(sorted(slot_of[s] for s in suffixes)) for suffixes in self.request.same_subtree
        ]
        return [
            [
                (tuple(i for i in c if i < index), tuple(i for i in c if i > index))
                for c in constraints
                if index in c and c[0] < index
            ]
            for index in range(len(self.slots))
        ]

    def _roots_for(self, suffix, key):
        """The roots where a slot has options: its providers' own, and the trees its sharing
        providers are shared with (whose own roots are among the first)."""
        roots = set(self.fits[suffix].by_root[key])
        roots.update(self._shared_by_root(suffix, key))
        return roots

    def _sharing_among(self, providers):
        """The sharing providers among ``providers``, in their order (a few among thousands:
        one membership test each, in C, then the work for those alone)."""
        anchors = self.anchors
        return list(filter(anchors.__contains__, providers)) if anchors else []

    def candidate_roots(self, allowed_roots=None):
        roots = None
        for suffix, key in self.slots:
            found = self._roots_for(suffix, key)
            roots = found if roots is None else roots & found
            if not roots:
                return []
        if roots is None:
            return []
        if allowed_roots is not None:
            roots &= allowed_roots
        return sorted(roots)

    def alone_roots(self, roots):
        """The trees of ``roots`` whose one candidate takes every class from the root itself
        (a one-group plain product, every slot's one option the root, which is no sharing
        provider); none when the request is not such a product."""
        if not self.simple or list(self.resolved) != [""] or self.unsuffixed_required:
            return set()
        if not self.slots:
            return set()
        alone = {
            root_id
            for root_id, provider_id in self._alone_roots().items()
            if provider_id == root_id
        }
        return alone.intersection(roots)

    def _shared_by_root(self, suffix, key):
        """``{root id: [sharing providers of the slot anchored there, from other trees]}``."""
        cache_key = (suffix, key)
        if cache_key not in self._shared_cache:
            shared = defaultdict(list)
            for provider_id in self._sharing_among(self.fits[suffix].providers[key]):
                for root_id in self.anchors[provider_id]:
                    if root_id != self.root_of[provider_id]:
                        shared[root_id].append(provider_id)
            self._shared_cache[cache_key] = shared
        return self._shared_cache[cache_key]

    def _lineage(self, provider_id):
        """The provider and its ancestors, as a frozenset (computed once per provider)."""
        found = self._lineages.get(provider_id)
        if found is None:
            chain = []
            current = provider_id
            while current is not None:
                chain.append(current)
                current = self.parent_of.get(current)
            found = self._lineages[provider_id] = frozenset(chain)
        return found

    def _subtree_choices(self, index, picked, subtree):
        """The options of slot ``index`` in the tree (``subtree``, a :class:`_SubtreeIndex`)
        that keep every same_subtree constraint possible, given the providers ``picked`` for
        the slots before it, in their original order (see :meth:`_keeping_constraint`).

        A few options are tried one by one: an option follows when it is a common ancestor
        of those picked or lies below one of the tops. Many options (a wide tree) are found
        through each top's list of options below it instead, without trying them one by one:
        on a wide tree most of them could never complete a combination."""
        options = subtree.options[index]
        plan = self.subtree_plan[index]
        if len(options) <= FEW_SUBTREE_OPTIONS:
            return self._few_choices(options, plan, picked, subtree)
        below, position = subtree.below(index)
        allowed = None
        for earlier, later in plan:
            common, tops = self._keeping_constraint(earlier, later, picked, subtree)
            found = {p for top in tops for p in below.get(top, ())}
            found.update(p for p in common if p in position)
            allowed = found if allowed is None else allowed & found
        return sorted(allowed, key=position.__getitem__)

    def _few_choices(self, options, plan, picked, subtree):
        """:meth:`_subtree_choices` among a few ``options``, tried one by one: those in
        ``common`` or below one of ``tops`` of each constraint (see
        :meth:`_keeping_constraint`)."""
        lineage = self._lineage
        if len(plan) == 1:  # most often: one constraint
            ((earlier, later),) = plan
            if len(earlier) == 1 and not later:  # its second slot of two: above or below
                top = picked[earlier[0]]
                above = lineage(top)
                return [p for p in options if p in above or top in lineage(p)]
            common, tops = self._keeping_constraint(earlier, later, picked, subtree)
            return [p for p in options if p in common or not lineage(p).isdisjoint(tops)]
        kept = [self._keeping_constraint(e, later, picked, subtree) for e, later in plan]
        return [
            p
            for p in options
            if all(p in common or not lineage(p).isdisjoint(tops) for common, tops in kept)
        ]

    def _keeping_constraint(self, earlier, later, picked, subtree):
        """``(common, tops)`` of one same_subtree constraint whose slots ``earlier`` are
        picked already and ``later`` are not yet: an option of the slot between them keeps
        the constraint possible when it is in ``common`` or below one of ``tops``.

        A constraint holds when one of its providers (the top) is an ancestor or self of all
        of them, so the top is a common ancestor of those picked so far (``common``). An
        option ``p`` may follow when such a common ancestor is ``p`` itself, or lies above
        ``p`` and is picked already or an option of a later slot of the constraint (one of
        ``tops``). At a constraint's last slot this is the rule itself.
        """
        members = {picked[i] for i in earlier}
        if len(members) == 1:
            (member,) = members
            common = self._lineage(member)
            if not later:
                return common, (member,)
        else:
            common = frozenset.intersection(*(self._lineage(p) for p in members))
        later_sets = [subtree.option_set(i) for i in later]
        tops = [t for t in common if t in members or any(t in s for s in later_sets)]
        return common, tops

    def _traits_ok(self, unsuffixed_providers):
        if not self.unsuffixed_required:
            return True
        have = set().union(*(self.traits_of.get(p, set()) for p in unsuffixed_providers))
        return all(any_of & have for any_of in self.unsuffixed_required)

    def for_root(self, root_id):
        """Every combination for one anchor root, as a tuple of providers (one per slot)."""
        options = self._options(root_id)
        if options is None:
            return iter(())
        if self.simple:
            return itertools.product(*options)
        subtree = _SubtreeIndex(options, self._lineage) if self.request.same_subtree else None
        return self._fill(options, subtree)

    def _option_sources(self):
        """Per slot: its providers by root, those of the tree and the sharing providers
        anchored there (see :meth:`_options`), built once."""
        if self._sources is None:
            self._sources = [
                (self.fits[suffix].by_root[key], self._shared_by_root(suffix, key))
                for suffix, key in self.slots
            ]
        return self._sources

    def _options(self, root_id):
        """Per slot, its providers for one anchor root (the tree's own, then the sharing
        providers anchored there), or None when a slot has none."""
        sources = self._option_sources()
        # Most slots have no sharing provider: their options are the tree's own list (the
        # combining below reads the options, never changes them).
        options = [
            local.get(root_id, _NO_OPTIONS) + shared.get(root_id, [])
            if shared
            else local.get(root_id, _NO_OPTIONS)
            for local, shared in sources
        ]
        return options if all(options) else None

    def _fill(self, options, subtree):
        """The combinations of ``options`` (a provider per slot) that keep the request's
        rules, depth first in the options' order, each choice tried spent from the budget:
        ``group_policy=isolate``, capacity where two slots land on one inventory, the
        unsuffixed group's required traits and same_subtree (a slot's choices are those that
        keep its constraints possible). One generator per tree, walking the slots with a
        stack of the choices left at each."""
        if not self.slots:
            yield ()
            return
        last = len(self.slots) - 1
        plan, spend = self.subtree_plan, self.budget.spend
        # Without isolate, summed capacity or traits to check, any choice may be taken.
        free = self.distinct and not self.isolate and not self.unsuffixed_required
        take, drop = (None, _drop_any) if free else (self._take, _drop)
        picked, kept = [], []  # the providers picked, and what taking each changed
        usage, granular_used = {}, set()
        pending = [iter(options[0])]  # no constraint narrows its first slot's choices
        while pending:
            index = len(pending) - 1
            provider_id = next(pending[index], None)
            if provider_id is None:  # the slot's choices are spent: back to the slot before
                pending.pop()
                if picked:
                    drop(picked, kept, usage, granular_used)
                continue
            spend()
            if take is not None:
                taken = take(index, provider_id, picked, usage, granular_used)
                if taken is None:
                    continue
                kept.append(taken)
            picked.append(provider_id)
            if index == last:
                yield tuple(picked)
                drop(picked, kept, usage, granular_used)
                continue
            index += 1
            choices = self._subtree_choices(index, picked, subtree) if plan[index] else None
            pending.append(iter(options[index] if choices is None else choices))

    def _take(self, index, provider_id, picked, usage, granular_used):
        """Whether ``provider_id`` may fill slot ``index`` after ``picked``: None if not,
        else what :func:`_drop` undoes when it leaves (``usage`` and ``granular_used`` have
        it). Without two slots on one inventory (``distinct``) no capacity is summed."""
        # As Placement: isolate keeps every suffixed group apart, resourceless ones too.
        isolated = self.isolate and self.slot_suffixes[index] != ""
        if isolated and provider_id in granular_used:
            return None
        added = _NOTHING_ADDED
        if not self.distinct:
            added = self._add_if_room(usage, provider_id, self.slot_amounts[index])
            if added is None:
                return None
        if (
            index == self.last_unsuffixed
            and self.unsuffixed_required
            and not self._traits_ok([*picked, provider_id])
        ):
            _give_back(usage, added)
            return None
        if isolated:
            granular_used.add(provider_id)
        return added, isolated

    def _add_if_room(self, usage, provider_id, amounts):
        """Add ``amounts`` (``((class id, amount), ...)``) on ``provider_id`` to ``usage``
        (inventory -> units taken so far).

        Returns what to give back, or None (``usage`` unchanged) when an inventory that an
        earlier slot already uses cannot take the sum.
        """
        added = []
        for class_id, amount in amounts:
            inventory = (provider_id, class_id)
            total = usage.get(inventory, 0) + amount
            if inventory in usage:
                capacity, used = _capacity(self.capacities[inventory])
                if not capacity.can_provide(total, used):
                    _give_back(usage, added)
                    return None
            added.append((inventory, usage.get(inventory)))
            usage[inventory] = total
        return added

    def candidates(self, roots, seen=None):
        """Distinct :class:`Candidate` over ``roots``, lazily. ``seen``: the candidates
        yielded already over earlier roots (by other assemblers: see :class:`_Seen`)."""
        seen = seen or _Seen()
        if self.simple:
            plain = self._alone_or_built if self.alone_as_id else self._plain_product_candidates
            yield from plain(roots, seen.shared)
            return
        if self.distinct:
            yield from self._distinct_candidates(roots, seen.shared)
            return
        seen = seen.every
        # The general path (_fill) has checked the traits while combining.
        spend = self.budget.spend
        for root_id in roots:
            for picked in self.for_root(root_id):
                spend()
                usage, chosen = self._usage_and_mappings(picked)
                allocations = sorted(usage.items())
                mappings = sorted(chosen.items())
                if self._repeats(allocations, mappings, seen):
                    continue
                yield Candidate(allocations, mappings)

    def _distinct_candidates(self, roots, seen_shared):
        """:meth:`candidates` of the general path when picks are ``distinct``: each
        allocation is one slot's (no usage to sum) and only combinations of sharing
        providers alone may repeat (as in :meth:`_built`, which this inlines: a granular
        group's mapping is its one slot's provider)."""
        anchors = self.anchors
        spend = self.budget.spend
        layout = self._product_layout()
        entries = layout.entries
        # Per suffix (in order): its one slot, or its slots (the unsuffixed group's classes).
        suffixes = [
            (suffix, indexes[0] if len(indexes) == 1 else indexes)
            for suffix, indexes in layout.suffixes
        ]
        for root_id in roots:
            for picked in self.for_root(root_id):
                spend()
                allocations = sorted([((picked[i], c), a) for i, c, a in entries])
                mappings = [
                    (suffix, [picked[at]] if type(at) is int else _distinct(picked, at))
                    for suffix, at in suffixes
                ]
                if (
                    picked
                    and picked[0] in anchors
                    and self._repeats_shared(picked, allocations, mappings, seen_shared)
                ):
                    continue
                yield Candidate(allocations, mappings)

    def _usage_and_mappings(self, picked):
        """``({inventory: units}, {suffix: [provider ids]})`` of one combination."""
        usage = {}
        chosen = {}
        for suffix, amounts, provider_id in zip(
            self.slot_suffixes, self.slot_amounts, picked, strict=True
        ):
            for class_id, amount in amounts:
                inventory = (provider_id, class_id)
                usage[inventory] = usage.get(inventory, 0) + amount
            providers = chosen.get(suffix)
            if providers is None:
                chosen[suffix] = [provider_id]
            elif provider_id not in providers:
                providers.append(provider_id)
        return usage, chosen

    def _repeats(self, allocations, mappings, seen):
        """Whether a candidate equal to this one (its mappings count from 1.34) is in
        ``seen``; adds it when it is not."""
        key = tuple(allocations)
        if self.request.distinct_mappings:
            key = (key, tuple((s, tuple(ps)) for s, ps in mappings))
        if key in seen:
            return True
        seen.add(key)
        return False

    def _product_layout(self):
        """The slots' classes and suffixes as :meth:`_plain_product_candidates` reads them."""
        entries = [
            _SlotAmount(index, class_id, amount)
            for index, amounts in enumerate(self.slot_amounts)
            for class_id, amount in amounts
        ]
        by_suffix = defaultdict(list)
        for index, suffix in enumerate(self.slot_suffixes):
            by_suffix[suffix].append(index)
        suffixes = sorted(by_suffix.items())
        first_suffix, _slots = suffixes[0]
        return _ProductLayout(
            entries=entries,
            # Every slot on one provider (a flat host): the allocations in class order, as
            # sorting them would give (no class is asked twice here).
            by_class=sorted(entries, key=lambda entry: entry.class_id),
            suffixes=suffixes,
            # One suffix for every slot (a one-group request): its providers are the picked.
            one_suffix=first_suffix if len(suffixes) == 1 else None,
        )

    def _plain_product_candidates(self, roots, seen_shared):
        """:meth:`candidates` when the combinations are a plain product (``simple``): no
        slot shares an inventory with another, so each allocation is one slot's, and the
        mappings follow from the slots' suffixes. The unsuffixed group's required traits
        are checked over its providers (the first slots), once per distinct tuple of them."""
        spend = self.budget.spend
        layout = self._product_layout()
        traits_ok = self._unsuffixed_traits_check()
        for root_id in roots:
            combinations = self.for_root(root_id)
            if traits_ok is not None:
                combinations = self._meeting(combinations, traits_ok)
            for picked in combinations:
                spend()
                candidate = self._built(picked, layout, seen_shared)
                if candidate is not None:
                    yield candidate

    def _alone_or_built(self, roots, seen_shared):
        """:meth:`_plain_product_candidates` answering the API's edge (``alone_as_id``): a
        combination of one provider giving every slot, but a sharing provider (the trees
        it is shared with could each give it), is that provider's id (an
        :data:`AnsweredCandidate`), any other combination not led by a sharing provider
        (which may repeat: see :meth:`_built`) the tuple of its providers. A tree of one
        provider giving every slot (a flat host) has no other combination: it is answered
        without combining."""
        anchors = self.anchors
        spend = self.budget.spend
        layout = self._product_layout()
        slots = len(self.slot_suffixes)
        traits_ok = self._unsuffixed_traits_check()
        alone = self._alone_roots()
        hosted, patterns = self._hosted_alike()
        for root_id in roots:
            provider_id = alone.get(root_id)
            if provider_id is not None:
                spend()
                if traits_ok is None or traits_ok((provider_id,) * slots):
                    yield provider_id
                continue
            provider_id = hosted.get(root_id)
            if provider_id is not None:
                yield from self._hosted(provider_id, patterns, traits_ok, layout, seen_shared)
                continue
            options = self._options(root_id)
            if options is None:
                continue
            combinations = itertools.product(*options)
            if traits_ok is not None:
                combinations = self._meeting(combinations, traits_ok)
            for picked in combinations:
                spend()
                first = picked[0]
                if first not in anchors:
                    yield first if picked.count(first) == slots else picked
                    continue
                candidate = self._built(picked, layout, seen_shared)
                if candidate is not None:
                    yield candidate

    def _alone_roots(self):
        """``{root id: provider id}`` of the trees where one provider, not a sharing one, is
        every slot's only option (a flat host's tree): their one combination."""
        anchored = self._anchored_roots()
        return {
            root_id: provider_id
            for root_id, provider_id in self._single_provider_roots().items()
            if root_id not in anchored
        }

    def _anchored_roots(self):
        """The roots where some slot has a sharing provider of another tree as an option
        (built once: the flat hosts' and the aggregate hosts' shortcuts both read it)."""
        if self._anchored is None:
            self._anchored = set().union(*(shared for _local, shared in self._option_sources()))
        return self._anchored

    def _single_provider_roots(self):
        """``{root id: provider id}`` of the trees whose own options are one provider, not a
        sharing one, in every slot (a flat host's tree), sharing providers anchored there
        or not: found a slot at a time over every root rather than root by root, once."""
        if self._single is None:
            self._single = self._find_single_provider_roots()
        return self._single

    def _find_single_provider_roots(self):
        (first, _shared), *others = self._option_sources()
        anchors = self.anchors
        single = {
            root_id: options[0]
            for root_id, options in first.items()
            if len(options) == 1 and options[0] not in anchors
        }
        for local, _shared in others:
            single = {
                root_id: provider_id
                for root_id, provider_id in single.items()
                if local.get(root_id) == [provider_id]
            }
        return single

    def _hosted_alike(self):
        """``({root id: provider id}, patterns)`` of the trees anchored to sharing providers
        whose own options are one provider (see :meth:`_single_provider_roots`), when each
        slot has one sharing provider or none and every anchored tree has them all (hosts
        of one aggregate): each such tree's combinations are the ``patterns``
        (:func:`_sharing_patterns`) filled with its provider. ``({}, None)`` otherwise."""
        anchored = self._anchored_roots()
        sharing = []
        for (suffix, key), (_local, shared) in zip(self.slots, self._option_sources(), strict=True):
            among = self._sharing_among(self.fits[suffix].providers[key]) if shared else []
            if shared and (len(among) != 1 or len(shared) != len(anchored)):
                return {}, None
            sharing.append(tuple(among))
        single = self._single_provider_roots()
        hosted = {root_id: single[root_id] for root_id in anchored.intersection(single)}
        return hosted, _sharing_patterns(tuple(sharing))

    def _hosted(self, host, patterns, traits_ok, layout, seen_shared):
        """:meth:`_alone_or_built` of a tree of :meth:`_hosted_alike`: its combinations (the
        product of ``host`` and the sharing options per slot, in that order) from their
        ``patterns``, without building the options and their product per tree."""
        spend = self.budget.spend
        for pattern, kind in patterns:
            spend()
            if kind is _PATTERN_ALONE:
                picked = (host,) * len(pattern)
            else:
                picked = tuple([host if p is None else p for p in pattern])
            if traits_ok is not None and not traits_ok(picked):
                continue
            if kind is _PATTERN_ALONE:
                yield host
            elif kind is _PATTERN_HOST_LED:
                yield picked
            else:
                candidate = self._built(picked, layout, seen_shared)
                if candidate is not None:
                    yield candidate

    def _built(self, picked, layout, seen_shared):
        """The :class:`Candidate` of one combination of the plain product (see
        :meth:`_plain_product_candidates`), or None when it repeats one of sharing providers
        alone yielded already."""
        entries, by_class, suffixes, one_suffix = layout
        first = picked[0] if picked else None
        alone = bool(picked) and picked.count(first) == len(picked)
        if alone:
            allocations = [((first, c), a) for _i, c, a in by_class]
        else:
            allocations = sorted([((picked[i], c), a) for i, c, a in entries])
        if one_suffix is not None:
            mappings = [(one_suffix, [first] if alone else list(dict.fromkeys(picked)))]
        else:
            mappings = [
                (suffix, list(dict.fromkeys([picked[i] for i in indexes])))
                for suffix, indexes in suffixes
            ]
        if first in self.anchors and self._repeats_shared(
            picked, allocations, mappings, seen_shared
        ):
            return None
        return Candidate(allocations, mappings)

    def _unsuffixed_traits_check(self):
        """None when the unsuffixed group requires no trait, else whether a combination's
        providers of that group (its first slots) have them: at once when one of them has
        them all (a host with the trait and a sharing disk), else answered once per distinct
        tuple of them."""
        required = self.unsuffixed_required
        if not required:
            return None
        slots = 0 if self.last_unsuffixed is None else self.last_unsuffixed + 1
        known = {}  # the unsuffixed group's providers (a tuple) -> whether they have them
        complete = self._complete_providers(required)

        def traits_ok(picked):
            providers = picked[:slots]
            if not complete.isdisjoint(providers):
                return True
            ok = known.get(providers)
            if ok is None:
                ok = known[providers] = self._traits_ok(providers)
            return ok

        return traits_ok

    def _complete_providers(self, required):
        """The providers having all the unsuffixed group's ``required`` traits themselves.
        With one set of them asked (any one will do), every provider of ``traits_of`` does:
        it holds the providers having one of the traits read (those asked), and no other."""
        if len(required) == 1:
            return set(self.traits_of)
        return {
            p for p, have in self.traits_of.items() if all(any_of & have for any_of in required)
        }

    def _meeting(self, combinations, traits_ok):
        """The ``combinations`` whose unsuffixed providers have the traits, the others
        counted as examined."""
        spend = self.budget.spend
        for picked in combinations:
            if traits_ok(picked):
                yield picked
            else:
                spend()

    def _repeats_shared(self, picked, allocations, mappings, seen):
        """Whether a combination of sharing providers alone (found from each tree they are
        shared with) was yielded already (see :meth:`_repeats`)."""
        anchors = self.anchors
        return all(p in anchors for p in picked) and self._repeats(allocations, mappings, seen)


# --- step 3: summarise ------------------------------------------------------


def _summaries(root_ids, members=None):
    """Summaries (:data:`ProviderSummary`) of every provider of the trees ``root_ids``, in id
    order, and ``{provider id: uuid}`` of those providers: three queries (one for a few trees:
    queries.tree_summaries), or two with ``members`` (the
    :func:`~scheduling.queries.tree_members` of the candidate trees, read already; trees
    missing from it are read)."""
    providers, inventory_rows, trait_rows = _summary_rows(root_ids, members)
    ids = [member[MEMBER_ID] for member in providers]
    uuids = {provider_id: uuid for provider_id, uuid, _parent_id, _root_id in providers}
    resources = {provider_id: {} for provider_id in ids}
    # usable_units inlined, each provider's dict looked up once, and one dict per distinct
    # inventory (class, total, reserved, ratio, used), shared by the providers having it
    # (read-only): hundreds of thousands of rows, most of them alike.
    last, of_provider, alike = None, {}, {}
    for provider_id, name, total, reserved, ratio, used in inventory_rows:
        if provider_id != last:
            last, of_provider = provider_id, resources[provider_id]
        inventory = (name, total, reserved, ratio, used)
        summary = alike.get(inventory)
        if summary is None:
            summary = alike[inventory] = {"capacity": int((total - reserved) * ratio), "used": used}
        of_provider[name] = summary
    traits_of = trait_lists(ids, trait_rows)
    summaries = [
        (
            uuid,
            None if parent_id is None else uuids[parent_id],
            uuids[root_id],
            resources[provider_id],
            traits_of.get(provider_id, []),
        )
        for provider_id, uuid, parent_id, root_id in providers
    ]
    return summaries, uuids


def _summary_rows(root_ids, members):
    """What :func:`_summaries` reads: ``(tree members, inventories with usage, trait names or
    None)`` of the trees ``root_ids`` (see queries.tree_summaries), in one query for a few
    trees, else in two or one (with ``members``), the traits left to :func:`trait_lists`."""
    if members is None and len(root_ids) <= queries.FEW_TREES:
        return queries.tree_summaries(root_ids)
    if members is None:
        # Sorted as their providers' ids are: for flat hosts the same array (see
        # queries._long_array).
        providers = queries.tree_members(sorted(root_ids))
    else:
        providers = [member for member in members if member[MEMBER_ROOT_ID] in root_ids]
        # Trees of sharing providers are not among the candidate (anchor) trees.
        missing = set(root_ids) - {member[MEMBER_ROOT_ID] for member in providers}
        if missing:
            providers = sorted(providers + list(queries.tree_members(missing)))
    ids = [member[MEMBER_ID] for member in providers]
    return providers, queries.inventories_with_usage(ids), None


def trait_lists(
    provider_ids: Iterable[int], rows: list[tuple[int, str]] | None = None
) -> dict[int, list[str]]:
    """``{provider id: [trait names]}`` in the stable order of providers.selectors.traits
    (standard traits, then custom ones, each in id order); one query, or none with ``rows``
    (those of ``queries.trait_names(provider_ids)``, read already)."""
    standard = defaultdict(list)
    custom = defaultdict(list)
    for provider_id, name in queries.trait_names(provider_ids) if rows is None else rows:
        (custom if name.startswith(CUSTOM_PREFIX) else standard)[provider_id].append(name)
    for provider_id, names in custom.items():
        standard[provider_id] += names
    return standard


# --- the selector -----------------------------------------------------------


def _bound(value):
    """A setting where a negative number means "no bound"."""
    return None if value is None or value < 0 else value


def _collect_within_budget(generated, most, budget):
    """Up to ``most`` candidates of ``generated`` (None: all), or those found when the
    budget ran out (logged)."""
    found = []
    if most == 0:
        return found
    try:
        if most is None:
            found.extend(generated)  # keeps those found when the budget runs out
        else:
            for candidate in generated:
                found.append(candidate)
                if len(found) >= most:
                    break
    except _BudgetExhausted:
        logger.warning(
            "Allocation candidates cut short (%s): answering with the %d found so far",
            budget.reason,
            len(found),
        )
    return found


@dataclass
class CandidatesById:
    """The engine's answer by id, before it is rendered for a client.

    ``candidates``: the :class:`Candidate` found, in order (answering the API's edge, see
    :func:`_find`, an :data:`AnsweredCandidate` each). ``root_of`` gives the root of
    every provider they name, ``class_names`` the names of the classes, ``sharing`` the
    sharing providers among them. ``members`` holds the
    :func:`~scheduling.queries.tree_members` rows of the candidate trees when the engine read
    them (for ``same_subtree``).
    """

    candidates: list[Candidate] = field(default_factory=list)
    root_of: dict[int, int] = field(default_factory=dict)
    class_names: dict[int, str] = field(default_factory=dict)
    sharing: frozenset[int] = frozenset()
    requested_classes: frozenset[str] = frozenset()
    members: list[TreeMember] | None = None
    tree_blind: bool = False
    # {(provider id, class id): free units} of the rows selected (scheduler passes only).
    free: dict[InventoryKey, int] | None = None
    # {(provider id, class id): the row selected, as SELECTION_COLUMNS} (scheduler passes
    # only): the pass's trees' totals take these rows instead of reading them again.
    rows: dict[InventoryKey, SelectedRow] | None = None
    # Whether the request's limit, or its own roots (a target host), stopped the read: more
    # candidates may exist.
    limited: bool = False
    # Why the work or time budget stopped the engine before every candidate was found
    # (None: it was not): a simulated fill over this answer is then a lower bound.
    cut_short: str | None = None
    # Trees whose one candidate was left unbuilt (find_candidates ``alone_apart``: a what-if
    # count's pass): it takes ``alone_amounts`` (``((class id, amount), ...)`` in class id
    # order) from the root alone; :meth:`alone_candidate` builds it.
    alone: list[int] = field(default_factory=list)
    alone_amounts: tuple[tuple[int, int], ...] = ()
    # What a candidate given as a tuple of providers (the API's edge) takes per slot.
    slots: SlotLayout = ()

    def roots(self) -> set[int]:
        """Ids of the trees the candidates use, sharing providers' trees included."""
        root_of = self.root_of
        candidates = self.candidates
        # The mappings name every provider of a candidate: those its allocations take from
        # (each allocation is a group's) and those of resourceless groups. A one-provider
        # candidate given as its id (AnsweredCandidate) names that provider alone.
        roots = {root_of[c] for c in candidates if type(c) is int}
        roots.update(
            root_of[p] for c in candidates if type(c) is not int for p in answered_providers(c)
        )
        return roots

    def alone_candidate(self, root_id: int) -> Candidate:
        """The one candidate of a tree of :attr:`alone`, as the engine builds it."""
        return Candidate([((root_id, c), a) for c, a in self.alone_amounts], [("", [root_id])])

    def render(self, candidate: Candidate, uuids: dict[int, str]) -> RenderedCandidate:
        """One candidate as a client sees it, with ``uuids`` mapping provider ids to uuids."""
        allocations, mappings = candidate
        class_names = self.class_names
        by_provider = {}
        for (provider_id, class_id), amount in allocations:
            uuid = uuids[provider_id]
            resources = by_provider.get(uuid)
            if resources is None:
                resources = by_provider[uuid] = {}
            resources[class_names[class_id]] = amount
        return RenderedCandidate(
            by_provider, {suffix: [uuids[p] for p in ps] for suffix, ps in mappings}
        )

    def add_later(self, later: "CandidatesById") -> None:
        """Add the answer of a request tried after those of this one (see
        :func:`find_candidates_in_order`): its candidates after these, its rows where these
        have none (``members`` is the caller's)."""
        self.candidates.extend(later.candidates)
        self.root_of.update(later.root_of)
        self.class_names.update(later.class_names)
        self.sharing |= later.sharing
        self.requested_classes |= later.requested_classes
        self.tree_blind = self.tree_blind or later.tree_blind
        self.limited = self.limited or later.limited
        self.cut_short = self.cut_short or later.cut_short
        if later.free is not None:
            self.free = {**later.free, **(self.free or {})}
        if later.rows is not None:
            self.rows = {**later.rows, **(self.rows or {})}


class _QueryMemo:
    """Each query (text and parameters) read once: its rows kept in ``rows`` (a dict field of
    the dataclasses below) and answered again from there."""

    rows: dict

    def read(self, sql, params):
        key = (sql, repr(params))
        if key not in self.rows:
            self.rows[key] = queries.fetch(sql, params)
        return self.rows[key]


@dataclass
class _SelectionReads(_QueryMemo):
    """The queries of one selection (see :func:`_select`), each read once."""

    rows: dict = field(default_factory=dict)


@dataclass
class _Shared(_QueryMemo):
    """What several requests tried in order (:func:`find_candidates_in_order`) read once: the
    names of all of them, the sharing anchors, the root providers with the root traits, and
    each group's selection (a page size's NUMA group is the same query in every variant that
    asks it)."""

    names: Names
    anchors: dict
    rows: dict = field(default_factory=dict)
    roots_meeting: dict = field(default_factory=dict)


# --- a limit pushed down: windows of roots ---------------------------------

# Candidates come out tree by tree in root id order (candidate_roots), so the first ``limit``
# of them are found among the first trees: a request with a limit (and no randomised order)
# selects the rows of a window of roots at a time, the sharing providers' rows always, and
# stops at the window where the limit is reached. The first window holds this many roots,
# or this many per candidate asked when more; each next one at least twice as many as the
# last, as many as the candidates found so far say the rest needs (half as many again), or
# when none was found yet EMPTY_WINDOW_GROWTH times as many (a window can cost about as
# much as reading every root: a request few trees answer must not read many of them).
LIMIT_IN_WINDOWS = True
# The rows a window reads and assembles are per root: at 100,000 flat hosts, limit=10's first
# window of 80 roots -> 20 took the request from 8.6 to 7.1 ms. A request few trees answer
# reads more windows; each of at most WINDOW_ANCHORS_PROBED roots reads its trees' sharing
# anchors with its bound, probing each provider (about 4 us: 5 ms for 1,280 roots), and the
# first larger one every anchor, once (1 ms at 1,000 providers, about 50 ms with a quarter of
# 100,000 hosts in a sharing aggregate).
FIRST_WINDOW_ROOTS = 16
WINDOW_ROOTS_PER_CANDIDATE = 2
WINDOW_ANCHORS_PROBED = 512
# A scheduler's pass asks many candidates (PLACEMENT_SCHEDULER_MAX_PLACEMENT_RESULTS) of hosts
# giving about one each: its first window is this many roots per candidate (100,000 flat hosts,
# 1,000 candidates: 1.4 s at 8 -> 0.7 s at 2), the next ones grow from what it found.
PASS_WINDOW_ROOTS_PER_CANDIDATE = 2
# From a first window of 20 roots, 1,280 roots next: as from the 80 roots before (the wide
# trees after 1,270 others: a window of 320 between them cost two statements more).
EMPTY_WINDOW_GROWTH = 64
_LOWEST_ID = -(2**63)  # bigint's bounds: the first window starts at one, the last ends at one
_HIGHEST_ID = 2**63 - 1


@dataclass(frozen=True)
class _Window:
    """The roots with ids from ``first`` to ``last`` (both included), and the sharing
    ``anchors`` (see :func:`_anchors_of`) of their trees, or more."""

    first: int
    last: int
    anchors: dict
    sharing_trait: int | None  # the sharing trait's id (None: no provider shares)

    def holds(self, root_id):
        return self.first <= root_id <= self.last

    def bind(self, sql_with_params):
        """A windowed selection's ``(sql, params)`` with this window's bounds."""
        sql, params = sql_with_params
        bounds = {_FIRST_ROOT_PLACEHOLDER: self.first, _LAST_ROOT_PLACEHOLDER: self.last}
        return sql, [bounds.get(p, p) if type(p) is int else p for p in params]


class _WindowsOf(NamedTuple):
    """What a request read in windows read with its names: the sharing ``anchors`` (see
    :func:`_anchors_of`) of its first window's trees (or of every tree, for a request of its
    own roots), and the first window's ``last`` root (None: every root is in it)."""

    anchors: dict
    last: int | None
    sharing_trait: int | None  # its id (see _Window)


def _in_windows(request, shared):
    """Whether the request is answered window by window: a limit on the candidates (of the
    API, or a boot's PLACEMENT_SCHEDULER_MAX_PLACEMENT_RESULTS), answered in order, each group
    asking resources (a resourceless group's providers are not selected by inventory) and no
    same_subtree (it reads the candidate trees' members once, for all of them)."""
    return (
        LIMIT_IN_WINDOWS
        and shared is None
        and bool(request.limit)
        and not settings.PLACEMENT_RANDOMIZE_ALLOCATION_CANDIDATES
        and not request.same_subtree
        and all(group.resources for group in request.groups.values())
    )


def _first_window(request, full):
    """The number of roots of a request's first window (see LIMIT_IN_WINDOWS); ``full``: a
    scheduler's pass."""
    per_candidate = PASS_WINDOW_ROOTS_PER_CANDIDATE if full else WINDOW_ROOTS_PER_CANDIDATE
    return max(1, FIRST_WINDOW_ROOTS, per_candidate * request.limit)


@dataclass
class _WindowsRead:
    """How far the windows of a request went: ``roots`` they held (but the last), candidates
    ``found`` in them, out of ``wanted``."""

    wanted: int
    roots: int = 0
    found: int = 0

    def next_size(self, size):
        """The roots of the window after one of ``size`` roots (see LIMIT_IN_WINDOWS)."""
        if not self.found:
            return size * EMPTY_WINDOW_GROWTH
        needed = (self.wanted - self.found) * self.roots / self.found
        return max(size * 2, int(needed * 1.5) + 1)


def _root_windows(size, first_window, progress):
    """Windows of ``size`` roots, then as many as ``progress`` (a :class:`_WindowsRead`, kept
    by the caller) says, until the last root. The first one's last root and anchors are
    ``first_window`` (a :class:`_WindowsOf`, read with the request's names); each next one's
    last root is a query (on the primary key's index), with its trees' anchors while it holds
    at most WINDOW_ANCHORS_PROBED roots; the first larger one reads every anchor, for all of
    them."""
    first, last, anchors = _LOWEST_ID, first_window.last, first_window.anchors
    sharing_trait = first_window.sharing_trait
    every = None
    while True:
        yield _Window(first, _HIGHEST_ID if last is None else last, anchors, sharing_trait)
        if last is None:
            return
        progress.roots += size
        first, size = last + 1, progress.next_size(size)
        if every is None and size <= WINDOW_ANCHORS_PROBED:
            last, rows = queries.window_and_sharing_anchors(first=first, size=size)
            anchors = _anchors_of(rows)
            continue
        last = queries.root_at_offset(first=first, offset=size - 1)
        if every is None:
            anchors = every = _anchors_of(queries.sharing_anchors())


def _candidates_in_windows(
    request, resolved, first, allowed_roots, budget, answer, full, alone_as_id
):
    """The candidates of ``request`` as :meth:`_Assembler.candidates` over every root gives
    them, selecting a window of roots at a time as they are consumed; the providers' roots
    and the sharing providers used go into ``answer`` as each window is read, and with
    ``full`` (a scheduler's pass) the rows selected too. ``first``: what was read with the
    request's names (a :class:`_WindowsOf`)."""
    seen = _Seen()
    progress = _WindowsRead(wanted=request.limit)
    if request.roots is None:
        windows = _root_windows(_first_window(request, full), first, progress)
    else:  # a window per root named, in id order: no other tree is read
        windows = (
            _Window(root, root, first.anchors, first.sharing_trait)
            for root in sorted(request.roots)
        )
    for window in windows:
        selection = _select(resolved, full=full, window=window)
        answer.root_of.update(selection.root_of)
        if full:
            answer.rows.update(selection.rows)
        assembler = _Assembler(request, resolved, selection, window.anchors, budget, alone_as_id)
        answer.sharing |= frozenset(assembler.anchors)
        roots = [r for r in assembler.candidate_roots(allowed_roots) if window.holds(r)]
        for candidate in assembler.candidates(roots, seen):
            progress.found += 1
            yield candidate


def _find_in_windows(
    request, resolved, windows, allowed_roots, budget, answer, capped, alone_as_id
):
    """:func:`find_candidates` for a request answered window by window (see
    :func:`_in_windows`)."""
    if not capped:
        answer.rows = {}
    generated = _candidates_in_windows(
        request, resolved, windows, allowed_roots, budget, answer, not capped, alone_as_id
    )
    generated = _for_tree_blind(request, generated, answer)
    answer.candidates = _answered(request, generated, capped, budget)
    # Narrowed to the request's own roots, the read left the other trees out too.
    answer.limited = len(answer.candidates) >= request.limit or request.roots is not None
    answer.cut_short = budget.reason
    if answer.rows is not None:
        # A pass keeps the rows of the trees answered and of the sharing providers: the last
        # window may hold many more trees than the limit needed.
        roots, sharing = answer.roots(), answer.sharing
        answer.rows = {
            key: row
            for key, row in answer.rows.items()
            if row[SELECTED_ROOT] in roots or key[0] in sharing
        }
        answer.free = _free_units(answer.rows)
    for rg in resolved.values():
        answer.class_names.update(rg.class_names)
    return answer


def find_candidates(
    request: CandidateRequest,
    *,
    capped: bool = True,
    shared: _Shared | None = None,
    alone_apart: bool = False,
) -> CandidatesById:
    """The allocation candidates answering ``request``, by id (see :class:`CandidatesById`).

    ``capped=False`` (the scheduler's own passes, bounded by their time budget and the work
    budget below) does not stop at PLACEMENT_MAX_ALLOCATION_CANDIDATES: a pass must see every
    host, and a simulated fill every candidate of each; only the request's ``limit`` (a
    boot's PLACEMENT_SCHEDULER_MAX_PLACEMENT_RESULTS) bounds it, ``limited`` telling when it
    did.

    ``alone_apart`` (a what-if count's pass, uncapped): the trees whose one candidate takes
    everything from the root (:meth:`_Assembler.alone_roots`) are listed in ``alone``, their
    candidates left unbuilt; the others' candidates are as without it (see
    :func:`_apart_alone`).

    Raises UnknownResourceClass / UnknownTrait for names that do not exist.
    """
    return _find(request, capped=capped, shared=shared, alone_apart=alone_apart and not capped)


def _find(request, *, capped=True, shared=None, alone_as_id=False, alone_apart=False):
    """:func:`find_candidates`; with ``alone_as_id`` (the API's edge) a candidate of one
    provider giving every slot is that provider's id (see :data:`AnsweredCandidate`)."""
    windowed = _in_windows(request, shared)
    # A request read in windows of roots from the first needs the anchors of its first window
    # alone, and its bound: read with its names.
    first_window = None
    if windowed and request.roots is None:
        first_window = _first_window(request, not capped)
    if shared is None:
        names, anchors, last = _names_and_anchors(
            request.groups.values(), _root_traits(request), first_window
        )
    else:
        names, anchors, last = shared.names, shared.anchors, None
    resolved, root_required, root_forbidden = _resolve_all(request, names)
    requested = frozenset(name for group in request.groups.values() for name in group.resources)
    budget = _Budget(
        _bound(settings.PLACEMENT_ALLOCATION_CANDIDATES_MAX_EXAMINED),
        _bound(settings.PLACEMENT_ALLOCATION_CANDIDATES_TIME_BUDGET),
    )
    alone_amounts = _alone_amounts(resolved)
    slots = _slot_layout(resolved)
    if windowed:
        allowed = _allowed_roots(request, root_required, root_forbidden, None)
        answer = CandidatesById(
            requested_classes=requested, alone_amounts=alone_amounts, slots=slots
        )
        windows = _WindowsOf(anchors, last, names.trait_ids.get(SHARING_TRAIT))
        return _find_in_windows(
            request, resolved, windows, allowed, budget, answer, capped, alone_as_id
        )
    selection = _select(resolved, full=not capped, read=shared.read if shared else None)
    assembler = _Assembler(request, resolved, selection, anchors, budget, alone_as_id)
    roots = assembler.candidate_roots(
        _allowed_roots(request, root_required, root_forbidden, shared)
    )
    answer = CandidatesById(
        requested_classes=requested,
        root_of=selection.root_of,
        alone_amounts=alone_amounts,
        slots=slots,
    )
    if not roots:
        return answer
    if request.same_subtree:
        # The providers of the candidate trees, read once: their parents for same_subtree
        # and, later, their uuids for the summaries.
        answer.members = queries.tree_members(roots)
        assembler.parent_of = {pk: parent_id for pk, _uuid, parent_id, _root in answer.members}
    generated = _apart_alone(assembler, roots, budget, answer, alone_apart)
    generated = _for_tree_blind(request, generated, answer)
    answer.candidates = _answered(request, generated, capped, budget)
    answer.limited = request.roots is not None or (
        bool(request.limit) and len(answer.candidates) >= request.limit
    )
    answer.cut_short = budget.reason
    answer.sharing = frozenset(assembler.anchors)
    if not capped:
        # Free units of every inventory a candidate may use: a pass consumes from them.
        answer.free = _free_units(selection.rows)
        answer.rows = selection.rows
    for rg in resolved.values():
        answer.class_names.update(rg.class_names)
    return answer


def _apart_alone(assembler, roots, budget, answer, apart):
    """:meth:`_Assembler.candidates` over ``roots``, with ``apart`` but for the trees of
    :meth:`_Assembler.alone_roots`, each listed in ``answer.alone`` instead: in root order,
    each counted as one combination examined (as its candidate would be), so a budget stops
    at the same tree with or without them."""
    alone = assembler.alone_roots(roots) if apart else None
    if alone:
        roots = _roots_built(roots, alone, budget, answer.alone)
    return assembler.candidates(roots)


def _roots_built(roots, alone, budget, listed):
    """``roots`` but those of ``alone``, each listed in ``listed`` and counted as examined
    when the assembler reaches it (after the candidates of the trees before it)."""
    spend = budget.spend
    for root_id in roots:
        if root_id in alone:
            spend()
            listed.append(root_id)
        else:
            yield root_id


def _for_tree_blind(request, generated, answer):
    """The candidates ``generated`` a client may see: all of them, or for a client before
    1.29 when any provider has a parent (``answer.tree_blind``, set here) those with one
    provider per tree (the trees from ``answer.root_of``, read as they are generated)."""
    answer.tree_blind = not request.nested_aware and _any_tree()
    if not answer.tree_blind:
        return generated
    root_of = answer.root_of
    return (
        c
        for c in generated
        if type(c) is int or _one_provider_per_tree(set(_allocating(c)), root_of)
    )


def _allowed_roots(request, root_required, root_forbidden, shared):
    """The roots with the root traits (None: no root trait asked), read once per asked
    traits for several requests (``shared``), and among the request's own ``roots``."""
    if not root_required and not root_forbidden:
        return request.roots
    key = (root_required, root_forbidden)
    memo = shared.roots_meeting if shared else {}
    if key not in memo:
        memo[key] = _roots_meeting(root_required, root_forbidden)
    return memo[key] if request.roots is None else memo[key] & request.roots


def _answered(request, generated, capped, budget):
    """The candidates answered: as many as the cap (when ``capped``) and the limit allow, or
    when order is randomised all within the cap, shuffled, then limited."""
    cap = _bound(settings.PLACEMENT_MAX_ALLOCATION_CANDIDATES) if capped else None
    randomize = settings.PLACEMENT_RANDOMIZE_ALLOCATION_CANDIDATES
    bounds = [n for n in (cap, None if randomize else request.limit) if n is not None]
    found = _collect_within_budget(generated, min(bounds) if bounds else None, budget)
    if randomize:
        random.shuffle(found)
        if request.limit is not None:
            found = found[: request.limit]
    return found


def _free_units(rows):
    """``{inventory: free units}`` of selection rows read whole (SELECTION_COLUMNS)."""
    total, reserved, ratio, used = SELECTED_TOTAL, SELECTED_RESERVED, SELECTED_RATIO, SELECTED_USED
    # usable_units inlined: thousands of rows.
    return {
        inventory: int((row[total] - row[reserved]) * row[ratio]) - row[used]
        for inventory, row in rows.items()
    }


def find_candidates_in_order(
    requests: Sequence[CandidateRequest], *, capped: bool = True, alone_apart: bool = False
) -> CandidatesById:
    """The candidates of several requests tried in order (a flavor's variants, e.g. its page
    sizes largest first), as one :class:`CandidatesById`: the first request's, then the
    second's... so each host lists the candidates of an earlier request before those of a
    later one and the scheduler, taking a host's first fitting candidate, falls back to a
    later request only where no earlier one fits (any more). What the requests share is read
    once (names, sharing anchors, each distinct group's selection): a further request costs a
    query per group of its own. ``alone_apart``: see :func:`find_candidates` (one request
    only: a later request's candidates of a tree come after an earlier one's)."""
    if len(requests) == 1:
        return find_candidates(requests[0], capped=capped, alone_apart=alone_apart)
    answer = CandidatesById()
    if not requests:
        return answer
    names, anchors, _last = _names_and_anchors(
        [group for request in requests for group in request.groups.values()],
        set().union(*(_root_traits(request) for request in requests)),
    )
    shared = _Shared(names=names, anchors=anchors)
    members = {}
    for request in requests:
        # A limited request reads windows of roots on its own: cheaper than a whole read.
        found = find_candidates(request, capped=capped, shared=None if request.limit else shared)
        answer.add_later(found)
        if found.members is not None:
            members.update((member[MEMBER_ID], member) for member in found.members)
    if members:
        answer.members = [members[p] for p in sorted(members)]
    return answer


def candidates_for_request(request: CandidateRequest) -> AllocationCandidates:
    """The allocation candidates and provider summaries answering ``request``, as
    ``GET /allocation_candidates`` gives them (see :class:`AllocationCandidates`).

    Raises UnknownResourceClass / UnknownTrait for names that do not exist.
    """
    found = _find(request, alone_as_id=True)
    if not found.candidates:
        return AllocationCandidates(requested_classes=found.requested_classes)
    summaries, uuids = _summaries(found.roots(), found.members)
    if found.tree_blind:
        used = {uuids[c] for c in found.candidates if type(c) is int}
        used.update(
            uuids[p] for c in found.candidates if type(c) is not int for p in _allocating(c)
        )
        summaries = [summary for summary in summaries if summary[SUMMARY_UUID] in used]
    return AllocationCandidates(
        candidates=found.candidates,
        uuids=uuids,
        class_names=found.class_names,
        provider_summaries=summaries,
        requested_classes=found.requested_classes,
        alone_amounts=found.alone_amounts,
        alone_suffixes=tuple(sorted(s for s, group in request.groups.items() if group.resources)),
        slots=found.slots,
    )


# What a combination of a tree of _Assembler._hosted_alike is (see _sharing_patterns).
_PATTERN_ALONE = "alone"  # its host in every slot: answered as the host's id
_PATTERN_HOST_LED = "host-led"  # its host first, sharing providers elsewhere: a tuple
_PATTERN_SHARED_LED = "shared-led"  # a sharing provider first (may repeat): built


def _sharing_patterns(sharing):
    """The combinations of a tree whose one provider (None here) is each slot's own option
    and ``sharing`` (per slot, a tuple) its sharing options, in the order of the product of
    the options (the tree's own first), each with its kind (``_PATTERN_*``)."""
    patterns = []
    for pattern in itertools.product(*[(None, *options) for options in sharing]):
        if pattern[0] is not None:
            kind = _PATTERN_SHARED_LED
        elif pattern.count(None) == len(pattern):
            kind = _PATTERN_ALONE
        else:
            kind = _PATTERN_HOST_LED
        patterns.append((pattern, kind))
    return patterns


def _allocating(candidate):
    """The providers a candidate (not an id) allocates from (a tuple's: all of them)."""
    if type(candidate) is tuple:
        return candidate
    return [provider_id for (provider_id, _class_id), _amount in candidate[0]]


def _alone_amounts(resolved):
    """What a candidate of one provider giving every slot takes (see
    :data:`AnsweredCandidate` and :attr:`CandidatesById.alone`): ``((class id, amount), ...)``
    of every group, in class order, as its allocations list them."""
    return tuple(sorted(pair for rg in resolved.values() for pair in rg.resources.items()))


def _any_tree():
    """Whether any provider has a parent (Placement's ``has_trees``)."""
    return ResourceProvider.objects.filter(parent__isnull=False).exists()


def _one_provider_per_tree(providers, root_of):
    """A candidate a client before 1.29 may see: no two of its ``providers`` (a set) share
    a tree."""
    return len(providers) == len({root_of[p] for p in providers})


def _distinct(picked, indexes):
    """The providers ``picked`` at ``indexes``, each once, in that order."""
    return list(dict.fromkeys([picked[i] for i in indexes]))


_NOTHING_ADDED: tuple = ()  # what a slot of a ``distinct`` request adds to the usage


def _drop_any(picked, _kept, _usage, _granular_used):
    """:func:`_drop` when any choice may be taken (nothing kept)."""
    picked.pop()


def _drop(picked, kept, usage, granular_used):
    """Undo :meth:`_Assembler._take` for the last provider picked."""
    provider_id = picked.pop()
    added, isolated = kept.pop()
    if isolated:
        granular_used.discard(provider_id)
    _give_back(usage, added)


def _give_back(usage, added):
    """Undo :meth:`_Assembler._add_if_room`: restore each inventory's earlier amount (or
    remove it)."""
    for inventory, before in reversed(added):
        if before is None:
            del usage[inventory]
        else:
            usage[inventory] = before
