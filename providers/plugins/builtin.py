"""The built-in resource plugins: vcpu, memory, disk, numa, pci and compute_units."""

import re

from django.conf import settings

from .base import InventorySpec, ResourcePlugin, UnitSpec

NUMA_ROOT_TRAIT = "HW_NUMA_ROOT"
# On a device provider whose device reports no NUMA node (it hangs under the host's root):
# what hw:pci_numa_affinity_policy=legacy asks for its device "with no NUMA affinity", as no
# query term says "under no NUMA cell".
PCI_NO_NUMA_TRAIT = "CUSTOM_PCI_NO_NUMA_AFFINITY"
SMALL_PAGE_KB = 4


def mempage_class(size_kb):
    """The resource class of a cell's pages of ``size_kb`` KiB (``CUSTOM_MEMPAGE_2048KB``)."""
    return f"CUSTOM_MEMPAGE_{size_kb}KB"


def numa_key(cell_id):
    """The key of NUMA cell ``cell_id``'s provider (named ``<host>_NUMA<id>``)."""
    return f"NUMA{cell_id}"


def device_key(address):
    """The key of the physical device at PCI ``address`` (named ``<host>_pci_0000_81_00_0``,
    as Nova names a device's provider)."""
    return "pci_" + re.sub(r"[^0-9a-z]", "_", address.lower())


def _numa_cells(report, tree):
    """The reported cells when the numa plugin is on (else none: the host is one piece)."""
    return report.numa_cells if tree.uses("numa") else []


def _per_cell(report, tree, resource_class, amount_of_cell, amount_of_host, **spec):
    """Put ``resource_class`` on each NUMA cell when numa is on and reported, else the root."""
    cells = _numa_cells(report, tree)
    if cells:
        for cell in cells:
            amount = amount_of_cell(cell)
            if amount > 0:
                child = tree.child(numa_key(cell["id"]), source="numa_topology")
                child.inventories[resource_class] = InventorySpec(amount, **spec)
    elif amount_of_host > 0:
        tree.root.inventories[resource_class] = InventorySpec(amount_of_host, **spec)


class VcpuPlugin(ResourcePlugin):
    """VCPU (shared CPUs) and PCPU (dedicated CPUs), as Nova's ``cpu_shared_set`` and
    ``cpu_dedicated_set`` divide a host: PCPU is the dedicated set; VCPU the shared set, or,
    when neither is given, every CPU (and none when only a dedicated set is). With NUMA on,
    each on the cells whose ``cpus`` hold them. PCPU is never overcommitted (ratio 1.0)."""

    name = "vcpu"
    # 2: the hyperthreading trait from cpu_info's topology: hosts synced by 1 are synced again.
    version = "2"
    resource_classes = ("VCPU", "PCPU")

    def contribute(self, report, tree):
        dedicated = set(report.cpu_dedicated_set or ())
        shared = None if report.cpu_shared_set is None else set(report.cpu_shared_set)

        def shared_of(cpus):
            if shared is not None:
                return len(cpus & shared)
            return 0 if dedicated else len(cpus)

        # SMT (cpu_info's topology with more than one thread a core): the trait Nova's
        # hw:cpu_thread_policy asks for or forbids.
        if int(((report.cpu_info or {}).get("topology") or {}).get("threads") or 1) > 1:
            tree.root.traits.add("HW_CPU_HYPERTHREADING")
        host_vcpus = len(shared) if shared is not None else (0 if dedicated else report.vcpus)
        _per_cell(
            report, tree, "VCPU", lambda cell: shared_of(set(cell.get("cpus") or ())), host_vcpus
        )
        _per_cell(
            report,
            tree,
            "PCPU",
            lambda cell: len(dedicated & set(cell.get("cpus") or ())),
            len(dedicated),
            allocation_ratio=1.0,
        )


