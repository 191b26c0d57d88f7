"""A resource plugin for tests, loaded by dotted path as an operator could name one."""

from providers.plugins import InventorySpec, ResourcePlugin
from providers.plugins.pools import PoolPlugin


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


class PooledPciPlugin(ResourcePlugin):
    """The pci plugin as it was: one child per group of alike devices, their counts pooled."""

    name = "pci_pooled"

    def contribute(self, report, tree):
        groups = {}
        for device in report.pci_devices:
            group = (device["resource_class"], device["vendor_id"], device["product_id"])
            groups[group] = groups.get(group, 0) + int(device.get("count", 1))
        for (resource_class, vendor, product), total in groups.items():
            child = tree.child(f"{resource_class}_{vendor.upper()}_{product.upper()}")
            child.inventories[resource_class] = InventorySpec(total)
            child.traits.add(f"CUSTOM_PCI_VENDOR_{vendor.upper()}")
            child.traits.add(f"CUSTOM_PCI_PRODUCT_{product.upper()}")


class LongNamePlugin(ResourcePlugin):
    """A child named from ``stats["child"]``: a name the database cannot hold, if long."""

    name = "long_name"

    def contribute(self, report, tree):
        name = report.stats.get("child")
        if name:
            child = tree.child(name)
            child.source = "stats"  # the report field it comes from
            child.inventories["DISK_GB"] = InventorySpec(1)


class CephPoolPlugin(PoolPlugin):
    """A pool plugin reading a Ceph pool's own stats: DISK_GB from ``max_avail`` bytes."""

    resource_classes = ("DISK_GB",)

    def contribute(self, report, tree):
        total = report.stats["max_avail"] // 1024**3
        tree.root.inventories["DISK_GB"] = InventorySpec(total)


class BrokenPoolPlugin(PoolPlugin):
    def contribute(self, report, tree):
        if report.stats.get("broken"):
            raise RuntimeError("backend unreachable")
        super().contribute(report, tree)


class TraitedLongNamePlugin(LongNamePlugin):
    """:class:`LongNamePlugin` whose hosts also carry a custom trait, created on first use."""

    name = "traited_long_name"

    def contribute(self, report, tree):
        tree.root.traits.add("CUSTOM_SCRATCH_TRAIT")
        super().contribute(report, tree)
