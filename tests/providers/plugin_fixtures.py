"""A resource plugin for tests, loaded by dotted path as an operator could name one."""

from providers.plugins import InventorySpec, ResourcePlugin


class ExplodingPlugin(ResourcePlugin):
    """Adds something, then fails: the sync must drop its half-made contribution."""

    name = "exploding"

    def contribute(self, report, tree):
        tree.root.inventories["DISK_GB"] = InventorySpec(1)
        raise RuntimeError("disk controller on fire")