def small_page_memory_mb(cell):
    """A cell's MEMORY_MB: its memory in small pages (the 4 KiB pool when it lists one, else
    its memory less its huge pages), as Nova fits an instance without a page size."""
    pools = cell.get("mempages") or ()
    small = [pool for pool in pools if pool["size_kb"] == SMALL_PAGE_KB]
    if small:
        return small[0]["total"] * SMALL_PAGE_KB // 1024
    huge_kb = sum(pool["size_kb"] * pool["total"] for pool in pools)
    return max(0, cell.get("memory_mb", 0) - huge_kb // 1024)


class MemoryPlugin(ResourcePlugin):
    """MEMORY_MB: on the root, or with NUMA on, each cell's full small-page memory (the
    host's reservation is held for the host as a whole: scheduling.host_limits), and each
    cell's huge pages in pages of their size."""

    name = "memory"
    # 2: cells no longer carry the host's reservation, and carry their huge pages: hosts
    # synced by 1 are synced again.
    version = "2"
    resource_classes = ("MEMORY_MB",)

    def contribute(self, report, tree):
        _per_cell(report, tree, "MEMORY_MB", small_page_memory_mb, report.memory_mb)
        # Huge pages: one class per page size, counted in pages, on each cell that has them
        # (a flavor's hw:mem_page_size asks its memory in those pages).
        for cell in _numa_cells(report, tree):
            for pool in cell.get("mempages") or ():
                if pool["size_kb"] > SMALL_PAGE_KB and pool["total"] > 0:
                    child = tree.child(numa_key(cell["id"]), source="numa_topology")
                    child.inventories[mempage_class(pool["size_kb"])] = InventorySpec(
                        pool["total"], reserved=0, allocation_ratio=1.0
                    )


class DiskPlugin(ResourcePlugin):
    """DISK_GB of the host's local disk; none on a host whose disks are in a shared-storage
    pool (``disk_pool``): the pool's provider has them, and counting them here too would
    count them twice."""

    name = "disk"
    resource_classes = ("DISK_GB",)

    def contribute(self, report, tree):
        if report.local_gb > 0 and not report.disk_pool:
            tree.root.inventories["DISK_GB"] = InventorySpec(report.local_gb)


class NumaPlugin(ResourcePlugin):
    """One child provider per NUMA cell, marked ``HW_NUMA_ROOT``."""

    name = "numa"
    resource_classes = ()

    def contribute(self, report, tree):
        for cell in report.numa_cells:
            tree.child(numa_key(cell["id"]), source="numa_topology").traits.add(NUMA_ROOT_TRAIT)


def _trait_part(value):
    return re.sub(r"[^A-Z0-9_]", "_", str(value).upper())


def device_units(device):
    """The assignable units of a reported device: its VFs (``vfs``), its vGPU slots (named
    ``instances``, or ``count`` slots ``<mdev_type>-<n>`` of its ``mdev_type``), else the
    device itself (``count`` 1) or ``count`` slots ``<address>#<n>`` of it."""
    address = device["address"].lower()
    if device.get("vfs"):
        return tuple(UnitSpec(vf.lower(), address) for vf in device["vfs"])
    count = int(device.get("count", 1))
    mdev_type = device.get("mdev_type") or ""
    if mdev_type:
        names = device.get("instances") or [f"{mdev_type}-{n}" for n in range(count)]
        return tuple(UnitSpec(name, address, mdev_type) for name in names)
    if count == 1:
        return (UnitSpec(address),)
    return tuple(UnitSpec(f"{address}#{n}", address) for n in range(count))


class PciPlugin(ResourcePlugin):
    """One provider per physical device (a GPU, a NIC's PF, an FPGA card), named from its
    address, holding what that device has: its ``count`` (VFs of a PF, vGPUs of a GPU; 1 by
    default) of its ``resource_class``, never more in one allocation than it has. A device
    on a ``numa_node`` the report has a cell for hangs under that cell's provider when the
    numa plugin is on (so a request can ask for both in one subtree), else under the root.
    Its traits name the vendor and product, and a device that reports no ``numa_node`` has
    :data:`PCI_NO_NUMA_TRAIT` (Nova's "no NUMA affinity information", which its ``legacy``
    policy takes from any cell). Its units (:func:`device_units`) are what the claims assign.
    """

    name = "pci"
    # 2: one provider per device (1 pooled alike devices): hosts synced by 1 are synced again.
    # 3: the devices' assignable units.
    # 4: PCI_NO_NUMA_TRAIT on the devices that report no NUMA node.
    version = "4"
    resource_classes = ("PCI_DEVICE", "SRIOV_NET_VF", "VGPU")
    traits = (PCI_NO_NUMA_TRAIT,)

    def contribute(self, report, tree):
        cells = {cell["id"] for cell in _numa_cells(report, tree)}
        for index, device in enumerate(report.pci_devices):
            numa_node = device.get("numa_node")
            child = tree.child(
                device_key(device["address"]),
                parent=numa_key(numa_node) if numa_node in cells else "",
                source=f"pci_devices[{index}]",
            )
            units = device_units(device)
            child.inventories[device["resource_class"]] = InventorySpec(len(units))
            child.units[device["resource_class"]] = units
            child.traits.add(f"CUSTOM_PCI_VENDOR_{_trait_part(device['vendor_id'])}")
            child.traits.add(f"CUSTOM_PCI_PRODUCT_{_trait_part(device['product_id'])}")
            if numa_node is None:
                child.traits.add(PCI_NO_NUMA_TRAIT)


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
