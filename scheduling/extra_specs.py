"""Flavor extra specs in Nova's syntax, and the one translator from a flavor to the request the
allocation candidates engine takes.

Accepted keys (values are strings or integers):

* ``resources:CLASS=N`` sets the unsuffixed group's amount of a class (``0`` drops one of the
  standard amounts the flavor's vcpus, ram and disk give); ``resourcesN:CLASS=N`` puts it in
  the granular group ``N``;
* ``trait:NAME=required|forbidden`` and ``traitN:NAME=...``;
* ``member_of`` / ``member_ofN``: an aggregate uuid, ``in:uuid1,uuid2`` (any of them) or
  ``!uuid`` / ``!in:...`` (none of them), as Placement's query;
* ``group_policy=none|isolate``;
* ``hw:numa_nodes=N`` splits the flavor's CPUs and memory into N granular groups (``_NUMA0``...),
  one per NUMA node provider (each requires ``HW_NUMA_ROOT``, 1 node included: a host without
  NUMA cells cannot take them), isolated unless ``group_policy`` says otherwise: evenly, or as
  ``hw:numa_cpus.I`` (a CPU map) and ``hw:numa_mem.I`` (MB) give each node when both are given
  for every node (their sums must be the flavor's, as Nova requires);
* ``hw:cpu_policy=dedicated`` asks for ``PCPU`` instead of ``VCPU``; ``mixed`` asks for as many
  ``PCPU`` as ``hw:cpu_dedicated_mask`` (or else ``hw:cpu_realtime_mask``) names and the rest as
  ``VCPU``; with dedicated CPUs ``hw:cpu_thread_policy=isolate`` forbids and ``require``
  requires ``HW_CPU_HYPERTHREADING`` (as Nova's scheduler translates them);
* ``hw:pci_numa_affinity_policy=required`` with ``hw:numa_nodes``: the flavor's device
  classes (:data:`DEVICE_CLASSES` of the unsuffixed group) move to a granular group
  ``_PCI`` asked in the same subtree as the first NUMA group (``same_subtree=_NUMA0,_PCI``),
  so the device hangs under the NUMA cell that gives the CPUs and memory, as Nova's
  ``required`` policy. ``preferred``: two request variants (:func:`_affinity_variants`),
  that one first, then ``_PCI`` anywhere in the host's tree, outermost in the product with
  the page-size variants (Nova picks the cell, then its page size); with the NUMA cells
  strategy ordering the cells with the most free devices first (as Nova sorts its host
  cells when the instance asks a device, last when it asks none), a host places the
  instance on a cell with an affine free device when one fits, else takes a device of
  another cell. ``legacy``, and no policy (Nova's default for an instance with a NUMA
  topology): that one first, then ``_PCI`` requiring ``CUSTOM_PCI_NO_NUMA_AFFINITY``
  (:data:`~providers.plugins.builtin.PCI_NO_NUMA_TRAIT`, which the ``pci`` plugin puts on
  a device that reports no NUMA node, under the host's root: no query term says "under no
  cell") anywhere, as Nova's ``legacy`` takes a device with a NUMA node only on the
  instance's cells and one without anywhere. Without ``hw:numa_nodes`` the instance has no
  NUMA topology and, as in Nova, no policy has an effect. ``socket`` asks what
  ``required`` asks: the reports carry no socket of a cell, and a device of the instance's
  own cell is the one known to be on its socket (Nova, without socket information,
  refuses every device; with it, also takes a device of another cell of that socket);
* ``hw:mem_page_size`` (a page size alone gives the instance one NUMA node): a size makes each
  NUMA group ask its memory in pages of that size (``CUSTOM_MEMPAGE_<KiB>KB``, its cell's
  page pool; memory that is not a whole number of pages is a 400); ``small`` (or 4 KiB) asks
  the cells' small pages (MEMORY_MB); ``large`` is Nova's choice per cell of the largest huge
  page size that holds the node's memory, ``any`` the same with small pages last: one request
  variant per combination of sizes (:func:`page_variants`), tried in that order on each host;
* ``aggregate_instance_extra_specs:KEY=VALUE`` is not sent to the engine: the aggregate
  extra-spec filter matches it against aggregate metadata.

Every other key Nova's API accepts (``quota:*``, ``os:*``, ``hw_rng:*``,
``pci_passthrough:alias``...) is checked by Nova's value rule (:mod:`scheduling.nova_extra_specs`)
and kept on the flavor for whatever reads it; it does not change placement. An unknown key in
one of Nova's namespaces is a 400 naming it; a key outside them is kept, as Nova keeps it.

The translator writes the request as Placement's query string and hands it to the API's own
query parser, so a flavor means exactly what ``GET /allocation_candidates`` would with the same
words: there is no second parser of the request language.
"""

import itertools
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from django.http import QueryDict

