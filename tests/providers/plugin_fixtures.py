"""A resource plugin for tests, loaded by dotted path as an operator could name one."""

from providers.plugins import InventorySpec, ResourcePlugin


class ExplodingPlugin(ResourcePlugin):
    """Adds something, then fails: the sync must drop its half-made contribution."""

    name = "exploding"

    def contribute(self, report, tree):
        tree.root.inventories["DISK_GB"] = InventorySpec(1)
        raise RuntimeError("disk controller on fire")


class BadChildPlugin(ResourcePlugin):
    """Gives one child an inventory no provider may have (reserved above total)."""

    name = "bad_child"

    def contribute(self, report, tree):
        tree.child("broken").inventories["DISK_GB"] = InventorySpec(10, reserved=20)
        tree.child("fine").inventories["DISK_GB"] = InventorySpec(10)
