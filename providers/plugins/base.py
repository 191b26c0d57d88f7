"""The plugin interface and the tree of providers a host's plugins build."""

from dataclasses import dataclass, field, fields
from typing import NamedTuple

from ..capacity import Capacity


@dataclass(frozen=True)
class HostReport:
    """What a host said about itself (the fields of a ComputeNode's last report).

    ``cpu_dedicated_set`` and ``cpu_shared_set`` are host CPU ids, as Nova's options of those
    names: None when the host did not say.
    """

    hostname: str
    vcpus: int = 0
    memory_mb: int = 0
    local_gb: int = 0
    cpu_info: dict = field(default_factory=dict)
    hypervisor_type: str = ""
    stats: dict = field(default_factory=dict)
    numa_topology: dict | None = None
    pci_devices: list = field(default_factory=list)
    cpu_dedicated_set: list | None = None
    cpu_shared_set: list | None = None
    # The shared-storage pool the host's disks are on ("": local disk).
    disk_pool: str = ""

    @classmethod
    def of(cls, node):
        """The report a ComputeNode (or any object with the report's fields) holds."""
        return cls(hostname=node.hostname, **{name: getattr(node, name) for name in FIELDS})

    @property
    def numa_cells(self):
        return list((self.numa_topology or {}).get("cells") or [])


# The fields of a host's report, in order: the model, the API, the admin and the digest
# all use this list.
FIELDS = tuple(f.name for f in fields(HostReport) if f.name != "hostname")


@dataclass
class InventorySpec:
    """One class's inventory as a plugin computes it.

    ``reserved`` and ``allocation_ratio`` left as None take the operator's
    defaults for the class (``PLACEMENT_RESERVED``, ``PLACEMENT_ALLOCATION_RATIOS``);
    ``max_unit`` left as None is the total.
    """

    total: int
    reserved: int | None = None
    min_unit: int = 1
    max_unit: int | None = None
    step_size: int = 1
    allocation_ratio: float | None = None

    def capacity(self):
        return Capacity(
            total=self.total,
            reserved=self.reserved or 0,
            min_unit=self.min_unit,
            max_unit=self.max_unit if self.max_unit is not None else self.total,
            step_size=self.step_size,
            allocation_ratio=self.allocation_ratio if self.allocation_ratio is not None else 1.0,
        )


class UnitSpec(NamedTuple):
    """One assignable unit of a device (a VF, a vGPU slot, a whole device): its address or
    slot id, the physical device's address (blank for a whole device), its mdev type."""

    address: str
    parent_address: str = ""
    mdev_type: str = ""


@dataclass
class ProviderSpec:
    """A provider of the host's tree: the root (key "") or a provider under it.

    ``parent`` is the key of the provider it hangs under ("" the root; None for the root
    itself). ``source`` names the report field it comes from (``pci_devices[1]``), so that a
    report whose provider cannot be made is refused naming that field.
    """

    key: str
    name: str
    parent: str | None = ""
    inventories: dict = field(default_factory=dict)
    traits: set = field(default_factory=set)
    source: str = ""
    # {class: (UnitSpec, ...)}: the units a server is assigned when it is allocated that
    # class here (the sync keeps them as the provider's device units).
    units: dict = field(default_factory=dict)


def _copy_spec(spec):
    # Built field by field: dataclasses.replace asks every field of its class each call,
    # and a host's plugins copy its tree once each (issue 28).
    return ProviderSpec(
        spec.key,
        spec.name,
        spec.parent,
        {name: _copy_inventory(inv) for name, inv in spec.inventories.items()},
        set(spec.traits),
        spec.source,
        dict(spec.units),
    )


def _copy_inventory(inv):
    return InventorySpec(
        inv.total, inv.reserved, inv.min_unit, inv.max_unit, inv.step_size, inv.allocation_ratio
    )


class HostTree:
    """The providers a host's plugins want: a root named for the host and keyed providers
    under it, at any depth (a device under its NUMA cell)."""

    def __init__(self, hostname, plugin_names=()):
        self.hostname = hostname
        self.plugin_names = frozenset(plugin_names)
        self.root = ProviderSpec(key="", name=hostname, parent=None, source="hostname")
        self._children = {}

    def uses(self, plugin_name):
        """Whether the operator enabled ``plugin_name`` (e.g. vcpu asks about numa)."""
        return plugin_name in self.plugin_names

    def copy(self):
        """A copy a plugin's changes do not reach (what ``copy.deepcopy`` gives, cheaper)."""
        copied = HostTree(self.hostname)
        copied.plugin_names = self.plugin_names
        copied.root = _copy_spec(self.root)
        copied._children = {key: _copy_spec(spec) for key, spec in self._children.items()}
        return copied

    def child(self, key, name=None, *, parent="", source=""):
        """The provider ``key`` (created on first use; named ``<host>_<key>``), under the
        provider keyed ``parent`` (the root by default). A parent no plugin made is the
        root's place: the child hangs under the root."""
        found = self._children.get(key)
        if found is None:
            found = self._children[key] = ProviderSpec(
                key=key, name=name or f"{self.hostname}_{key}", parent=parent, source=source
            )
        return found

    def specs(self):
        """Every provider, the root first, in no further order (for checks that visit each
        once: :meth:`providers` orders them, and hangs a child whose parent is gone under
        the root)."""
        return [self.root, *self._children.values()]

    def providers(self):
        """The root first, then every provider after its parent (siblings in key order)."""
        for spec in self._children.values():
            if not self._reaches_root(spec):
                spec.parent = ""
        under = {}
        for key in sorted(self._children):
            spec = self._children[key]
            under.setdefault(spec.parent, []).append(spec)
        ordered, todo = [], [self.root]
        while todo:
            spec = todo.pop(0)
            ordered.append(spec)
            todo[:0] = under.get(spec.key, [])
        return ordered

    def _reaches_root(self, spec):
        """Whether ``spec``'s parents lead to the root (not to a key no plugin made, nor
        round in a loop)."""
        seen = set()
        while spec.parent:
            if spec.parent in seen or spec.parent not in self._children:
                return False
            seen.add(spec.parent)
            spec = self._children[spec.parent]
        return True


class ResourcePlugin:
    """Base class of a resource plugin.

    ``name`` is how operators refer to it; ``resource_classes`` the classes it
    provides; ``class_metadata`` gives custom classes their ``(type, unit,
    description)`` when the sync creates them; ``traits`` the custom traits it puts on
    providers whose meaning other code relies on (the sync creates custom traits on first
    use). ``version``: change it when the plugin describes the same report differently, and
    every host is synced again.
    """

    name = ""
    version = ""
    resource_classes = ()
    traits = ()
    class_metadata = {}

    def contribute(self, report, tree):
        """Add this plugin's inventories, children and traits for ``report`` to ``tree``."""
        raise NotImplementedError
