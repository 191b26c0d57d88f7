"""The plugin interface and the tree of providers a host's plugins build."""

from dataclasses import dataclass, field

from ..capacity import Capacity


@dataclass(frozen=True)
class HostReport:
    """What a host said about itself (the fields of a ComputeNode's last report)."""

    hostname: str
    vcpus: int = 0
    memory_mb: int = 0
    local_gb: int = 0
    cpu_info: dict = field(default_factory=dict)
    hypervisor_type: str = ""
    stats: dict = field(default_factory=dict)
    numa_topology: dict | None = None
    pci_devices: list = field(default_factory=list)

    @classmethod
    def of(cls, node):
        return cls(
            hostname=node.hostname,
            vcpus=node.vcpus,
            memory_mb=node.memory_mb,
            local_gb=node.local_gb,
            cpu_info=node.cpu_info or {},
            hypervisor_type=node.hypervisor_type,
            stats=node.stats or {},
            numa_topology=node.numa_topology,
            pci_devices=node.pci_devices or [],
        )

    @property
    def numa_cells(self):
        return list((self.numa_topology or {}).get("cells") or [])


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


@dataclass
class ProviderSpec:
    """A provider of the host's tree: the root (key "") or a child under it."""

    key: str
    name: str
    inventories: dict = field(default_factory=dict)
    traits: set = field(default_factory=set)


class HostTree:
    """The providers a host's plugins want: a root named for the host and keyed children."""

    def __init__(self, hostname, plugin_names=()):
        self.hostname = hostname
        self.plugin_names = frozenset(plugin_names)
        self.root = ProviderSpec(key="", name=hostname)
        self._children = {}

    def uses(self, plugin_name):
        """Whether the operator enabled ``plugin_name`` (e.g. vcpu asks about numa)."""
        return plugin_name in self.plugin_names

    def child(self, key, name=None):
        """The child provider ``key`` (created on first use; named ``<host>_<key>``)."""
        if key not in self._children:
            self._children[key] = ProviderSpec(key=key, name=name or f"{self.hostname}_{key}")
        return self._children[key]

    def providers(self):
        """The root first, then the children in key order."""
        return [self.root, *(self._children[k] for k in sorted(self._children))]

    def holders(self, resource_class):
        return [p for p in self.providers() if resource_class in p.inventories]


class ResourcePlugin:
    """Base class of a resource plugin.

    ``name`` is how operators refer to it; ``resource_classes`` the classes it
    provides; ``class_metadata`` gives custom classes their ``(type, unit,
    description)`` when the sync creates them.
    """

    name = ""
    resource_classes = ()
    class_metadata = {}

    def contribute(self, report, tree):
        """Add this plugin's inventories, children and traits for ``report`` to ``tree``."""
        raise NotImplementedError

    def why_not(self, tree, resource_class, amount, used=None):
        """Why no provider of ``tree`` can give ``amount`` of ``resource_class``.

        ``used`` maps provider keys to current usage. Empty when one can; the
        reasons come from the capacity model (providers/capacity.py).
        """
        used = used or {}
        holders = tree.holders(resource_class)
        if not holders:
            return [f"{tree.hostname} has no {resource_class}"]
        reasons = []
        for spec in holders:
            capacity = spec.inventories[resource_class].capacity()
            found = capacity.shortfalls(amount, used.get(spec.key, 0))
            if not found:
                return []
            reasons.extend(f"{spec.name}: {s.describe(resource_class)}" for s in found)
        return reasons
