"""Finding the plugins an operator named: built-in names, entry points, dotted paths.

One loader (:class:`PluginLoader`) serves both kinds of plugin: resource plugins (a host's
report -> its tree, ``PLACEMENT_RESOURCE_PLUGINS``) and pool plugins (a pool's report -> its
provider, named by each pool's ``kind``).
"""

import importlib
from importlib import metadata

from django.conf import settings

from .base import ResourcePlugin

ENTRY_POINT_GROUP = "placement.resource_plugins"
POOL_ENTRY_POINT_GROUP = "placement.pool_plugins"


class PluginLoadError(Exception):
    """A plugin name that names nothing loadable."""


def _import_path(path):
    module_name, sep, attribute = path.partition(":")
    if not sep:
        module_name, _, attribute = path.rpartition(".")
    module = importlib.import_module(module_name)
    return getattr(module, attribute)


class PluginLoader:
    """Plugins of one kind: ``builtin`` names (they are not installed as a distribution, so
    they cannot be entry points of their own; an entry point of the same name wins), entry
    points of ``group`` and dotted paths, each an instance of ``base``."""

    def __init__(self, *, label, group, builtin, base, where):
        self.label = label  # "Resource plugin", "Pool plugin"
        self.group = group
        self.builtin = builtin
        self.base = base
        self.where = where  # where operators name them, for the error

    def entry_points(self):
        return {ep.name: ep for ep in metadata.entry_points(group=self.group)}

    def available(self):
        return sorted({*self.builtin, *self.entry_points()})

    def _instantiate(self, obj, name):
        plugin = obj() if isinstance(obj, type) else obj
        if not isinstance(plugin, self.base):
            raise PluginLoadError(f"{self.label} {name!r} is not a {self.base.__name__}")
        if not plugin.name:
            plugin.name = name
        return plugin

    def load(self, name, entry_points=None):
        entry_points = self.entry_points() if entry_points is None else entry_points
        try:
            if name in entry_points:
                return self._instantiate(entry_points[name].load(), name)
            if name in self.builtin:
                return self._instantiate(_import_path(self.builtin[name]), name)
            if "." in name or ":" in name:
                return self._instantiate(_import_path(name), name)
        except (ImportError, AttributeError, ValueError) as exc:
            raise PluginLoadError(f"{self.label} {name!r} cannot be loaded: {exc}") from exc
        raise PluginLoadError(
            f"Unknown {self.label.lower()} {name!r} in {self.where}; available: "
            f"{', '.join(self.available())} (or a dotted path to a {self.base.__name__})"
        )

    def load_all(self, names):
        entry_points = self.entry_points()  # scanning installed distributions is slow: once
        return [self.load(name, entry_points) for name in names]


RESOURCE_PLUGINS = PluginLoader(
    label="Resource plugin",
    group=ENTRY_POINT_GROUP,
    builtin={
        "vcpu": "providers.plugins.builtin:VcpuPlugin",
        "memory": "providers.plugins.builtin:MemoryPlugin",
        "disk": "providers.plugins.builtin:DiskPlugin",
        "numa": "providers.plugins.builtin:NumaPlugin",
        "pci": "providers.plugins.builtin:PciPlugin",
        "compute_units": "providers.plugins.builtin:ComputeUnitsPlugin",
    },
    base=ResourcePlugin,
    where="PLACEMENT_RESOURCE_PLUGINS",
)
BUILTIN = RESOURCE_PLUGINS.builtin


def available_plugins():
    """Every resource plugin name an operator may use (built-in and entry points), sorted."""
    return RESOURCE_PLUGINS.available()


def load_plugin(name, entry_points=None):
    return RESOURCE_PLUGINS.load(name, entry_points)


def load_plugins(names):
    """The plugins named, in order; raises PluginLoadError naming the available ones."""
    return RESOURCE_PLUGINS.load_all(names)


_loaded = {}


def configured_plugins():
    """The operator's plugins, loaded once per process and plugin list."""
    names = tuple(settings.PLACEMENT_RESOURCE_PLUGINS)
    if names not in _loaded:
        _loaded[names] = load_plugins(names)
    return _loaded[names]


def plugins_signature(plugins=None):
    """The plugins (the operator's by default) as stored on a synced host, each name with
    its ``version`` when it has one (``pci@2``): a change means every host is synced again."""
    plugins = configured_plugins() if plugins is None else plugins
    return ",".join(f"{p.name}@{p.version}" if p.version else p.name for p in plugins)
