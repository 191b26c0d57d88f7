"""Pool plugins: what a resource pool's report means as inventories of its provider.

A pool (shared storage, a routed network's IP addresses) names its plugin by ``kind``: the
built-in ``shared_storage`` (DISK_GB) and ``ip_pool`` (IPV4_ADDRESS), an entry point of
group ``placement.pool_plugins``, or a dotted path. The plugin turns the report (the
inventories the pool states, and the backend's own ``stats``, say a Ceph pool's) into the
inventories and traits of the pool's one provider, as a resource plugin does for a host.
They are loaded by the same loader as resource plugins (providers.plugins.loading).
"""

from dataclasses import dataclass, field

from .base import HostTree, InventorySpec
from .loading import POOL_ENTRY_POINT_GROUP, PluginLoader

INVENTORY_KEYS = ("total", "reserved", "min_unit", "max_unit", "step_size")


@dataclass(frozen=True)
class PoolReport:
    """What the entity behind a pool said about it (the fields of a ResourcePool)."""

    name: str
    kind: str
    inventories: dict = field(default_factory=dict)
    members: list = field(default_factory=list)
    traits: list = field(default_factory=list)
    stats: dict = field(default_factory=dict)

    @classmethod
    def of(cls, pool):
        return cls(**{name: getattr(pool, name) for name in POOL_FIELDS})


POOL_FIELDS = ("name", "kind", "inventories", "members", "traits", "stats")


class PoolPlugin:
    """Base class of a pool plugin.

    ``resource_classes``: the classes a pool of this kind may have (empty: any).
    ``contribute`` adds them to the pool's provider (``tree.root``); by default the stated
    inventories, as they are. ``version``: change it when the plugin reads the same report
    differently, and every pool of its kind is synced again.
    """

    name = ""
    version = ""
    resource_classes = ()
    class_metadata = {}

    def contribute(self, report: PoolReport, tree: HostTree):
        for name, values in report.inventories.items():
            tree.root.inventories[name] = InventorySpec(
                **{key: values[key] for key in INVENTORY_KEYS if values.get(key) is not None}
            )

    def refuses(self, resource_class):
        """Why a pool of this kind cannot have ``resource_class`` (None when it can)."""
        if self.resource_classes and resource_class not in self.resource_classes:
            return f"a {self.name} pool has {', '.join(self.resource_classes)} only"
        return None


class SharedStoragePlugin(PoolPlugin):
    """Shared disk (Ceph, NFS): DISK_GB, stated, or from the backend's ``stats``
    (``total_gb``, and optionally ``reserved_gb``) when the report states none."""

    name = "shared_storage"
    resource_classes = ("DISK_GB",)

    def contribute(self, report, tree):
        super().contribute(report, tree)
        total = report.stats.get("total_gb")
        if "DISK_GB" not in tree.root.inventories and isinstance(total, int) and total > 0:
            reserved = report.stats.get("reserved_gb")
            tree.root.inventories["DISK_GB"] = InventorySpec(
                total, reserved=reserved if isinstance(reserved, int) else None
            )


class IpPoolPlugin(PoolPlugin):
    """A routed network segment's IPv4 addresses: IPV4_ADDRESS."""

    name = "ip_pool"
    resource_classes = ("IPV4_ADDRESS",)


POOL_PLUGINS = PluginLoader(
    label="Pool plugin",
    group=POOL_ENTRY_POINT_GROUP,
    builtin={
        "shared_storage": "providers.plugins.pools:SharedStoragePlugin",
        "ip_pool": "providers.plugins.pools:IpPoolPlugin",
    },
    base=PoolPlugin,
    where="the pool's kind",
)

_loaded = {}


def pool_plugin(kind: str) -> PoolPlugin:
    """The plugin of a pool's ``kind``, loaded once per process; PluginLoadError naming the
    available kinds when it names nothing loadable."""
    if kind not in _loaded:
        _loaded[kind] = POOL_PLUGINS.load(kind)
    return _loaded[kind]


def pool_plugin_signature(plugin: PoolPlugin) -> str:
    return f"{plugin.name}@{plugin.version}" if plugin.version else plugin.name