from placementsite.core.exceptions import InvalidRequest
from placementsite.core.versions import MAX_VERSION
from providers import query_params as qp
from providers import request_groups
from providers.models import MAX_INT, ResourceClass, Trait
from providers.plugins.builtin import PCI_NO_NUMA_TRAIT
from providers.request_groups import CandidateRequest
from providers.services.resource_classes import resource_class_ensure

from . import nova_extra_specs
from .models import Flavor
from .nova_extra_specs import INVALID_EXTRA_SPEC, InvalidExtraSpec, cpu_map

# The query parser of GET /allocation_candidates (the request language's one home).

SUFFIX = r"([A-Za-z0-9_-]{0,64})"
RESOURCE_KEY = re.compile(rf"^resources{SUFFIX}:([A-Z0-9_]+)$")
TRAIT_KEY = re.compile(rf"^trait{SUFFIX}:([A-Z0-9_]+)$")
MEMBER_OF_KEY = re.compile(rf"^member_of{SUFFIX}$")
AGGREGATE_SPEC_PREFIX = "aggregate_instance_extra_specs:"
NUMA_NODES = "hw:numa_nodes"
NUMA_CPUS = re.compile(r"^hw:numa_cpus\.(\d+)$")
NUMA_MEM = re.compile(r"^hw:numa_mem\.(\d+)$")
CPU_POLICY = "hw:cpu_policy"
THREAD_POLICY = "hw:cpu_thread_policy"
DEDICATED_MASK = "hw:cpu_dedicated_mask"
REALTIME_MASK = "hw:cpu_realtime_mask"
HYPERTHREADING = "HW_CPU_HYPERTHREADING"
NUMA_ROOT_TRAIT = "HW_NUMA_ROOT"
MEM_PAGE_SIZE = "hw:mem_page_size"
PCI_NUMA_AFFINITY = "hw:pci_numa_affinity_policy"
# The classes a host's devices give (the pci plugin's): what the PCI NUMA affinity ties to a
# NUMA group.
DEVICE_CLASSES = frozenset({"PCI_DEVICE", "SRIOV_NET_VF", "VGPU", "PGPU", "FPGA"})
DEVICE_GROUP = "_PCI"
LEGACY = "legacy"  # Nova's PCI NUMA affinity policy when the flavor (or image) sets none
# The policies that tie the device group to the NUMA groups.
TIED_POLICIES = ("required", "preferred", LEGACY, "socket")
GROUP_POLICY = "group_policy"
MAX_NUMA_NODES = 8
# A boot's own resources beyond its flavor's (Nova's port resource requests): one granular
# group each, ``_REQUESTED1``, ``_REQUESTED2``...
REQUESTED_GROUP = "_REQUESTED"
MAX_REQUESTED_GROUPS = 8

__all__ = [
    "INVALID_EXTRA_SPEC",
    "InvalidExtraSpec",
    "requested_problems",
    "translate",
    "translate_flavor",
    "validate",
]


@dataclass
class _Group:
    resources: dict = field(default_factory=dict)
    required: list = field(default_factory=list)  # trait names, "!NAME" when forbidden
    member_of: list = field(default_factory=list)  # Placement member_of values


def _amount(key, value, *, minimum=0, maximum=MAX_INT):
    text = str(value).strip()
    if isinstance(value, bool) or not re.fullmatch(r"\d+", text):
        raise InvalidExtraSpec(key, f"expected an integer, got {value!r}")
    number = int(text)
    if not minimum <= number <= maximum:
        raise InvalidExtraSpec(key, f"expected {minimum} to {maximum}, got {number}")
    return number


def _choice(key, value, choices):
    if not isinstance(value, str) or value not in choices:
        raise InvalidExtraSpec(key, f"expected one of {', '.join(choices)}, got {value!r}")
    return value


def standard_amounts(
    *, vcpus: int, ram: int, disk: int, ephemeral: int = 0, swap: int = 0
) -> dict[str, int]:
    """What a flavor's standard fields ask for, as Nova computes it (swap counts in GB,
    rounded up)."""
    return {
        "VCPU": vcpus,
        "MEMORY_MB": ram,
        "DISK_GB": disk + ephemeral + (swap + 1023) // 1024,
    }


def _check_key_and_value(key, value):
    if not isinstance(key, str) or not key:
        raise InvalidExtraSpec(repr(key), "keys must be non-empty strings")
    if isinstance(value, (dict, list)) or value is None:
        raise InvalidExtraSpec(key, "values must be strings or integers")


def _apply_group_spec(groups, key, value):
    """Apply a ``resources*``, ``trait*`` or ``member_of*`` key to its group in ``groups``;
    False when ``key`` is none of them."""
    if match := RESOURCE_KEY.match(key):
        suffix, name = match.groups()
        amount = _amount(key, value)
        group = groups.setdefault(suffix, _Group())
        if amount:
            group.resources[name] = amount
        else:
            group.resources.pop(name, None)
    elif match := TRAIT_KEY.match(key):
        suffix, name = match.groups()
        how = _choice(key, value, ("required", "forbidden"))
        groups.setdefault(suffix, _Group()).required.append(
            name if how == "required" else f"!{name}"
        )
    elif match := MEMBER_OF_KEY.match(key):
        _check_member_of(key, value)
        groups.setdefault(match.group(1), _Group()).member_of.append(str(value))
    else:
        return False
    return True


