"""Serializers of /api/compute-nodes/ and /api/resource-classes/."""

from rest_framework import serializers

from placementsite.core.rest.serializers import StrictFieldsMixin, StrictSerializer

from ..host_reports import (
    HOSTNAME_PATTERN,
    REPORT_FIELDS,
    resource_class_problem,
    trait_problem,
)
from ..models import MAX_INT, ComputeNode, ResourceClass, ResourcePool
from ..pool_reports import (
    inventory_problem,
    members_problem,
    pool_class_problem,
    pool_kind_problem,
)
from ..selectors.compute_nodes import is_stale
from ..selectors.resource_pools import pool_is_stale, pool_usage
from ..services.compute_nodes import report_tree_problems

PCI_ADDRESS_RE = r"^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$"
PCI_ID_RE = r"^[0-9a-fA-F]{4}$"
RESOURCE_CLASS_RE = r"^[A-Z0-9_]{1,255}$"
MDEV_TYPE_RE = r"^[A-Za-z0-9_.:-]+$"
SLOT_ID_RE = r"^[A-Za-z0-9_.:/-]+$"
# Most units one device may have (a unit is a row: a report cannot ask for millions).
MAX_UNITS = 4096


def _amount(**kwargs):
    return serializers.IntegerField(min_value=0, max_value=MAX_INT, **kwargs)


class MempageSerializer(StrictSerializer):
    """One page pool of a cell, as Nova's host NUMA cell reports it (``size_kb`` 4 is the
    small pages; larger sizes are huge pages)."""

    size_kb = serializers.IntegerField(min_value=4, max_value=MAX_INT)
    total = _amount()


class NumaCellSerializer(StrictSerializer):
    id = _amount()
    cpus = serializers.ListField(child=_amount(), allow_empty=True)
    memory_mb = _amount()
    mempages = MempageSerializer(many=True, required=False)

    def validate_mempages(self, pages):
        sizes = [page["size_kb"] for page in pages]
        if len(set(sizes)) != len(sizes):
            raise serializers.ValidationError("Two page pools have the same size_kb.")
        return pages

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
    count = serializers.IntegerField(min_value=1, max_value=MAX_INT, required=False)
    numa_node = serializers.IntegerField(
        min_value=0, max_value=MAX_INT, allow_null=True, default=None
    )
    # The device's assignable units (see providers.plugins.builtin.device_units): a PF's
    # VFs, a GPU's vGPU slots (``mdev_type`` with ``count``, or named ``instances``).
    vfs = serializers.ListField(
        child=serializers.RegexField(PCI_ADDRESS_RE), required=False, max_length=MAX_UNITS
    )
    mdev_type = serializers.RegexField(MDEV_TYPE_RE, max_length=100, required=False)
    instances = serializers.ListField(
        child=serializers.RegexField(SLOT_ID_RE, max_length=200),
        required=False,
        max_length=MAX_UNITS,
    )

    def validate_resource_class(self, name):
        problem = resource_class_problem(name)
        if problem:
            raise serializers.ValidationError(problem)
        return name

    def validate_vfs(self, vfs):
        return _unique_units(vfs, "A VF address is listed twice.", lower=True)

    def validate_instances(self, instances):
        return _unique_units(instances, "An instance is listed twice.")

    def validate(self, attrs):
        """The units and ``count`` agree: a device has as many units as it lists."""
        listed = attrs.get("vfs", attrs.get("instances"))
        if "vfs" in attrs and ("instances" in attrs or "mdev_type" in attrs):
            raise serializers.ValidationError(
                {"vfs": ["A device lists VFs or vGPU slots (mdev_type, instances), not both."]}
            )
        if "instances" in attrs and "mdev_type" not in attrs:
            raise serializers.ValidationError({"instances": ["instances need an mdev_type."]})
        if listed is not None:
            if not listed:
                field = "vfs" if "vfs" in attrs else "instances"
                raise serializers.ValidationError({field: ["At least one unit."]})
            if attrs.get("count", len(listed)) != len(listed):
                raise serializers.ValidationError(
                    {"count": [f"count is {attrs['count']} but {len(listed)} units are listed."]}
                )
            attrs["count"] = len(listed)
        if "vfs" in attrs and attrs["address"].lower() in attrs["vfs"]:
            raise serializers.ValidationError({"vfs": ["A VF has the PF's own address."]})
        if attrs.get("count", 1) > MAX_UNITS:
            raise serializers.ValidationError({"count": [f"At most {MAX_UNITS} units."]})
        attrs.setdefault("count", 1)
        return attrs


def _unique_units(values, message, lower=False):
    seen = [v.lower() for v in values] if lower else list(values)
    if len(set(seen)) != len(seen):
        raise serializers.ValidationError(message)
    return seen


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
    disk_pool = serializers.RegexField(
        HOSTNAME_PATTERN,
        max_length=150,
        required=False,
        allow_null=True,
        allow_blank=True,
        default="",
        help_text="the shared-storage pool the host's disks are on: no local DISK_GB then",
    )

    def validate_disk_pool(self, name):
        return name or ""

    def validate_pci_devices(self, devices):
        addresses = [a.lower() for d in devices for a in (d["address"], *d.get("vfs", ()))]
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
    for name, cpus in (("cpu_dedicated_set", dedicated), ("cpu_shared_set", shared)):
        error = _cpu_set_error(cpus, cells)
        if error:
            errors[name] = [error]
    both = set(dedicated or ()) & set(shared or ())
    if both and "cpu_shared_set" not in errors:
        errors["cpu_shared_set"] = [f"CPUs {sorted(both)} are also in cpu_dedicated_set."]
    if not cells and len(set(dedicated or ()) | set(shared or ())) > attrs["vcpus"]:
        errors.setdefault("cpu_dedicated_set", []).append(
            f"cpu_dedicated_set and cpu_shared_set name more CPUs than vcpus ({attrs['vcpus']})."
        )
    return errors


