"""Resource plugins: what a host's report means as providers, inventories and traits.

A plugin names the resource classes it provides and, from a host's report,
adds inventories (and, where it needs them, child providers and traits) to a
:class:`HostTree`. The sync (providers.services.compute_nodes) writes the tree
through the same services as the Placement API. Operators choose plugins in
``PLACEMENT_RESOURCE_PLUGINS`` by entry point name (group
``placement.resource_plugins``; the built-in ones are known by name too) or by
dotted path (``package.module:Class`` or ``package.module.Class``).
"""

from .base import HostReport, HostTree, InventorySpec, ProviderSpec, ResourcePlugin
from .loading import (
    ENTRY_POINT_GROUP,
    POOL_ENTRY_POINT_GROUP,
    PluginLoadError,
    available_plugins,
    configured_plugins,
    load_plugins,
    plugins_signature,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "POOL_ENTRY_POINT_GROUP",
    "HostReport",
    "HostTree",
    "InventorySpec",
    "PluginLoadError",
    "ProviderSpec",
    "ResourcePlugin",
    "available_plugins",
    "configured_plugins",
    "load_plugins",
    "plugins_signature",
]