class _ParsedSpecs(NamedTuple):
    """A flavor's extra specs read, every key checked."""

    groups: dict[str, _Group]  # suffix -> group
    group_policy: str | None
    aggregate_specs: dict[str, str]  # aggregate_instance_extra_specs: key -> value
    affinity: list["DeviceAffinity"]  # the device affinities to try, in order
    numa_nodes: int  # 0: none


def _groups_from_specs(extra_specs, amounts):
    """The flavor's groups and request-wide options (:class:`_ParsedSpecs`) from its extra
    specs and standard ``amounts``."""
    if not isinstance(extra_specs, dict):
        raise InvalidExtraSpec("extra_specs", "expected an object of key: value")
    groups = {"": _Group(resources={k: v for k, v in amounts.items() if v})}
    group_policy = None
    aggregate_specs = {}
    numa_nodes = None
    for key in sorted(extra_specs):
        value = extra_specs[key]
        _check_key_and_value(key, value)
        nova_extra_specs.check(key, value)
        if _apply_group_spec(groups, key, value):
            continue
        if key == GROUP_POLICY:
            group_policy = value
        elif key == NUMA_NODES:
            numa_nodes = _amount(key, value, minimum=1, maximum=MAX_NUMA_NODES)
        elif key.startswith(AGGREGATE_SPEC_PREFIX):
            if not isinstance(value, str):
                raise InvalidExtraSpec(key, "expected a string")
            aggregate_specs[key[len(AGGREGATE_SPEC_PREFIX) :]] = value
    _pin_cpus(groups, extra_specs)
    numa_nodes = _numa_groups(groups, numa_nodes, extra_specs)
    if numa_nodes:
        group_policy = group_policy or "isolate"
    affinity = _affinity_variants(groups, numa_nodes, extra_specs.get(PCI_NUMA_AFFINITY))
    return _ParsedSpecs(groups, group_policy, aggregate_specs, affinity, numa_nodes)


class DeviceAffinity(NamedTuple):
    """One way to place the flavor's devices: ``label`` says which ("" when there is one),
    ``same_subtree`` the suffixes asked in one subtree, ``device_traits`` what the device
    group requires besides."""

    label: str
    same_subtree: list[tuple[str, ...]]
    device_traits: tuple[str, ...]


def _affinity_variants(groups, numa_nodes, policy):
    """The :class:`DeviceAffinity` variants to try, in order.

    ``required``: the device group in the first NUMA group's subtree. ``preferred``: that
    first, then the device group anywhere in the host's tree (Nova's ``preferred`` takes an
    affine device when the chosen cells have one, any device otherwise). ``legacy``, and no
    policy (Nova's default): that first, then a device that reports no NUMA node
    (:data:`PCI_NO_NUMA_TRAIT`, under the host's root), as Nova's ``legacy`` takes a device
    with a NUMA node only on the instance's cells and one without anywhere. ``socket``: as
    ``required`` (see the module doc). Without NUMA nodes or without devices: one request,
    unconstrained."""
    key = f"{PCI_NUMA_AFFINITY}={policy}" if policy else f"{PCI_NUMA_AFFINITY}={LEGACY} (unset)"
    policy = policy or LEGACY
    if not numa_nodes or policy not in TIED_POLICIES or not _split_devices(groups):
        return [DeviceAffinity("", [], ())]
    affine = [("_NUMA0", DEVICE_GROUP)]
    if policy in ("required", "socket"):
        # socket: the reports carry no socket of a cell, so a device of the instance's own
        # cell (on its socket by construction) is the one known to satisfy it.
        return [DeviceAffinity("", affine, ())]
    if policy == "preferred":
        return [
            DeviceAffinity(f"{key}: device on _NUMA0's cell", affine, ()),
            DeviceAffinity(f"{key}: device anywhere", [], ()),
        ]
    return [
        DeviceAffinity(f"{key}: device on _NUMA0's cell", affine, ()),
        DeviceAffinity(f"{key}: device with no NUMA node", [], (PCI_NO_NUMA_TRAIT,)),
    ]


def _with_device_traits(groups, traits):
    """``groups`` with the device group also requiring ``traits`` (the others shared)."""
    if not traits:
        return groups
    device = groups[DEVICE_GROUP]
    asked = dict(groups)
    asked[DEVICE_GROUP] = _Group(
        resources=dict(device.resources),
        required=[*device.required, *traits],
        member_of=list(device.member_of),
    )
    return asked


