"""Serializers of /api/compute-nodes/ and /api/resource-classes/."""

from rest_framework import serializers

from placementsite.core.rest.serializers import StrictFieldsMixin, StrictSerializer

from ..host_reports import REPORT_FIELDS, resource_class_problem
from ..models import MAX_INT, ComputeNode, ResourceClass
from ..selectors.compute_nodes import is_stale
from ..services.compute_nodes import report_tree_problems

PCI_ADDRESS_RE = r"^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$"
PCI_ID_RE = r"^[0-9a-fA-F]{4}$"
RESOURCE_CLASS_RE = r"^[A-Z0-9_]{1,255}$"


def _amount(**kwargs):
    return serializers.IntegerField(min_value=0, max_value=MAX_INT, **kwargs)


class NumaCellSerializer(StrictSerializer):
    id = _amount()
    cpus = serializers.ListField(child=_amount(), allow_empty=True)
    memory_mb = _amount()

    def validate_cpus(self, cpus):
        if len(set(cpus)) != len(cpus):
            raise serializers.ValidationError("A CPU is listed twice.")
        return cpus


class NumaTopologySerializer(StrictSerializer):
    cells = NumaCellSerializer(many=True)

    def validate_cells(self, cells):
        ids = [cell["id"] for cell in cells]
        if len(set(ids)) != len(ids):
            raise serializers.ValidationError("Two cells have the same id.")
        return cells


class PciDeviceSerializer(StrictSerializer):
    address = serializers.RegexField(PCI_ADDRESS_RE)
    vendor_id = serializers.RegexField(PCI_ID_RE)
    product_id = serializers.RegexField(PCI_ID_RE)
    resource_class = serializers.RegexField(RESOURCE_CLASS_RE)
    count = serializers.IntegerField(min_value=1, max_value=MAX_INT, default=1)
    numa_node = serializers.IntegerField(
        min_value=0, max_value=MAX_INT, allow_null=True, default=None
    )

    def validate_resource_class(self, name):
        problem = resource_class_problem(name)
        if problem:
            raise serializers.ValidationError(problem)
        return name


def _cpu_set(**kwargs):
    return serializers.ListField(
        child=_amount(), allow_empty=True, allow_null=True, required=False, default=None, **kwargs
    )


class HostReportSerializer(StrictSerializer):
    """A host's report: what ``PUT /api/compute-nodes/{hostname}/`` takes."""

    vcpus = _amount()
    memory_mb = _amount()
    local_gb = _amount()
    cpu_info = serializers.DictField(required=False, default=dict)
    hypervisor_type = serializers.CharField(
        max_length=64, required=False, allow_blank=True, default=""
    )
    stats = serializers.DictField(required=False, default=dict)
    numa_topology = NumaTopologySerializer(required=False, allow_null=True, default=None)
    pci_devices = PciDeviceSerializer(many=True, required=False, default=list)
    cpu_dedicated_set = _cpu_set(help_text="host CPU ids for dedicated (pinned) guest CPUs: PCPU")
    cpu_shared_set = _cpu_set(help_text="host CPU ids for shared guest CPUs: VCPU")

    def validate_pci_devices(self, devices):
        addresses = [d["address"].lower() for d in devices]
        if len(set(addresses)) != len(addresses):
            raise serializers.ValidationError("A PCI address is listed twice.")
        return devices

    def validate(self, attrs):
        errors = {**_cpu_set_errors(attrs), **_numa_node_errors(attrs)}
        if errors:
            raise serializers.ValidationError(errors)
        problems = report_tree_problems(hostname=self.context["hostname"], report=attrs)
        if problems:
            raise serializers.ValidationError({where: [why] for where, why in problems.items()})
        return attrs


def _cpu_set_errors(attrs):
    """The CPU sets: no CPU twice, in both, or outside the host (its cells' ``cpus`` when it
    reports NUMA cells, else as many CPUs as it has)."""
    dedicated, shared = attrs.get("cpu_dedicated_set"), attrs.get("cpu_shared_set")
    errors = {}
    cells = (attrs.get("numa_topology") or {}).get("cells") or []
    known = {cpu for cell in cells for cpu in cell["cpus"]}
    for name, cpus in (("cpu_dedicated_set", dedicated), ("cpu_shared_set", shared)):
        if cpus is None:
            continue
        if len(set(cpus)) != len(cpus):
            errors[name] = ["A CPU is listed twice."]
        elif cells and not set(cpus) <= known:
            outside = sorted(set(cpus) - known)
            errors[name] = [f"CPUs {outside} are in no NUMA cell's cpus."]
    both = set(dedicated or ()) & set(shared or ())
    if both and "cpu_shared_set" not in errors:
        errors["cpu_shared_set"] = [f"CPUs {sorted(both)} are also in cpu_dedicated_set."]
    if not cells and len(set(dedicated or ()) | set(shared or ())) > attrs["vcpus"]:
        errors.setdefault("cpu_dedicated_set", []).append(
            f"cpu_dedicated_set and cpu_shared_set name more CPUs than vcpus ({attrs['vcpus']})."
        )
    return errors


def _numa_node_errors(attrs):
    """A device's ``numa_node`` names one of the reported cells, when the host reports any."""
    cells = {cell["id"] for cell in (attrs.get("numa_topology") or {}).get("cells") or []}
    if not cells:
        return {}
    return {
        f"pci_devices[{index}].numa_node": [f"No NUMA cell {device['numa_node']} is reported."]
        for index, device in enumerate(attrs.get("pci_devices") or [])
        if device.get("numa_node") is not None and device["numa_node"] not in cells
    }


class ComputeNodeSerializer(StrictFieldsMixin, serializers.ModelSerializer):
    """A host as operators and the dashboard see it: report, sync state, flags. Only
    ``enabled``, ``disabled_reason`` and ``forced_down`` (admins) are written (PATCH); any
    other field is a 400."""

    provider = serializers.UUIDField(source="provider.uuid", read_only=True, allow_null=True)
    stale = serializers.SerializerMethodField()

    class Meta:
        model = ComputeNode
        fields = [
            "hostname",
            "provider",
            "enabled",
            "disabled_reason",
            "forced_down",
            "stale",
            *REPORT_FIELDS,
            "reported_at",
            "synced_at",
            "sync_status",
            "sync_error",
            "plugin_errors",
            "sync_attempts",
            "next_sync_at",
        ]
        read_only_fields = [
            f for f in fields if f not in ("enabled", "disabled_reason", "forced_down")
        ]

    def get_stale(self, node) -> bool:
        return is_stale(node.reported_at)


class ResourceClassSerializer(serializers.ModelSerializer):
    type = serializers.ChoiceField(source="kind", choices=ResourceClass.Kind.choices)
    # Declared, so that the schema knows the model property's type.
    is_custom = serializers.BooleanField(read_only=True)

    class Meta:
        model = ResourceClass
        fields = ["name", "type", "unit", "description", "is_custom"]
        read_only_fields = ["name", "is_custom"]
