"""Serializers of /api/compute-nodes/ and /api/resource-classes/."""

from django.utils import timezone
from rest_framework import serializers

from ..models import MAX_INT, ComputeNode, ResourceClass
from ..selectors.compute_nodes import stale_after

HOSTNAME_RE = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,149}$"
PCI_ADDRESS_RE = r"^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$"
PCI_ID_RE = r"^[0-9a-fA-F]{4}$"
RESOURCE_CLASS_RE = r"^[A-Z0-9_]{1,255}$"


class StrictSerializer(serializers.Serializer):
    """Refuses fields it does not know, naming them (a typo must not vanish silently)."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({name: ["Unknown field."] for name in unknown})
        return super().to_internal_value(data)


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
    numa_node = serializers.IntegerField(min_value=0, allow_null=True, default=None)


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

    def validate_pci_devices(self, devices):
        addresses = [d["address"].lower() for d in devices]
        if len(set(addresses)) != len(addresses):
            raise serializers.ValidationError("A PCI address is listed twice.")
        return devices


class ComputeNodeSerializer(serializers.ModelSerializer):
    """A host as operators and the dashboard see it: report, sync state, flags."""

    provider = serializers.UUIDField(source="provider.uuid", read_only=True, allow_null=True)
    stale = serializers.SerializerMethodField()

    class Meta:
        model = ComputeNode
        fields = [
            "hostname",
            "provider",
            "enabled",
            "stale",
            "vcpus",
            "memory_mb",
            "local_gb",
            "cpu_info",
            "hypervisor_type",
            "stats",
            "numa_topology",
            "pci_devices",
            "reported_at",
            "synced_at",
            "sync_status",
            "sync_error",
            "plugin_errors",
        ]
        read_only_fields = [f for f in fields if f != "enabled"]

    def get_stale(self, node) -> bool:
        return node.reported_at is None or node.reported_at < timezone.now() - stale_after()


class ResourceClassSerializer(serializers.ModelSerializer):
    type = serializers.ChoiceField(source="kind", choices=ResourceClass.Kind.choices)
    # Declared, so that the schema knows the model property's type.
    is_custom = serializers.BooleanField(read_only=True)

    class Meta:
        model = ResourceClass
        fields = ["name", "type", "unit", "description", "is_custom"]
        read_only_fields = ["name", "is_custom"]