def _numa_groups(groups, numa_nodes, extra_specs):
    """Split the CPUs and memory over the NUMA groups; returns the number of NUMA nodes (0:
    none). The page size is asked apart (:func:`page_variants`)."""
    page_kb = _page_size(extra_specs)
    if page_kb is not None and not numa_nodes:
        numa_nodes = 1  # as Nova: a page size alone gives the instance one NUMA node
    if not numa_nodes:
        for key in extra_specs:
            if NUMA_CPUS.match(key) or NUMA_MEM.match(key):
                raise InvalidExtraSpec(key, f"needs {NUMA_NODES}")
        return 0
    _split_numa(groups, numa_nodes, extra_specs)
    if isinstance(page_kb, int) and page_kb:
        _check_whole_pages(groups, numa_nodes, page_kb)
    return numa_nodes


def _split_devices(groups):
    """Move the unsuffixed device classes into the device group; False when there are none."""
    unsuffixed = groups[""].resources
    devices = {name: unsuffixed.pop(name) for name in sorted(DEVICE_CLASSES & set(unsuffixed))}
    if devices:
        groups.setdefault(DEVICE_GROUP, _Group()).resources.update(devices)
    return bool(devices)


def _pin_cpus(groups, extra_specs):
    """``hw:cpu_policy`` and ``hw:cpu_thread_policy`` as Nova's scheduler turns them into
    PCPU, VCPU and the hyperthreading trait."""
    unsuffixed = groups[""].resources
    policy = extra_specs.get(CPU_POLICY, "shared")
    vcpus = unsuffixed.get("VCPU", 0)
    if policy == "dedicated" and vcpus:
        unsuffixed["PCPU"] = unsuffixed.pop("VCPU")
    elif policy == "mixed":
        mask_key = DEDICATED_MASK if DEDICATED_MASK in extra_specs else REALTIME_MASK
        if mask_key not in extra_specs:
            raise InvalidExtraSpec(CPU_POLICY, f"mixed needs {DEDICATED_MASK} (or {REALTIME_MASK})")
        pinned = cpu_map(mask_key, extra_specs[mask_key], universe=range(vcpus))
        if not pinned or max(pinned) >= vcpus or len(pinned) >= vcpus:
            raise InvalidExtraSpec(
                mask_key, f"a mixed policy needs some but not all of the flavor's {vcpus} CPUs"
            )
        unsuffixed["PCPU"] = len(pinned)
        unsuffixed["VCPU"] = vcpus - len(pinned)
    if "PCPU" in unsuffixed:
        thread_policy = extra_specs.get(THREAD_POLICY)
        if thread_policy == "isolate":
            groups[""].required.append(f"!{HYPERTHREADING}")
        elif thread_policy == "require":
            groups[""].required.append(HYPERTHREADING)


def _split_numa(groups, nodes, extra_specs):
    """Move the unsuffixed CPUs and memory into one granular group per NUMA node: evenly, or
    as ``hw:numa_cpus.N`` and ``hw:numa_mem.N`` say."""
    unsuffixed = groups[""].resources
    split = {
        name: unsuffixed.pop(name) for name in ("VCPU", "PCPU", "MEMORY_MB") if name in unsuffixed
    }
    cpus, mem = _numa_layout(nodes, extra_specs, split)
    if cpus is None:
        cpus, mem = _even_numa_layout(nodes, split)
    for index, share in enumerate(_numa_shares(cpus, mem, split, extra_specs)):
        group = groups.setdefault(f"_NUMA{index}", _Group())
        for name, amount in share.items():
            if amount:
                group.resources[name] = amount
        # Only a NUMA cell's provider may take a NUMA group (as Nova refuses an instance with
        # a NUMA topology on a host without one): never the root of a host without cells.
        if NUMA_ROOT_TRAIT not in group.required:
            group.required.append(NUMA_ROOT_TRAIT)


