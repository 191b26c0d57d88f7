"""Finding the plugins an operator named: built-in names, entry points, dotted paths."""

import importlib
from importlib import metadata

from django.conf import settings

from .base import ResourcePlugin

ENTRY_POINT_GROUP = "placement.resource_plugins"

# The plugins shipped with the service, by name (they are not installed as a distribution,
# so they cannot be entry points of their own); an entry point of the same name wins.
BUILTIN = {
    "vcpu": "providers.plugins.builtin:VcpuPlugin",
    "memory": "providers.plugins.builtin:MemoryPlugin",
    "disk": "providers.plugins.builtin:DiskPlugin",
    "numa": "providers.plugins.builtin:NumaPlugin",
    "pci": "providers.plugins.builtin:PciPlugin",
    "compute_units": "providers.plugins.builtin:ComputeUnitsPlugin",
}


class PluginLoadError(Exception):
    """A plugin name that names nothing loadable."""


def _entry_points():
    return {ep.name: ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)}


def available_plugins():
    """Every plugin name an operator may use (built-in and from entry points), sorted."""
    return sorted({*BUILTIN, *_entry_points()})


def _import_path(path):
    module_name, sep, attribute = path.partition(":")
    if not sep:
        module_name, _, attribute = path.rpartition(".")
    module = importlib.import_module(module_name)
    return getattr(module, attribute)


def _instantiate(obj, name):
    plugin = obj() if isinstance(obj, type) else obj
    if not isinstance(plugin, ResourcePlugin):
        raise PluginLoadError(f"Resource plugin {name!r} is not a ResourcePlugin")
    if not plugin.name:
        plugin.name = name
    return plugin


def load_plugin(name, entry_points=None):
    entry_points = _entry_points() if entry_points is None else entry_points
    try:
        if name in entry_points:
            return _instantiate(entry_points[name].load(), name)
        if name in BUILTIN:
            return _instantiate(_import_path(BUILTIN[name]), name)
        if "." in name or ":" in name:
            return _instantiate(_import_path(name), name)
    except (ImportError, AttributeError, ValueError) as exc:
        raise PluginLoadError(f"Resource plugin {name!r} cannot be loaded: {exc}") from exc
    raise PluginLoadError(
        f"Unknown resource plugin {name!r} in PLACEMENT_RESOURCE_PLUGINS; available: "
        f"{', '.join(available_plugins())} (or a dotted path to a ResourcePlugin)"
    )


def load_plugins(names):
    """The plugins named, in order; raises PluginLoadError naming the available ones."""
    entry_points = _entry_points()  # scanning installed distributions is slow: once
    return [load_plugin(name, entry_points) for name in names]


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
