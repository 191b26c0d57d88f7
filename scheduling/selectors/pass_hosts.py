"""One scheduling pass's view of its hosts' trees: the hosts of the engine's answer, each
with what filters and weighers read of it.

A pass over a thousand hosts reads each kind of fact once for all of them, and only when a
plugin (or the scheduler) first asks for it: usage and capacity per class (every weigher
asks), the tree's providers and traits, the compute reports, the candidates rendered with
uuids (the claim asks for one host's, the answer for a few alternates'). Aggregates and the
enabled/stale marks, which the built-in filters read, are read up front: two small queries.
"""

from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

from django.conf import settings

from providers.capacity import usable_units
from providers.models import ComputeNode
from providers.selectors import compute_nodes

from .. import host_limits, queries
from ..candidates import (
    SELECTED_CLASS,
    SELECTED_PROVIDER,
    SELECTED_RATIO,
    SELECTED_RESERVED,
    SELECTED_ROOT,
    SELECTED_TOTAL,
    SELECTED_USED,
    Candidate,
    CandidatesById,
    trait_lists,
)
from ..extra_specs import DEVICE_CLASSES
from ..models import AggregateMetadata
from ..plugins import HostState

MEMPAGE_PREFIX = "CUSTOM_MEMPAGE_"  # CUSTOM_MEMPAGE_<KiB>KB: a cell's huge pages

# The engine's answer by id: scheduling.candidates.CandidatesById, its Candidate.
Slot = tuple[int, int]  # (provider id, class id)
Rendered = tuple[dict[str, dict[str, int]], dict[str, list[str]]]  # as a client sees it
# {root id: {class: [capacity, used]}}: the trees' usage and capacity summed.
Totals = dict[int, dict[str, list[int]]]
# (root id, provider id, class name, total, reserved, allocation ratio, used): the rows of
# queries.tree_inventories_with_usage.
TreeRow = tuple[int, int, str, int, int, float, int]
# (is the root, class name, total, reserved, allocation ratio): host_limits.limits_of's rows.
LimitRow = tuple[bool, str, int, int, float]
CellFacts = Callable[[int, str], tuple[int, int, int]]  # (total, capacity, used) of a slot


def hosts_of_pass(*, found: CandidatesById) -> list[HostState]:
    """``[HostState]`` (by name) for the hosts of the engine's answer (a
    :class:`~scheduling.candidates.CandidatesById`), each with the candidates that land on it.

    A candidate lands on the tree of its providers that are not sharing providers (the one
    tree the engine built it for); a candidate of sharing providers alone on the first tree
    they belong to.
    """
    by_host: dict[int, list[Candidate]] = {}
    root_of, sharing = found.root_of, found.sharing
    for candidate in found.candidates:
        # candidate_root inlined (a call per candidate shows over 100,000 hosts)
        for (provider_id, _c), _a in candidate.allocations:
            if provider_id not in sharing:
                root_id = root_of[provider_id]
                break
        else:
            root_id = candidate_root(found=found, candidate=candidate)
        by_host.setdefault(root_id, []).append(candidate)
    for root_id in found.alone:  # their one candidate is built when asked (build_alone)
        by_host[root_id] = []
    if not by_host:
        return []
    tree = PassTreeFacts(found, by_host)
    hosts = _hosts(tree, by_host)
    _add_availability(hosts)
    return sorted(hosts.values(), key=lambda h: h.name)


def candidate_root(*, found: CandidatesById, candidate: Candidate) -> int:
    """The root id of the host a candidate lands on (see :func:`hosts_of_pass`)."""
    allocations = candidate.allocations
    root_of, sharing = found.root_of, found.sharing
    # Every provider but the sharing ones is of the one tree the candidate was built for.
    for (provider_id, _c), _a in allocations:
        if provider_id not in sharing:
            return root_of[provider_id]
    return min(root_of[p] for (p, _c), _a in allocations)


