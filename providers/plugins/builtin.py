"""The built-in resource plugins: vcpu, memory, disk, numa, pci and compute_units."""

import re

from django.conf import settings

from .base import InventorySpec, ResourcePlugin

NUMA_ROOT_TRAIT = "HW_NUMA_ROOT"


def _numa_key(cell):
    return f"NUMA{cell['id']}"


def _per_cell(report, tree, resource_class, amount_of_cell, amount_of_host):
    """Put ``resource_class`` on each NUMA cell when numa is on and reported, else the root."""
    if tree.uses("numa") and report.numa_cells:
        for cell in report.numa_cells:
            amount = amount_of_cell(cell)
            if amount > 0:
                tree.child(_numa_key(cell)).inventories[resource_class] = InventorySpec(amount)
    elif amount_of_host > 0:
        tree.root.inventories[resource_class] = InventorySpec(amount_of_host)


class VcpuPlugin(ResourcePlugin):
    name = "vcpu"
    resource_classes = ("VCPU",)

    def contribute(self, report, tree):
        _per_cell(report, tree, "VCPU", lambda cell: len(cell.get("cpus") or []), report.vcpus)


class MemoryPlugin(ResourcePlugin):
    name = "memory"
    resource_classes = ("MEMORY_MB",)

    def contribute(self, report, tree):
        _per_cell(
            report, tree, "MEMORY_MB", lambda cell: cell.get("memory_mb", 0), report.memory_mb
        )


class DiskPlugin(ResourcePlugin):
    name = "disk"
    resource_classes = ("DISK_GB",)

    def contribute(self, report, tree):
        if report.local_gb > 0:
            tree.root.inventories["DISK_GB"] = InventorySpec(report.local_gb)


class NumaPlugin(ResourcePlugin):
    """One child provider per NUMA cell, marked ``HW_NUMA_ROOT``."""

    name = "numa"
    resource_classes = ()

    def contribute(self, report, tree):
        for cell in report.numa_cells:
            tree.child(_numa_key(cell)).traits.add(NUMA_ROOT_TRAIT)


def _trait_part(value):
    return re.sub(r"[^A-Z0-9_]", "_", str(value).upper())


class PciPlugin(ResourcePlugin):
    """One child provider per group of alike devices (class, vendor, product).

    The group's inventory counts its devices (or their ``count``: VFs of a NIC,
    vGPUs of a GPU); its traits name the vendor and product.
    """

    name = "pci"
    resource_classes = ("PCI_DEVICE", "SRIOV_NET_VF", "VGPU")

    def contribute(self, report, tree):
        groups = {}
        for device in report.pci_devices:
            group = (device["resource_class"], device["vendor_id"], device["product_id"])
            groups[group] = groups.get(group, 0) + int(device.get("count", 1))
        for (resource_class, vendor, product), total in groups.items():
            key = f"{resource_class}_{_trait_part(vendor)}_{_trait_part(product)}"
            child = tree.child(key)
            child.inventories[resource_class] = InventorySpec(total)
            child.traits.add(f"CUSTOM_PCI_VENDOR_{_trait_part(vendor)}")
            child.traits.add(f"CUSTOM_PCI_PRODUCT_{_trait_part(product)}")


class ComputeUnitsPlugin(ResourcePlugin):
    """``CUSTOM_CU``: CPU performance rather than count.

    The report's ``stats["compute_units"]`` when the host states it, else vCPUs
    times the rating of its CPU model (``PLACEMENT_CPU_MODEL_RATINGS``, falling
    back to ``PLACEMENT_DEFAULT_CPU_RATING``).
    """

    name = "compute_units"
    resource_classes = ("CUSTOM_CU",)
    class_metadata = {
        "CUSTOM_CU": ("compute", "compute unit", "CPU performance in compute units"),
    }

    def contribute(self, report, tree):
        stated = report.stats.get("compute_units")
        if stated is not None:
            total = int(stated)
        else:
            model = (report.cpu_info or {}).get("model", "")
            rating = settings.PLACEMENT_CPU_MODEL_RATINGS.get(
                model, settings.PLACEMENT_DEFAULT_CPU_RATING
            )
            total = int(report.vcpus * rating)
        if total > 0:
            tree.root.inventories["CUSTOM_CU"] = InventorySpec(total)