def _cpu_set_error(cpus, cells):
    """What is wrong with one CPU set on its own: a CPU listed twice, or CPUs in none of the
    reported NUMA cells (when the host reports cells); None when nothing is (or no set)."""
    if cpus is None:
        return None
    if len(set(cpus)) != len(cpus):
        return "A CPU is listed twice."
    known = {cpu for cell in cells for cpu in cell["cpus"]}
    if cells and not set(cpus) <= known:
        return f"CPUs {sorted(set(cpus) - known)} are in no NUMA cell's cpus."
    return None


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
        return is_stale(reported_at=node.reported_at)


class ResourceClassSerializer(serializers.ModelSerializer):
    type = serializers.ChoiceField(source="kind", choices=ResourceClass.Kind.choices)
    # Declared, so that the schema knows the model property's type.
    is_custom = serializers.BooleanField(read_only=True)

    class Meta:
        model = ResourceClass
        fields = ["name", "type", "unit", "description", "is_custom"]
        read_only_fields = ["name", "is_custom"]


class PoolInventorySerializer(StrictSerializer):
    total = serializers.IntegerField(min_value=1, max_value=MAX_INT)
    reserved = serializers.IntegerField(min_value=0, max_value=MAX_INT, required=False)
    min_unit = serializers.IntegerField(min_value=1, max_value=MAX_INT, required=False)
    max_unit = serializers.IntegerField(min_value=1, max_value=MAX_INT, required=False)
    step_size = serializers.IntegerField(min_value=1, max_value=MAX_INT, required=False)


# A pool's members are resolved on every sync: a bounded list keeps that one read.
MAX_POOL_MEMBERS = 10000


class PoolReportSerializer(StrictSerializer):
    """A pool's report: what ``PUT /api/resource-pools/{name}/`` takes."""

    kind = serializers.CharField(
        max_length=255, help_text="shared_storage, ip_pool, or the name of a pool plugin"
    )
    inventories = serializers.DictField(child=PoolInventorySerializer(), required=False)
    members = serializers.ListField(
        child=serializers.CharField(max_length=255),
        required=False,
        default=list,
        max_length=MAX_POOL_MEMBERS,
        help_text="host names, and aggregates (uuids or names) whose hosts can use the pool",
    )
    traits = serializers.ListField(
        child=serializers.CharField(max_length=255), required=False, default=list
    )
    stats = serializers.DictField(
        required=False, default=dict, help_text="the backend's own report, for its plugin"
    )

    def validate_kind(self, kind):
        problem = pool_kind_problem(kind)
        if problem:
            raise serializers.ValidationError(problem)
        return kind

    def validate_members(self, members):
        problem = members_problem(members)
        if problem:
            raise serializers.ValidationError(problem)
        return list(dict.fromkeys(members))

    def validate_traits(self, traits):
        for name in traits:
            problem = trait_problem(name)
            if problem:
                raise serializers.ValidationError(problem)
        return sorted(set(traits))

    def validate(self, attrs):
        inventories = attrs.setdefault("inventories", {})
        errors = {}
        for name, values in inventories.items():
            problem = (
                resource_class_problem(name)
                or pool_class_problem(attrs["kind"], name)
                or inventory_problem(values)
            )
            if problem:
                errors[f"inventories.{name}"] = [problem]
        if errors:
            raise serializers.ValidationError(errors)
        return attrs


class ResourcePoolSerializer(StrictFieldsMixin, serializers.ModelSerializer):
    """A pool as operators and the dashboard see it: report, provider, aggregate, sync
    state, staleness and usage. Only ``enabled`` and ``disabled_reason`` are written
    (PATCH); any other field is a 400."""

    provider = serializers.UUIDField(source="provider.uuid", read_only=True, allow_null=True)
    aggregate = serializers.UUIDField(source="aggregate_uuid", read_only=True)
    stale = serializers.SerializerMethodField()
    usage = serializers.SerializerMethodField()

    class Meta:
        model = ResourcePool
        fields = [
            "name",
            "kind",
            "provider",
            "aggregate",
            "enabled",
            "disabled_reason",
            "stale",
            "inventories",
            "members",
            "traits",
            "stats",
            "usage",
            "reported_at",
            "synced_at",
            "sync_status",
            "sync_error",
            "plugin_errors",
            "sync_attempts",
            "next_sync_at",
        ]
        read_only_fields = [f for f in fields if f not in ("enabled", "disabled_reason")]

    def get_stale(self, pool) -> bool:
        return pool_is_stale(reported_at=pool.reported_at)

    def get_usage(self, pool) -> dict[str, int]:
        """What is allocated on the pool's provider, per class."""
        usage = self.context.get("pool_usage")
        if usage is None:
            usage = pool_usage(provider_ids=[pool.provider_id]) if pool.provider_id else {}
        return usage.get(pool.provider_id, {})