def _even_numa_layout(nodes, split):
    """Per-node CPU sets and memory when the flavor splits them evenly (a 400 when they do
    not divide)."""
    total_cpus = split.get("VCPU", 0) + split.get("PCPU", 0)
    for name, amount in (("vCPUs", total_cpus), ("MEMORY_MB", split.get("MEMORY_MB", 0))):
        if amount % nodes:
            raise InvalidExtraSpec(
                NUMA_NODES, f"{name} {amount} cannot be split evenly over {nodes} NUMA nodes"
            )
    each = total_cpus // nodes  # as Nova: node i has the vCPUs i*each .. (i+1)*each - 1
    cpus = [set(range(i * each, (i + 1) * each)) for i in range(nodes)]
    return cpus, [split.get("MEMORY_MB", 0) // nodes] * nodes


def _numa_shares(cpus, mem, split, extra_specs):
    """Per node, what its group asks (class -> amount, zeros included): its CPUs as PCPU or
    VCPU (a mixed policy: its pinned ones as PCPU, the rest VCPU) and its memory."""
    total_cpus = split.get("VCPU", 0) + split.get("PCPU", 0)
    mixed = "PCPU" in split and "VCPU" in split
    pinned = _mixed_pinned(extra_specs, total_cpus) if mixed else None
    shares = []
    for node_cpus, node_mem in zip(cpus, mem, strict=True):
        if pinned is not None:
            share = {"PCPU": len(node_cpus & pinned), "VCPU": len(node_cpus - pinned)}
        else:
            share = {"PCPU" if "PCPU" in split else "VCPU": len(node_cpus)}
        share["MEMORY_MB"] = node_mem
        shares.append(share)
    return shares


PAGE_UNITS = {"": 1, "k": 1, "m": 1024, "g": 1024**2, "t": 1024**3}
# ``hw:mem_page_size`` values that name no size: Nova's MEMPAGES_LARGE (any huge page size the
# cell has, the largest that fits first) and MEMPAGES_ANY (the same, then small pages).
LARGE = "large"
ANY = "any"
# The huge page size ``large`` and ``any`` consider even before any host reports pages (the
# commonest), so that a refusal names the class a host lacks.
DEFAULT_LARGE_PAGE_KB = 2048
# At most this many requests for one flavor: a NUMA node per page size each (largest first,
# per node, as Nova fits each cell on its own); past it every node takes the same size.
MAX_PAGE_VARIANTS = 32
MEMPAGE_CLASS = re.compile(r"^CUSTOM_MEMPAGE_(\d+)KB$")


def mempage_class(size_kb: int) -> str:
    """The resource class of a cell's pages of ``size_kb`` KiB."""
    return f"CUSTOM_MEMPAGE_{size_kb}KB"


def _page_size(extra_specs):
    """``hw:mem_page_size``: None when not given, 0 for small pages (``small`` or 4 KiB: the
    cells' MEMORY_MB), :data:`LARGE` or :data:`ANY`, else the huge page size asked in KiB."""
    value = extra_specs.get(MEM_PAGE_SIZE)
    if value is None:
        return None
    text = str(value).strip()
    if text == "small":
        return 0
    if text in (LARGE, ANY):
        return text
    match = re.fullmatch(r"(\d+)\s*([kKmMgGtT]?)(i?)([bB]?)(it)?", text)
    if not match:
        raise InvalidExtraSpec(MEM_PAGE_SIZE, f"not a page size: {text!r}")
    size_kb = int(match.group(1)) * PAGE_UNITS[match.group(2).lower()]
    if size_kb < 4:
        raise InvalidExtraSpec(MEM_PAGE_SIZE, f"{text} is below the 4 KiB small page")
    return 0 if size_kb == 4 else size_kb


def _numa_memory_kb(groups, nodes):
    return [groups[f"_NUMA{index}"].resources.get("MEMORY_MB", 0) * 1024 for index in range(nodes)]


def _check_whole_pages(groups, nodes, page_kb):
    """A size named explicitly must hold each node's memory in whole pages (else a 400)."""
    for index, memory_kb in enumerate(_numa_memory_kb(groups, nodes)):
        if memory_kb % page_kb:
            raise InvalidExtraSpec(
                MEM_PAGE_SIZE,
                f"node {index}'s {memory_kb // 1024} MB is not a whole number of "
                f"{page_kb} KiB pages",
            )


def huge_page_sizes() -> list[int]:
    """The huge page sizes in KiB, largest first: those of the page classes that exist
    (``CUSTOM_MEMPAGE_<KiB>KB``, KiB > 4; the sync makes one per size a host reports), and
    :data:`DEFAULT_LARGE_PAGE_KB`. One query."""
    sizes = {DEFAULT_LARGE_PAGE_KB}
    for name in ResourceClass.objects.filter(name__startswith="CUSTOM_MEMPAGE_").values_list(
        "name", flat=True
    ):
        match = MEMPAGE_CLASS.match(name)
        if match and int(match.group(1)) > 4:
            sizes.add(int(match.group(1)))
    return sorted(sizes, reverse=True)


def _page_label(size_kb):
    return "small pages" if size_kb == 0 else f"{size_kb} KiB pages"


class PageVariant(NamedTuple):
    """One request's page sizes: ``label`` says which ("" when the flavor has one request),
    ``sizes`` is ``{NUMA suffix: page size in KiB, 0 for small pages}``."""

    label: str
    sizes: dict[str, int]


def page_variants(
    *, groups: Mapping[str, _Group], nodes: int, page_kb: int | str | None
) -> tuple[list[PageVariant], list[str]]:
    """``(variants, notes)``: the page sizes each NUMA group asks, one :class:`PageVariant`
    per request to try, in order.

    A size names one request. ``large`` (``any``) is Nova's choice per cell of the largest
    huge page size (any size, small pages last) that holds the node's memory in whole pages:
    each node's sizes largest first, every combination in that order (node 0's size varying
    slowest) while there are at most :data:`MAX_PAGE_VARIANTS` of them, else every node the
    same size. A size that does not hold a node's memory in whole pages is skipped for that
    node; ``notes`` says so when no size is left."""
    suffixes = [f"_NUMA{index}" for index in range(nodes)]
    if page_kb is None or page_kb == 0:
        return [PageVariant("", {})], []
    if isinstance(page_kb, int):
        return [PageVariant("", dict.fromkeys(suffixes, page_kb))], []
    sizes = huge_page_sizes() + ([0] if page_kb == ANY else [])
    memory = _numa_memory_kb(groups, nodes)
    if not any(memory):
        return [PageVariant("", {})], []
    per_node = [[s for s in sizes if s == 0 or kb % s == 0] for kb in memory]
    if not all(per_node):
        return [], [_no_whole_pages_note(page_kb, sizes, memory, per_node)]
    variants = []
    for combo in _size_combinations(per_node, sizes):
        sizes_of = dict(zip(suffixes, combo, strict=True))
        label = ", ".join(f"{s}: {_page_label(k)}" for s, k in sizes_of.items())
        variants.append(PageVariant(f"{MEM_PAGE_SIZE}={page_kb}: {label}", sizes_of))
    return variants, []


def _no_whole_pages_note(page_kb, sizes, memory, per_node):
    """Why no request is left: the first node whose memory no size holds in whole pages."""
    index = next(i for i, fitting in enumerate(per_node) if not fitting)
    return (
        f"{MEM_PAGE_SIZE}={page_kb}: node {index}'s {memory[index] // 1024} MB is not a "
        f"whole number of pages of any huge page size "
        f"({', '.join(f'{s} KiB' for s in sizes if s)})"
    )


def _size_combinations(per_node, sizes):
    """The page sizes to try, one per node each: every combination of the nodes' fitting
    sizes while there are at most :data:`MAX_PAGE_VARIANTS`, else every node the same."""
    if math.prod(len(fitting) for fitting in per_node) <= MAX_PAGE_VARIANTS:
        return itertools.product(*per_node)
    nodes = len(per_node)
    return ([s] * nodes for s in sizes if all(s in fitting for fitting in per_node))


def _ask_pages(groups, page_sizes):
    """Each NUMA group of ``page_sizes`` (``{suffix: KiB}``) asks its memory in pages of that
    size (its cell's page pool) instead of MEMORY_MB (the cell's small pages), as Nova fits a
    page-size instance's cell; returns the groups changed (the others shared)."""
    asked = dict(groups)
    for suffix, page_kb in page_sizes.items():
        group = groups[suffix]
        memory_kb = group.resources.get("MEMORY_MB", 0) * 1024
        if not page_kb or not memory_kb:
            continue
        resources = {k: v for k, v in group.resources.items() if k != "MEMORY_MB"}
        resources[mempage_class(page_kb)] = memory_kb // page_kb
        asked[suffix] = _Group(
            resources=resources, required=list(group.required), member_of=list(group.member_of)
        )
    return asked


def _mixed_pinned(extra_specs, vcpus):
    """The vCPU ids a mixed policy pins (its mask, as :func:`_pin_cpus` read it)."""
    mask_key = DEDICATED_MASK if DEDICATED_MASK in extra_specs else REALTIME_MASK
    return set(cpu_map(mask_key, extra_specs[mask_key], universe=range(vcpus)))


def _numa_layout(nodes, extra_specs, split):
    """Per-node CPU sets and memory from ``hw:numa_cpus.N``/``hw:numa_mem.N``, or
    ``(None, None)`` when none is given. As Nova: every node gets both, the CPU maps cover
    every CPU of the flavor once, and the memory adds up to the flavor's."""
    cpu_keys = {int(m.group(1)): k for k in extra_specs if (m := NUMA_CPUS.match(k))}
    mem_keys = {int(m.group(1)): k for k in extra_specs if (m := NUMA_MEM.match(k))}
    if not cpu_keys and not mem_keys:
        return None, None
    for keys, what in ((cpu_keys, "hw:numa_cpus"), (mem_keys, "hw:numa_mem")):
        _check_every_node_given(keys, what, nodes)
    cpus = _numa_cpu_sets(cpu_keys, extra_specs, split.get("VCPU", 0) + split.get("PCPU", 0))
    mem = [_amount(mem_keys[i], extra_specs[mem_keys[i]], minimum=1) for i in range(nodes)]
    if sum(mem) != split.get("MEMORY_MB", 0):
        raise InvalidExtraSpec(
            mem_keys[0], f"the nodes' memory must add up to {split.get('MEMORY_MB', 0)} MB"
        )
    return cpus, mem


def _check_every_node_given(keys, what, nodes):
    """``keys`` (``{node: key}`` of ``what``) names every node 0..nodes-1 and no other."""
    if set(keys) != set(range(nodes)):
        bad = sorted(set(keys) - set(range(nodes)))
        key = keys[bad[0]] if bad else NUMA_NODES
        raise InvalidExtraSpec(key, f"{what}.N must be given for every node 0..{nodes - 1}")


def _numa_cpu_sets(cpu_keys, extra_specs, total_cpus):
    """Each node's CPUs from its ``hw:numa_cpus.N`` map (``cpu_keys``: ``{node: key}``):
    distinct, below ``total_cpus``, and covering all of them."""
    seen = set()
    cpus = []
    for index in range(len(cpu_keys)):
        key = cpu_keys[index]
        members = cpu_map(key, extra_specs[key])
        if members & seen or any(cpu >= total_cpus for cpu in members):
            raise InvalidExtraSpec(key, f"CPUs must be distinct and below {total_cpus}")
        seen |= members
        cpus.append(set(members))
    if len(seen) != total_cpus:
        raise InvalidExtraSpec(cpu_keys[0], f"the maps must cover all {total_cpus} CPUs")
    return cpus


def _check_member_of(key, value):
    if not isinstance(value, str):
        raise InvalidExtraSpec(key, "expected an aggregate uuid or in:uuid,uuid")
    try:
        query = QueryDict(mutable=True)
        query["member_of"] = value
        request_groups.parse_member_of(query, MAX_VERSION)
    except InvalidRequest as exc:
        raise InvalidExtraSpec(key, exc.detail) from None


def _query(groups, group_policy, same_subtree=()):
    """The request as Placement's allocation candidates query string."""
    query = QueryDict(mutable=True)
    for suffixes in same_subtree:
        query.appendlist("same_subtree", ",".join(suffixes))
    for suffix, group in groups.items():
        if group.resources:
            query["resources" + suffix] = ",".join(
                f"{name}:{amount}" for name, amount in sorted(group.resources.items())
            )
        if group.required:
            query["required" + suffix] = ",".join(group.required)
        for value in group.member_of:
            query.appendlist("member_of" + suffix, value)
    if group_policy:
        query["group_policy"] = group_policy
    return query


@dataclass(frozen=True)
class RequestVariant:
    """One request a flavor may be placed with: ``label`` says which (its page sizes; "" for
    a flavor with one request), ``resources`` is class -> amount summed over every group."""

    label: str
    candidate_request: CandidateRequest
    resources: dict[str, int]


@dataclass(frozen=True)
class FlavorRequest:
    """A flavor translated: the engine's requests and what the filters read.

    ``variants``: the requests a host may satisfy, in the order it tries them (one, except for
    ``hw:mem_page_size=large|any``: each page size, largest first); the scheduler takes on
    each host its first fitting candidate of the first variant that has one. None when no
    request can hold the flavor (``notes`` says why)."""

    variants: tuple[RequestVariant, ...]
    aggregate_specs: dict[str, str]  # aggregate_instance_extra_specs: key -> value
    notes: tuple[str, ...] = ()  # why variants were left out

    @property
    def candidate_request(self) -> CandidateRequest | None:
        """The first variant's request (None when there is none)."""
        return self.variants[0].candidate_request if self.variants else None

    @property
    def resources(self) -> dict[str, int]:
        """The first variant's resources (class -> amount, one instance)."""
        return self.variants[0].resources if self.variants else {}

    def holds(self, totals: Mapping[str, int]) -> bool:
        """Whether ``totals`` (class -> amount) is what one of the variants asks."""
        return any(variant.resources == totals for variant in self.variants)

    def with_requests(
        self, change: Callable[[CandidateRequest], CandidateRequest]
    ) -> "FlavorRequest":
        """A copy with ``change(candidate_request)`` as every variant's request."""
        variants = tuple(
            RequestVariant(v.label, change(v.candidate_request), v.resources) for v in self.variants
        )
        return FlavorRequest(variants, self.aggregate_specs, self.notes)


def _join(*labels):
    return "; ".join(label for label in labels if label)


def _variant(label, groups, group_policy, same_subtree):
    query = _query(groups, group_policy, same_subtree)
    try:
        qp.validate_query(query, qp.candidates_query_schema(MAX_VERSION))
        request = request_groups.parse_candidate_request(query, MAX_VERSION)
    except InvalidRequest as exc:
        raise InvalidExtraSpec("extra_specs", exc.detail) from None
    resources = {}
    for group in request.groups.values():
        for name, amount in group.resources.items():
            resources[name] = resources.get(name, 0) + amount
    return RequestVariant(label, request, resources)


def translate(
    *,
    vcpus: int,
    ram: int,
    disk: int,
    ephemeral: int = 0,
    swap: int = 0,
    extra_specs: Mapping[str, object] | None = None,
    traits: Iterable[str] = (),
    aggregates: Iterable[str] = (),
    requested: Sequence[Mapping[str, Any]] = (),
) -> FlavorRequest:
    """One flavor's request, plus a request's own required ``traits``, ``aggregates`` (each
    aggregate a uuid the host must be in, e.g. the availability zone's) and ``requested``
    resources (``[{"resources": {class: amount}, "required": [trait or !trait]}]``, each a
    granular group of its own, as Nova adds a port's resource request: one provider of the
    host's tree, or a pool it shares, gives each)."""
    amounts = standard_amounts(vcpus=vcpus, ram=ram, disk=disk, ephemeral=ephemeral, swap=swap)
    extra_specs = extra_specs or {}
    groups, group_policy, aggregate_specs, affinity, numa_nodes = _groups_from_specs(
        extra_specs, amounts
    )
    for index, asked in enumerate(requested, start=1):
        groups[f"{REQUESTED_GROUP}{index}"] = _Group(
            resources=dict(asked["resources"]), required=list(asked.get("required") or ())
        )
    groups[""].required.extend(traits)
    if aggregates:
        groups[""].member_of.append("in:" + ",".join(sorted(aggregates)))
    if not groups[""].resources and not groups[""].required and not groups[""].member_of:
        del groups[""]
    if len([s for s in groups if s]) > 1 and group_policy is None:
        group_policy = "none"
    page_kb = _page_size(extra_specs) if numa_nodes else None
    sizes, notes = page_variants(groups=groups, nodes=numa_nodes, page_kb=page_kb)
    # The affinity outermost, as Nova fits a cell (its cells with devices first, see
    # HostStates._cell_ranks) before it picks the cell's page size.
    variants = tuple(
        _variant(
            _join(device, pages),
            _ask_pages(_with_device_traits(groups, traits), asked),
            group_policy,
            same_subtree,
        )
        for device, same_subtree, traits in affinity
        for pages, asked in sizes
    )
    return FlavorRequest(variants=variants, aggregate_specs=aggregate_specs, notes=tuple(notes))


def translate_flavor(
    flavor: Flavor,
    *,
    traits: Iterable[str] = (),
    aggregates: Iterable[str] = (),
    requested: Sequence[Mapping[str, Any]] = (),
) -> FlavorRequest:
    """:func:`translate` of a flavor's fields and extra specs."""
    return translate(
        vcpus=flavor.vcpus,
        ram=flavor.ram,
        disk=flavor.disk,
        ephemeral=flavor.ephemeral,
        swap=flavor.swap,
        extra_specs=flavor.extra_specs,
        traits=traits,
        aggregates=aggregates,
        requested=requested,
    )


def requested_problems(requested: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """``{field: [why]}`` for a boot's ``requested_resources`` (already of the right shape)
    naming a resource class or trait that does not exist; empty when every name does."""
    classes = {name for asked in requested for name in asked["resources"]}
    traits = {name.lstrip("!") for asked in requested for name in asked.get("required") or ()}
    known_classes = set(
        ResourceClass.objects.filter(name__in=classes).values_list("name", flat=True)
    )
    known_traits = set(Trait.objects.filter(name__in=traits).values_list("name", flat=True))
    problems = {}
    for index, asked in enumerate(requested):
        for name in sorted(asked["resources"]):
            if name not in known_classes:
                field = f"requested_resources.{index}.resources.{name}"
                problems[field] = [f"No such resource class {name}."]
        for name in asked.get("required") or ():
            if name.lstrip("!") not in known_traits:
                field = f"requested_resources.{index}.required"
                problems.setdefault(field, []).append(f"No such trait {name.lstrip('!')}.")
    return problems


def validate(
    *,
    vcpus: int,
    ram: int,
    disk: int,
    ephemeral: int = 0,
    swap: int = 0,
    extra_specs: Mapping[str, object] | None = None,
) -> FlavorRequest:
    """Check a flavor before it is written: the syntax, then that every resource class and
    trait it names exists. Raises InvalidExtraSpec naming the first bad key."""
    translated = translate(
        vcpus=vcpus, ram=ram, disk=disk, ephemeral=ephemeral, swap=swap, extra_specs=extra_specs
    )
    _check_classes_exist(translated, extra_specs or {})
    _check_traits_exist(extra_specs or {})
    return translated


def _check_classes_exist(translated, extra_specs):
    """Every resource class the variants ask exists (a page class is made, as Nova takes any
    page size before a host has it); else a 400 naming the extra spec that asks it."""
    classes = {name for variant in translated.variants for name in variant.resources}
    for name in sorted(classes):
        if name.startswith("CUSTOM_MEMPAGE_"):  # Nova takes any page size before any host has it
            resource_class_ensure(name=name)
    known = set(ResourceClass.objects.filter(name__in=classes).values_list("name", flat=True))
    for key in sorted(extra_specs):
        match = RESOURCE_KEY.match(key)
        if match and match.group(2) not in known and match.group(2) in classes:
            raise InvalidExtraSpec(key, f"no such resource class {match.group(2)}")
    missing = classes - known
    if missing:
        raise InvalidExtraSpec(
            "extra_specs", f"no such resource class {', '.join(sorted(missing))}"
        )


def _check_traits_exist(extra_specs):
    """Every trait a ``trait*`` key names exists; else a 400 naming the first such key."""
    names = {key.split(":", 1)[1]: key for key in extra_specs if TRAIT_KEY.match(key)}
    found = set(Trait.objects.filter(name__in=list(names)).values_list("name", flat=True))
    for name, key in sorted(names.items(), key=lambda item: item[1]):
        if name not in found:
            raise InvalidExtraSpec(key, f"no such trait {name}")