class PassTreeFacts:
    """What one scheduling pass knows of its hosts' trees, by root id; each part is read for
    every host at once on first use (see the module docstring)."""

    def __init__(self, found: CandidatesById, by_host: dict[int, list[Candidate]]) -> None:
        self.found = found
        self.by_host = by_host  # root id -> [candidates by id]
        self.uuids: dict[int, str] = {}  # provider id -> uuid, the roots' first
        self._totals: Totals | None = None
        self._raw: list[TreeRow] | None = None  # tree_inventories_with_usage's rows, once read
        # (rows from the engine's selection, rows read), merged into _raw
        self._parts: tuple[list[Sequence[Any]], list[TreeRow]] | None = None
        self._rows: list[tuple[int, str, int, int]] | None = None  # (provider, class, cap, used)
        self._inventories: dict[int, dict[str, dict[str, int]]] | None = None
        self._members: dict[int, list[tuple[int, str, int | None]]] | None = None
        self._traits: dict[int, list[str]] | None = None
        self._reports: dict[int, ComputeNode] | None = None
        # {root id: NUMA cells its report gives} of the hosts with one
        self._cells: dict[int, int] | None = None
        self._rendered: dict[int, list[Rendered]] = {}
        # The pass's own placements (real or simulated) consume from here: free units per
        # (provider id, class id) of every provider the candidates name, read on first use.
        self._free: dict[Slot, int] | None = None
        self.consumed = False
        # Providers whose free units a what-if fill lets go below zero (sharing providers,
        # checked once the fill is done).
        self.unbounded: frozenset[int] = frozenset()
        # {(provider id, class name): units} the pass consumed: applied to the totals and the
        # per-provider inventories when they are read after it.
        self._taken: defaultdict[tuple[int, str], int] = defaultdict(int)
        # [(allocations, times)] a flat fill took from the free units and has not recorded in
        # _taken yet (only while the totals are unread: _read_inventories records them first).
        self._pending: list[tuple[Sequence[tuple[Slot, int]], int]] = []
        # {root id: {class: limit}} of the hosts whose reservation is held for the whole host
        # (scheduling.host_limits), read on first use.
        self._limits: dict[int, dict[str, int]] | None = None
        self._limit_rows: dict[int, list[LimitRow]] | None = None
        # {(provider id, class): (total, capacity, used)}
        self._cell_facts: dict[tuple[int, str], tuple[int, int, int]] | None = None
        self._cell_pages: dict[int, list[str]] | None = None  # {provider: CUSTOM_MEMPAGE_*}
        self._device_roots: set[int] = set()
        self._numa_suffixes: tuple[str, ...] | None = None
        # The hosts whose one candidate the engine left unbuilt (CandidatesById.alone), their
        # lists empty in by_host until build_alone: fill_flat counts them without it.
        self.alone: list[int] = list(found.alone)
        # (root id, times) fill_flat took of those hosts' candidates, as _pending.
        self._pending_alone: list[tuple[int, int]] = []

    def build_alone(self) -> None:
        """Build the candidate of every host :attr:`alone` (for anything but
        :meth:`fill_flat`: each is then one of the host's candidates like the others)."""
        if self.alone:
            alone, self.alone = self.alone, []
            build = self.found.alone_candidate
            for root_id in alone:
                self.by_host[root_id] = [build(root_id)]

    # usage and capacity
    def totals(self, root_id: int) -> dict[str, list[int]]:
        """``{class: [capacity, used]}`` summed over the tree."""
        totals = self._totals
        if totals is None:
            totals = self._read_inventories()
        return totals.get(root_id, {})

    def _read_inventories(self) -> Totals:
        """Sum each tree's classes (what every pass's weighers read); keep the rows for the
        rest (:meth:`inventories`, the limits, the NUMA cells' facts), derived on first use.

        A tree whose inventory rows are all among the engine's selection rows (a flat host
        asked for every class it has: the common case) is summed from those rows, read with
        the candidates (:meth:`_sum_selected`); only how many rows each tree has is read for
        it. The other trees' rows are read."""
        self._flush_taken()
        totals: Totals = defaultdict(dict)
        if self.found.rows is None:
            self._raw = queries.tree_inventories_with_usage(self.by_host)
            self._parts = None
            _add_rows(totals, self._raw)
        else:
            complete, rest = self._trees_by_selection(self.found.rows)
            self._sum_selected(totals, complete)
            read = queries.tree_inventories_with_usage(rest) if rest else []
            _add_rows(totals, read)
            self._raw = None
            self._parts = ([row for rows in complete.values() for row in rows], read)
        self._totals = totals
        self._rows = self._limit_rows = self._cell_facts = None
        for (provider_id, name), amount in self._taken.items():
            pair = totals.get(self.found.root_of[provider_id], {}).get(name)
            if pair is not None:
                pair[1] += amount
        return totals

    def _trees_by_selection(
        self, selected: Mapping[Slot, Sequence[Any]]
    ) -> tuple[dict[int, list[Sequence[Any]]], list[int]]:
        """``({root id: its selection rows}, [root ids])``: the trees whose inventory rows
        the engine's selection rows all are (in the pass's host order), and the others.

        A tree's selection rows are inventory rows of it, one per provider and class: as many
        as the tree has are all of them."""
        by_host = self.by_host
        counts = queries.tree_inventory_counts(by_host)
        known = defaultdict(list)  # root id -> its selection rows
        for row in selected.values():
            if row[SELECTED_ROOT] in by_host:
                known[row[SELECTED_ROOT]].append(row)
        get_count = counts.get
        complete = {
            r: known.get(r, []) for r in by_host if len(known.get(r, ())) == get_count(r, 0)
        }
        rest = [r for r in by_host if len(known.get(r, ())) != get_count(r, 0)]
        return complete, rest

    def _sum_selected(self, totals: Totals, trees: Mapping[int, Iterable[Sequence[Any]]]) -> None:
        """Add to ``totals`` the trees' classes summed from their selection rows."""
        class_names = self.found.class_names
        class_, total, reserved = SELECTED_CLASS, SELECTED_TOTAL, SELECTED_RESERVED
        ratio, used = SELECTED_RATIO, SELECTED_USED
        for root_id, rows in trees.items():
            tree = totals[root_id]  # {} for a tree without inventories, as read
            for row in rows:
                name = class_names[row[class_]]
                capacity = int((row[total] - row[reserved]) * row[ratio])  # usable_units, inlined
                pair = tree.get(name)
                if pair is None:
                    tree[name] = [capacity, row[used]]
                else:
                    pair[0] += capacity
                    pair[1] += row[used]

    def _raw_rows(self) -> list[TreeRow]:
        """The rows of :func:`~scheduling.queries.tree_inventories_with_usage` for every
        tree of the pass, in provider and class id order: those read, and those the engine's
        selection gave (see :meth:`_read_inventories`), merged."""
        if self._raw is None:
            assert self._parts is not None  # _read_inventories keeps one of the two
            selected, read = self._parts
            class_names = self.found.class_names
            provider, class_ = SELECTED_PROVIDER, SELECTED_CLASS
            # No provider is in both parts (they are of different trees), and each is in
            # provider and class id order once the selection's is sorted: a stable sort by
            # provider merges them.
            merged: list[TreeRow] = [
                (
                    row[SELECTED_ROOT],
                    row[provider],
                    class_names[row[class_]],
                    row[SELECTED_TOTAL],
                    row[SELECTED_RESERVED],
                    row[SELECTED_RATIO],
                    row[SELECTED_USED],
                )
                for row in sorted(selected, key=lambda row: (row[provider], row[class_]))
            ]
            merged.extend(read)
            merged.sort(key=lambda row: row[1])
            self._raw = merged
        return self._raw

    def _read_rows(self) -> None:
        """The per-provider facts of the rows :meth:`_read_inventories` read (read first
        when it has not): ``_rows``, ``_limit_rows``, ``_cell_facts``, ``_cell_pages`` and
        ``_device_roots``."""
        if self._totals is None:
            self._read_inventories()
        if self._rows is not None:
            return
        rows = []
        limit_rows = defaultdict(list)
        totals_of = {}
        pages_of = defaultdict(list)
        device_roots = set()
        for root_id, provider_id, name, total, reserved, ratio, used in self._raw_rows():
            capacity = usable_units(total, reserved, ratio)
            rows.append((provider_id, name, capacity, used))
            limit_rows[root_id].append((provider_id == root_id, name, total, reserved, ratio))
            totals_of[(provider_id, name)] = (total, capacity, used)
            if name.startswith(MEMPAGE_PREFIX):
                pages_of[provider_id].append(name)
            elif name in DEVICE_CLASSES:
                device_roots.add(root_id)
        self._rows, self._limit_rows = rows, limit_rows
        self._cell_facts = totals_of
        self._cell_pages = pages_of
        self._device_roots = device_roots

    # the trees' providers
    def _tree_members(self) -> dict[int, list[tuple[int, str, int | None]]]:
        """``{root id: [(id, uuid, parent id)]}`` in id order."""
        if self._members is None:
            self._members = defaultdict(list)
            for provider_id, uuid, parent_id, root_id in queries.tree_members(self.by_host):
                self.uuids[provider_id] = uuid
                self._members[root_id].append((provider_id, uuid, parent_id))
        return self._members

    def providers(self, root_id: int) -> list[tuple[str, str | None]]:
        uuids = self.uuids
        members = self._tree_members()[root_id]
        return [(uuid, uuids[parent] if parent else None) for _id, uuid, parent in members]

    def inventories(self, root_id: int) -> dict[str, dict[str, dict[str, int]]]:
        if self._inventories is None:
            self._read_rows()
            assert self._rows is not None  # _read_rows read them
            self._inventories = defaultdict(dict)
            for provider_id, name, capacity, used in self._rows:
                taken = self._taken.get((provider_id, name), 0)
                self._inventories[provider_id][name] = {"capacity": capacity, "used": used + taken}
        return {
            uuid: self._inventories.get(provider_id, {})
            for provider_id, uuid, _parent in self._tree_members()[root_id]
        }

    def traits(self, root_id: int) -> dict[str, list[str]]:
        members = self._tree_members()
        if self._traits is None:
            self._traits = trait_lists([m[0] for tree in members.values() for m in tree])
        return {
            uuid: self._traits.get(provider_id, []) for provider_id, uuid, _p in members[root_id]
        }

    # the host's report
    def report(self, root_id: int) -> ComputeNode | None:
        if self._reports is None:
            self._reports = {
                node.provider.root_id: node
                for node in ComputeNode.objects.filter(
                    provider__root_id__in=list(self.by_host)
                ).select_related("provider")
            }
        return self._reports.get(root_id)

    def cells(self, root_id: int) -> int | None:
        """How many NUMA cells the host's compute report gives (None without a report):
        read for every host at once, on first use, without building the reports."""
        return self._cell_counts().get(root_id)

    def _cell_counts(self) -> dict[int, int]:
        """``{root id: NUMA cells}`` of the hosts with a compute report (see :meth:`cells`)."""
        if self._cells is None:
            if self._reports is not None:
                self._cells = {
                    root: len((node.numa_topology or {}).get("cells") or [])
                    for root, node in self._reports.items()
                }
            else:
                self._cells = queries.host_cells(self.by_host)
        return self._cells

    def _any_cells(self) -> bool:
        return any(self._cell_counts().values())

    # the hosts' limits (scheduling.host_limits)
    def limits(self, root_id: int) -> dict[str, int]:
        """``{class: limit}`` of the host (empty for most)."""
        return self._host_limits().get(root_id, {})

    def _host_limits(self) -> dict[int, dict[str, int]]:
        """``{root id: {class: limit}}`` of the hosts with limits. Read for every host at
        once, and only when a candidate takes something below a root (a NUMA cell's, a
        device's) and some host reports NUMA cells (no host without has a limit)."""
        if self._limits is None:
            below_root = _takes_below_root(self.by_host, self.found.root_of)
            self._limits = {}
            if below_root and self._any_cells():
                if self._limit_rows is None:
                    self._read_rows()
                assert self._limit_rows is not None  # _read_rows read them
                for root_id_, rows in self._limit_rows.items():
                    found = host_limits.limits_of(rows, bool(self.cells(root_id_)))
                    if found:
                        self._limits[root_id_] = found
        return self._limits

    def has_limits(self) -> bool:
        return bool(self._host_limits())

    def _asked(self, root_id: int, candidate: Candidate, times: int = 1) -> defaultdict[str, int]:
        """``{class: amount}`` the candidate takes from the host's own tree."""
        asked: defaultdict[str, int] = defaultdict(int)
        class_names, root_of = self.found.class_names, self.found.root_of
        for (provider_id, class_id), amount in candidate.allocations:
            if root_of.get(provider_id) == root_id:
                name, amount = host_limits.as_memory(class_names[class_id], amount * times)
                asked[name] += amount
        return asked

    def _used(self, root_id: int, names: Iterable[str]) -> dict[str, int]:
        used: defaultdict[str, int] = defaultdict(int)
        for name, (_capacity, amount) in self.totals(root_id).items():
            name, amount = host_limits.as_memory(name, amount)
            used[name] += amount
        return {name: used[name] for name in names}

    def limit_refusal(self, root_id: int, candidate: Candidate, times: int = 1) -> str | None:
        """Why the candidate would take the host past its limits (None: it would not)."""
        limits = self.limits(root_id)
        if not limits:
            return None
        return host_limits.refusal(
            limits, self._used(root_id, limits), self._asked(root_id, candidate, times)
        )

    def host_limit_refusal(self, root_id: int) -> str | None:
        """Why the host cannot take any candidate of its own that still fits its providers'
        free units, when its limits are what refuse it; None otherwise."""
        if not self.limits(root_id):
            return None
        why = None
        for candidate in self._fitting_units(root_id):
            why = self.limit_refusal(root_id, candidate)
            if why is None:
                return None
        return why

    # what the pass's placements consume
    def _fitting_units(self, root_id: int) -> list[Candidate]:
        found = self.by_host[root_id]
        if not self.consumed:
            return found
        free = self.free()
        unbounded = self.unbounded
        return [
            c
            for c in found
            if all(free[slot] >= amount or slot[0] in unbounded for slot, amount in c.allocations)
        ]

    def fitting(self, root_id: int) -> list[Candidate]:
        """The host's candidates (by id) that still fit once the pass's own placements are
        taken, in the engine's order (for a NUMA request, in the order the NUMA cells
        strategy prefers them): the engine's answer for the pass's current usage."""
        found = self._fitting_units(root_id)
        if self.limits(root_id):
            found = [c for c in found if self.limit_refusal(root_id, c) is None]
        return self._by_cells_strategy(root_id, found)

    # the NUMA cells strategy (spread or pack, as Nova's host cell order)
    def _numa_groups(self) -> tuple[str, ...]:
        """The request's NUMA group suffixes in order (``_NUMA0``, ``_NUMA1``...), or ()."""
        if self._numa_suffixes is None:
            # One comprehension over 100,000 hosts' first candidates, then the few suffixes.
            every = {
                suffix
                for candidates in self.by_host.values()
                for _allocations, mappings in candidates[:1]
                for suffix, _ps in mappings
            }
            suffixes = {s for s in every if s.startswith("_NUMA")}
            self._numa_suffixes = tuple(sorted(suffixes, key=lambda s: int(s[5:] or 0)))
        return self._numa_suffixes

    def _by_cells_strategy(self, root_id: int, candidates: list[Candidate]) -> list[Candidate]:
        suffixes = self._numa_groups()
        if not suffixes or len(candidates) < 2:
            return candidates
        rank = self._cell_ranks(root_id, candidates, suffixes)
        order = {s: i for i, s in enumerate(suffixes)}

        def key(candidate: Candidate) -> tuple[int, ...]:
            cells = sorted((order[s], ps[0]) for s, ps in candidate.mappings if s in order)
            return tuple(rank.get(p, len(rank)) for _i, p in cells)

        return sorted(candidates, key=key)

    def _cell_ranks(
        self, root_id: int, candidates: list[Candidate], suffixes: tuple[str, ...]
    ) -> dict[int, int]:
        """``{cell provider id: rank}``: Nova's order of the host cells (Nova 34's
        ``numa_fit_instance_to_host``) for ``PLACEMENT_NUMA_CELLS_STRATEGY``: with more cells
        than the request's NUMA nodes, ``spread`` puts the least used cells first (fewest
        used CPUs, shared or pinned as the request asks, then most free memory) and ``pack``
        the most used; otherwise the cells' own order. The first fitting permutation of that
        order is Nova's choice: the candidates are tried in the lexicographic order of their
        cells' ranks."""
        cells = sorted({p for c in candidates for s, ps in c.mappings if s in suffixes for p in ps})
        host_cells = self.cells(root_id)
        if host_cells is None:  # no report: the cells the candidates name
            host_cells = len(cells)
        if host_cells <= len(suffixes):
            return {p: i for i, p in enumerate(cells)}
        if self._cell_facts is None:
            self._read_rows()
        cell_facts, cell_pages = self._cell_facts, self._cell_pages
        assert cell_facts is not None and cell_pages is not None  # _read_rows read them
        pack = settings.PLACEMENT_NUMA_CELLS_STRATEGY == "pack"
        pinned = "PCPU" in self.found.requested_classes

        def facts(provider_id: int, name: str) -> tuple[int, int, int]:
            total, capacity, used = cell_facts.get((provider_id, name), (0, 0, 0))
            return total, capacity, used + self._taken.get((provider_id, name), 0)

        def avail_memory(p: int) -> int:
            """The cell's free memory as Nova sees it: small pages and huge pages alike."""
            total, _capacity, used = facts(p, "MEMORY_MB")
            free = total - used
            for name in cell_pages.get(p, ()):
                pages_total, _capacity, pages_used = facts(p, name)
                free += (pages_total - pages_used) * int(name[len(MEMPAGE_PREFIX) : -2]) // 1024
            return free

        ordered = sorted(cells, key=avail_memory, reverse=not pack)
        if pinned:
            free_pcpus = {p: facts(p, "PCPU")[1] - facts(p, "PCPU")[2] for p in cells}
            ordered = sorted(ordered, key=lambda p: free_pcpus[p], reverse=not pack)
        else:
            cpu_usage = {p: facts(p, "VCPU")[2] for p in cells}
            ordered = sorted(ordered, key=lambda p: cpu_usage[p], reverse=pack)
        devices = self._free_devices_by_cell(root_id, cells, facts)
        if devices:
            # Nova's last sort, whatever the strategy: the cells with the most free devices
            # first when the request asks a device, last when it asks none.
            asks = bool(DEVICE_CLASSES & set(self.found.requested_classes))
            ordered = sorted(ordered, key=lambda p: devices.get(p, 0), reverse=asks)
        return {p: i for i, p in enumerate(ordered)}

    def _free_devices_by_cell(
        self, root_id: int, cells: list[int], facts: CellFacts
    ) -> dict[int, int]:
        """``{cell provider id: free device units}`` (every device class, as Nova counts the
        free devices of its PCI pools per NUMA node) for the devices hanging under ``cells``;
        {} when the host has none (then the providers' parents are not read)."""
        if root_id not in self._device_roots:
            return {}
        cell_set = set(cells)
        cell_facts = self._cell_facts or {}  # read with _device_roots
        free: defaultdict[int, int] = defaultdict(int)
        for provider_id, _uuid, parent_id in self._tree_members()[root_id]:
            if parent_id is None or parent_id not in cell_set:
                continue
            for name in DEVICE_CLASSES:
                if (provider_id, name) in cell_facts:
                    _total, capacity, used = facts(provider_id, name)
                    free[parent_id] += max(capacity - used, 0)
        return free

    def first_fitting(self, root_id: int) -> Candidate | None:
        if self._numa_groups() and len(self.by_host[root_id]) > 1:
            found = self.fitting(root_id)
            return found[0] if found else None
        found = self.by_host[root_id]
        limited = bool(self.limits(root_id))
        if not self.consumed and not limited:
            return found[0] if found else None
        free = self.free() if self.consumed else None
        unbounded = self.unbounded
        for candidate in found:
            if free is not None and not all(
                free[slot] >= amount or slot[0] in unbounded
                for slot, amount in candidate.allocations
            ):
                continue
            if limited and self.limit_refusal(root_id, candidate) is not None:
                continue
            return candidate
        return None

    def _fixed_cell_order(self, root_id: int) -> bool:
        """Whether the cells strategy orders the host's candidates the same whatever the
        pass takes (no more cells than the request's NUMA nodes: the cells' own order, see
        :meth:`_cell_ranks`). Then, as without NUMA groups, a candidate that stops fitting
        never fits again in the pass, nor do those before it."""
        suffixes = self._numa_groups()
        candidates = self.by_host[root_id]
        if not suffixes or len(candidates) < 2:
            return True
        cells = self.cells(root_id)
        if cells is None:  # no report: the cells the candidates name
            cells = len(
                {p for c in candidates for s, ps in c.mappings if s in suffixes for p in ps}
            )
        return cells <= len(suffixes)

    def fill_alone(self, root_id: int) -> int | None:
        """Consume the host's first fitting candidate until none fits, as repeating
        :meth:`first_fitting`, :meth:`times_fitting` and :meth:`consume` would, and return
        how many instances that placed; None when a candidate is bounded by nothing but the
        unbounded providers (:meth:`times_fitting` None: nothing consumed then).

        Free units only go down and usage only up as the pass consumes, so a candidate that
        no longer fits never fits again: with an order that does not change as the host
        fills (any order but the cells strategy's over more cells than NUMA nodes, filled
        one instance at a time), each candidate is visited once, in order, and taken as many
        times as it fits in one step."""
        if not self._fixed_cell_order(root_id):
            return self._fill_one_by_one(root_id)
        candidates = self.by_host[root_id]
        if self._numa_groups() and len(candidates) > 1:
            candidates = self._by_cells_strategy(root_id, candidates)
        count = 0
        for candidate in candidates:
            times = self._times_fitting_now(root_id, candidate)
            if times is None:
                return None
            if times:
                self.consume(candidate, times=times)
                count += times
        return count

    def flat(self) -> bool:
        """Whether :meth:`fill_flat` may fill this pass's hosts: no NUMA group (each host's
        candidates keep the engine's order) and no host limit (only free units bound)."""
        return not self._numa_groups() and not self.has_limits()

    def fill_flat(self, root_ids: Collection[int]) -> dict[int, int] | None:
        """:meth:`fill_alone` of each host of ``root_ids`` in turn, for a :meth:`flat` pass:
        ``{root id: instances}`` of those taking some; None as soon as one would be None.

        The same steps as fill_alone (each candidate in order, taken as many times as every
        bounded slot's free units allow) in one loop over 100,000 hosts, without a call per
        candidate and host but one; the usage the hosts show is recorded when first read
        (:meth:`_flush_taken`), not slot by slot here. The hosts :attr:`alone` (whose one
        candidate is unbuilt) are counted first, in a loop of their own: they share no
        provider with any other host."""
        free = self.free()
        unbounded = self.unbounded
        by_host = self.by_host
        pending = self._pending
        alone = set(self.alone)
        placed: dict[int, int] = {}
        try:
            if alone:
                counted = _take_alone(
                    free, [r for r in root_ids if r in alone], self.found.alone_amounts
                )
                if counted is None:
                    return None
                self._pending_alone.extend(counted.items())
                placed.update(counted)
                root_ids = [r for r in root_ids if r not in alone]
            for root_id in root_ids:
                count = 0
                for candidate in by_host[root_id]:
                    times = _take_fitting(free, unbounded, candidate.allocations)
                    if times is None:
                        return None
                    if times:
                        pending.append((candidate.allocations, times))
                        count += times
                if count:
                    placed[root_id] = count
        finally:
            if pending or self._pending_alone:
                self.consumed = True
                self._rendered.clear()
                if self._totals is not None:  # the usage is read already: keep it current
                    self._flush_taken()
        return placed

    def _flush_taken(self) -> None:
        """Record the usage of what :meth:`fill_flat` took (before the totals are read, or
        as it ends when they are)."""
        if self._pending:
            pending, self._pending = self._pending, []
            self._record_taken(
                (slot, each * times) for allocations, times in pending for slot, each in allocations
            )
        if self._pending_alone:
            taken, self._pending_alone = self._pending_alone, []
            amounts = self.found.alone_amounts
            self._record_taken(
                ((root_id, class_id), each * times)
                for root_id, times in taken
                for class_id, each in amounts
            )

    def _fill_one_by_one(self, root_id: int) -> int | None:
        count = 0
        candidate = self.first_fitting(root_id)
        while candidate is not None:
            if self.times_fitting(candidate) is None:
                return None
            self.consume(candidate)
            count += 1
            candidate = self.first_fitting(root_id)
        return count

    def _times_fitting_now(self, root_id: int, candidate: Candidate) -> int | None:
        """How many times the host's candidate fits now: 0 when it does not (as
        :meth:`first_fitting` judges), else as :meth:`times_fitting` (None included)."""
        times = _times_free(self.free(), self.unbounded, candidate.allocations)
        if times == 0:
            return 0
        limits = self.limits(root_id)
        if limits:
            if self.limit_refusal(root_id, candidate) is not None:
                return 0
            asked = self._asked(root_id, candidate)
            used = self._used(root_id, limits)
            for name, limit in limits.items():
                if asked[name] and (times is None or (limit - used[name]) // asked[name] < times):
                    times = (limit - used[name]) // asked[name]
        return times

    def free(self) -> dict[Slot, int]:
        """``{(provider id, class id): free units}`` of every provider a candidate names."""
        if self._free is None and self.found.free is not None:
            self._free = dict(self.found.free)  # the engine's rows, read with the candidates
        if self._free is None:
            ids_of = {name: class_id for class_id, name in self.found.class_names.items()}
            providers = {p for c in self.found.candidates for (p, _c), _a in c.allocations}
            free: dict[Slot, int] = {}
            self._read_rows()
            assert self._rows is not None  # _read_rows read them
            in_trees = set()
            for provider_id, name, capacity, used in self._rows:
                in_trees.add(provider_id)
                if name in ids_of:
                    free[(provider_id, ids_of[name])] = capacity - used
            outside = providers - in_trees  # sharing providers of trees that are no host
            if outside:
                for (
                    provider_id,
                    name,
                    total,
                    reserved,
                    ratio,
                    used,
                ) in queries.inventories_with_usage(outside):
                    if name in ids_of:
                        free[(provider_id, ids_of[name])] = (
                            usable_units(total, reserved, ratio) - used
                        )
            self._free = free
        return self._free

    def times_fitting(self, candidate: Candidate) -> int | None:
        """How many times the candidate fits the free units now (the unbounded providers do
        not limit it); None when nothing but unbounded providers would."""
        free = self.free()
        unbounded = self.unbounded
        limits = [
            free[slot] // amount
            for slot, amount in candidate.allocations
            if amount > 0 and slot[0] not in unbounded
        ]
        if candidate.allocations:
            root_id = candidate_root(found=self.found, candidate=candidate)
            host = self.limits(root_id)
            if host:
                asked = self._asked(root_id, candidate)
                used = self._used(root_id, host)
                limits += [
                    (limit - used[name]) // asked[name]
                    for name, limit in host.items()
                    if asked[name]
                ]
        if not limits:
            return None
        if self._numa_groups():
            return 1  # the cells strategy may choose other cells for the next instance
        return max(1, min(limits))

    def consume(self, candidate: Candidate, times: int = 1) -> None:
        """Take one candidate's amounts (``[((provider id, class id), amount)]``), ``times``
        over, in memory: the free units, and the usage the trees' hosts show their filters and
        weighers."""
        free = self.free()
        for slot, each in candidate.allocations:
            free[slot] -= each * times
        self._record_taken((slot, each * times) for slot, each in candidate.allocations)

    def _record_taken(self, taken: Iterable[tuple[Slot, int]]) -> None:
        """The usage side of :meth:`consume` for amounts already taken from the free units:
        what the pass took per provider and class, and the totals and inventories read."""
        class_names, root_of = self.found.class_names, self.found.root_of
        for (provider_id, class_id), amount in taken:
            name = class_names[class_id]
            self._taken[(provider_id, name)] += amount
            if self._totals is None:
                continue
            pair = self._totals.get(root_of[provider_id], {}).get(name)
            if pair is not None:
                pair[1] += amount
            if self._inventories is not None:
                row = self._inventories.get(provider_id, {}).get(name)
                if row is not None:
                    row["used"] += amount
        self.consumed = True
        self._rendered.clear()

    # the candidates, as a client sees them
    def candidates(self, root_id: int) -> list[Rendered]:
        """The host's candidates as a client sees them (those that still fit in this pass);
        one naming a provider deleted since the engine read it (a host sync changed the
        tree's shape) is stale and left out."""
        if root_id not in self._rendered:
            self.build_alone()
            found = self.fitting(root_id)
            self._know_uuids(p for (p, _c), _a in _allocations(found))
            self._rendered[root_id] = [
                rendered for rendered in map(self.render, found) if rendered is not None
            ]
        return self._rendered[root_id]

    def render(self, candidate: Candidate) -> Rendered | None:
        """One candidate as a client sees it, or None when it names a provider deleted since
        the engine read it."""
        self._know_uuids(p for (p, _c), _a in candidate.allocations)
        uuids = self.uuids
        if not all(p in uuids for (p, _c), _a in candidate.allocations) or not all(
            p in uuids for _s, ps in candidate.mappings for p in ps
        ):
            return None
        return self.found.render(candidate, uuids)

    def _know_uuids(self, provider_ids: Iterable[int]) -> None:
        """Read the uuids not known yet (children and sharing providers) in one query."""
        missing = set(provider_ids) - self.uuids.keys()
        if missing:
            self.uuids.update((pk, uuid) for pk, uuid, _name in queries.provider_names(missing))


def _times_free(
    free: dict[Slot, int], unbounded: frozenset[int], allocations: Sequence[tuple[Slot, int]]
) -> int | None:
    """How many times ``allocations`` fit in ``free``: 0 when a bounded slot is short, None
    when no slot bounds them (slots of ``unbounded`` classes are not counted)."""
    times = None
    for slot, amount in allocations:
        if slot[0] in unbounded:
            continue
        have = free[slot]
        if have < amount:
            return 0
        if amount > 0 and (times is None or have // amount < times):
            times = have // amount
    return times


def _take_fitting(
    free: dict[Slot, int], unbounded: frozenset[int], allocations: Sequence[tuple[Slot, int]]
) -> int | None:
    """Take ``allocations`` from ``free`` as many times as they fit and return how many
    (:meth:`PassTreeFacts._times_fitting_now` of a host without limits, then the free side of
    :meth:`PassTreeFacts.consume`): 0 when a bounded slot is short, None (nothing taken) when
    no slot bounds it. Plain loops: a list of the slots' free units read once cost more than
    reading them again, then in cache."""
    times = _times_free(free, unbounded, allocations)
    if times:
        for slot, amount in allocations:
            free[slot] -= amount * times
    return times


def _take_alone(
    free: dict[Slot, int], root_ids: Iterable[int], amounts: Sequence[tuple[int, int]]
) -> dict[int, int] | None:
    """:func:`_take_fitting` of each host's one candidate, taking ``amounts`` (``((class id,
    amount), ...)``) from the host's root alone (CandidatesById.alone), without building
    it: ``{root id: times}`` of those taking some, None when one is bounded by nothing."""
    placed = {}
    for root_id in root_ids:
        times = None
        for class_id, amount in amounts:
            have = free[(root_id, class_id)]
            if have < amount:
                times = 0
                break
            if amount > 0 and (times is None or have // amount < times):
                times = have // amount
        if times is None:
            return None
        if times:
            for class_id, amount in amounts:
                free[(root_id, class_id)] -= amount * times
            placed[root_id] = times
    return placed


def _add_rows(totals: Totals, rows: Iterable[TreeRow]) -> None:
    """Add :func:`~scheduling.queries.tree_inventories_with_usage` rows to ``totals``
    (``{root id: {class: [capacity, used]}}``)."""
    get_tree = totals.get
    for root_id, _provider_id, name, total, reserved, ratio, used in rows:
        capacity = int((total - reserved) * ratio)  # usable_units, inlined: a hot loop
        tree = get_tree(root_id)
        if tree is None:
            totals[root_id] = {name: [capacity, used]}
            continue
        pair = tree.get(name)
        if pair is None:
            tree[name] = [capacity, used]
        else:
            pair[0] += capacity
            pair[1] += used


def _takes_below_root(
    by_host: Mapping[int, Iterable[Candidate]], root_of: Mapping[int, int]
) -> bool:
    """Whether a candidate takes something from a provider that is not its tree's root."""
    if all(provider_id == root_id for provider_id, root_id in root_of.items()):
        return False  # every provider the engine selected is a root: a flat cloud
    for candidates in by_host.values():
        for allocations, _mappings in candidates:
            for (provider_id, _c), _a in allocations:
                if provider_id != root_of.get(provider_id, provider_id):
                    return True
    return False


def _allocations(candidates: Iterable[Candidate]) -> list[tuple[Slot, int]]:
    return [entry for allocations, _mappings in candidates for entry in allocations]


def _hosts(tree: PassTreeFacts, root_ids: Iterable[int]) -> dict[int, HostState]:
    """``{root id: HostState}`` with names, aggregates and their metadata: one query."""
    hosts: dict[int, HostState] = {}
    metadata: defaultdict[int, dict[int, dict[str, Any]]] = defaultdict(dict)
    for pk, uuid, name, aggregate_id, aggregate_uuid, meta in queries.hosts_with_aggregates(
        root_ids
    ):
        host = hosts.get(pk)
        if host is None:
            tree.uuids[pk] = uuid
            host = hosts[pk] = HostState(uuid=uuid, name=name, id=pk, tree=tree)
        if aggregate_id is not None:
            host.aggregates |= {aggregate_uuid}
        if meta is not None and aggregate_id is not None:  # metadata is an aggregate's
            metadata[pk][aggregate_id] = meta
    for pk, found in metadata.items():
        hosts[pk].aggregate_metadata = [found[i] for i in sorted(found)]
    return hosts


def availability_zone_of(*, provider_id: int) -> str:
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


def _add_availability(hosts: dict[int, HostState]) -> None:
    """Disabled and stale hosts as the host-sync selector says (hosts made through the
    Placement API alone have no report and count as enabled). Only the unavailable hosts are
    read here: they are few, the available ones need nothing."""
    unavailable = set(compute_nodes.unavailable_root_ids()) & set(hosts)
    if unavailable:
        for root_id, state in compute_nodes.host_availability_by_root(
            provider_ids=unavailable
        ).items():
            hosts[root_id].enabled = state["enabled"]
            hosts[root_id].disabled_reason = state["disabled_reason"]
            hosts[root_id].forced_down = state["forced_down"]
            hosts[root_id].stale = state["stale"]
