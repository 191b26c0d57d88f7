"""Keep the standard resource classes and traits in the database.

Run after every ``migrate``: an empty database gets every name from
os-resource-classes and os-traits, and after upgrading those packages the
new names are added. Nothing is ever removed (it may be in use). The standard
classes also get their type, unit and description where those are still blank.
"""

import os_resource_classes
import os_traits

# name -> (type, unit, description) of the standard classes.
STANDARD_CLASS_METADATA = {
    "VCPU": ("compute", "vCPU", "Virtual CPUs, shared (overcommittable) host CPU time"),
    "PCPU": ("compute", "pCPU", "Dedicated host CPUs pinned to one guest"),
    "MEMORY_MB": ("memory", "MB", "Guest memory in megabytes"),
    "DISK_GB": ("storage", "GB", "Local disk in gigabytes"),
    "PCI_DEVICE": ("accelerator", "device", "A whole PCI device passed through"),
    "SRIOV_NET_VF": ("network", "VF", "An SR-IOV virtual function of a NIC"),
    "NUMA_SOCKET": ("compute", "socket", "A NUMA socket"),
    "NUMA_CORE": ("compute", "core", "A NUMA core"),
    "NUMA_THREAD": ("compute", "thread", "A NUMA thread"),
    "NUMA_MEMORY_MB": ("memory", "MB", "Memory of one NUMA node in megabytes"),
    "IPV4_ADDRESS": ("network", "address", "An IPv4 address"),
    "VGPU": ("accelerator", "vGPU", "A virtual GPU (mediated device)"),
    "VGPU_DISPLAY_HEAD": ("accelerator", "display head", "A display head of a vGPU"),
    "NET_BW_EGR_KILOBIT_PER_SEC": ("network", "kbit/s", "Egress network bandwidth"),
    "NET_BW_IGR_KILOBIT_PER_SEC": ("network", "kbit/s", "Ingress network bandwidth"),
    "MEM_ENCRYPTION_CONTEXT": ("memory", "context", "A memory encryption context (AMD SEV)"),
    "FPGA": ("accelerator", "FPGA", "A field-programmable gate array"),
    "PGPU": ("accelerator", "pGPU", "A physical GPU"),
    "NET_PACKET_RATE_KILOPACKET_PER_SEC": ("network", "kpps", "Network packet rate"),
    "NET_PACKET_RATE_EGR_KILOPACKET_PER_SEC": ("network", "kpps", "Egress packet rate"),
    "NET_PACKET_RATE_IGR_KILOPACKET_PER_SEC": ("network", "kpps", "Ingress packet rate"),
}


def sync_standard_names(using="default", **_kwargs):
    from .models import ResourceClass, Trait

    _insert_missing(ResourceClass, list(os_resource_classes.STANDARDS), using)
    _insert_missing(Trait, sorted(os_traits.get_traits()), using)
    _fill_class_metadata(ResourceClass, using)


def _insert_missing(model, names, using):
    existing = set(model.objects.using(using).filter(name__in=names).values_list("name", flat=True))
    missing = [model(name=name) for name in names if name not in existing]
    # bulk_create keeps the packages' order in the ids, which lists follow.
    model.objects.using(using).bulk_create(missing, batch_size=500, ignore_conflicts=True)


def _fill_class_metadata(model, using):
    """Seed type/unit/description of standard classes that have none yet."""
    blank = model.objects.using(using).filter(name__in=list(STANDARD_CLASS_METADATA), unit="")
    for rc in blank:
        rc.kind, rc.unit, rc.description = STANDARD_CLASS_METADATA[rc.name]
        rc.save(update_fields=["kind", "unit", "description"])
