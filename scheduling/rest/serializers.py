"""Serializers of /api/flavors/, /api/servers/, /api/scheduler/explain/ and /api/capacity/."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from allocations.selectors.devices import devices_of_consumers
from placementsite.core.rest.serializers import StrictFieldsMixin
from providers.models import MAX_INT

from ..extra_specs import MAX_REQUESTED_GROUPS, InvalidExtraSpec, requested_problems, validate
from ..flavor_snapshots import size_changes
from ..models import AggregateMetadata, Flavor, Server
from ..selectors.aggregates import aggregate_uuid, zone_exists
from ..selectors.flavors import FlavorViewer, flavor_lookup
from ..selectors.server_groups import GroupViewer, server_group_lookup

# Without a caller in the serializer's context (``flavor_viewer``), only public flavors.
PUBLIC_ONLY = FlavorViewer(project_id=None)

FLAVOR_FIELDS = ("vcpus", "ram", "disk", "ephemeral", "swap")


class FlavorSerializer(serializers.ModelSerializer):
    class Meta:
        model = Flavor
        fields = [
            "id",
            "name",
            "vcpus",
            "ram",
            "disk",
            "ephemeral",
            "swap",
            "extra_specs",
            "is_public",
            "disabled",
            "created_at",
            "updated_at",
        ]
        read_only_fields = ["created_at", "updated_at"]
        extra_kwargs = {"vcpus": {"min_value": 1}, "ram": {"min_value": 1}}

    def validate(self, attrs):
        if self.instance is not None:
            self._refuse_size_changes(attrs)
        merged = {f: getattr(self.instance, f) for f in FLAVOR_FIELDS} if self.instance else {}
        merged.update({f: attrs[f] for f in FLAVOR_FIELDS if f in attrs})
        extra_specs = attrs.get("extra_specs", self.instance.extra_specs if self.instance else {})
        if self.partial and self.instance is not None and "extra_specs" in attrs:
            extra_specs = attrs["extra_specs"] = self._patched_specs(attrs["extra_specs"])
        try:
            validate(
                vcpus=merged.get("vcpus", 1),
                ram=merged.get("ram", 1),
                disk=merged.get("disk", 0),
                ephemeral=merged.get("ephemeral", 0),
                swap=merged.get("swap", 0),
                extra_specs=extra_specs,
            )
        except InvalidExtraSpec as exc:
            raise serializers.ValidationError({"extra_specs": {exc.key: [exc.detail]}}) from None
        return attrs

    def _refuse_size_changes(self, attrs):
        """As Nova: a flavor's sizes never change (servers were placed for them); extra specs
        may, for new servers only (each server keeps a snapshot)."""
        changed = size_changes(self.instance, attrs)
        if changed:
            raise serializers.ValidationError(
                {f: ["A flavor's sizes cannot change; create a new flavor."] for f in changed}
            )

    def _patched_specs(self, patch):
        """The flavor's extra specs with a PATCH's merged in: a key set to null is removed."""
        merged_specs = dict(self.instance.extra_specs)
        for key, value in (patch or {}).items():
            if value is None:
                merged_specs.pop(key, None)
            else:
                merged_specs[key] = value
        return merged_specs


class FlavorAccessSerializer(serializers.Serializer):
    """A project given a private flavor (in), or the flavor's projects (out)."""

    project_id = serializers.CharField(max_length=255, write_only=True)
    flavor = serializers.CharField(read_only=True)
    projects = serializers.ListField(child=serializers.CharField(), read_only=True)


# Hint lists are bounded, as count is: a request's work stays within its time budget.
MAX_HINT_ITEMS = 100


class HintsSerializer(StrictFieldsMixin, serializers.Serializer):
    unknown_field_message = "unknown scheduler hint"

    same_host = serializers.ListField(
        child=serializers.UUIDField(format="hex_verbose"),
        required=False,
        max_length=MAX_HINT_ITEMS,
    )
    different_host = serializers.ListField(
        child=serializers.UUIDField(format="hex_verbose"),
        required=False,
        max_length=MAX_HINT_ITEMS,
    )
    target_host = serializers.CharField(max_length=255, required=False)
    ignore_hosts = serializers.ListField(
        child=serializers.CharField(max_length=255), required=False, max_length=MAX_HINT_ITEMS
    )
    # A server group's uuid (/api/server-groups/): the instances join it, placed by its policy.
    group = serializers.UUIDField(format="hex_verbose", required=False)

    SINGLE = ("target_host", "group")

    def to_internal_value(self, data):
        # A single server or host may be given as a string, as Nova's hints allow.
        if isinstance(data, dict):
            data = {
                key: [value] if key not in self.SINGLE and isinstance(value, str) else value
                for key, value in data.items()
            }
        values = super().to_internal_value(data)
        return {
            key: [str(v) for v in value] if isinstance(value, list) else str(value)
            for key, value in values.items()
        }


@extend_schema_field({"oneOf": [{"type": "integer"}, {"type": "string"}]})
class FlavorField(serializers.Field):
    """A flavor by id or by name, among those the caller may use (the serializer's context
    names the caller as ``flavor_viewer``)."""

    default_error_messages = {
        "missing": "No flavor {value}.",
        "disabled": "Flavor {value} is disabled.",
    }

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, (int, str)) or data == "":
            self.fail("missing", value=data)
        found = flavor_lookup(value=data, viewer=self.context.get("flavor_viewer", PUBLIC_ONLY))
        if found is None:
            self.fail("missing", value=data)
        if found.disabled:
            self.fail("disabled", value=found.name)
        return found

    def to_representation(self, value):
        return value.name


class RequestedGroupSerializer(StrictFieldsMixin, serializers.Serializer):
    """One group of what a boot asks beyond its flavor (as a Nova port's resource request):
    given by one provider of the host's tree or a pool the host shares."""

    resources = serializers.DictField(
        child=serializers.IntegerField(min_value=1, max_value=MAX_INT),
        allow_empty=False,
        help_text='resource class: amount, e.g. {"IPV4_ADDRESS": 1}',
    )
    required = serializers.ListField(
        child=serializers.RegexField(
            r"^!?[A-Z0-9_]{1,255}$", error_messages={"invalid": "A trait name, or !name."}
        ),
        required=False,
        default=list,
        max_length=MAX_HINT_ITEMS,
        help_text="traits the provider must have (!NAME: must not have)",
    )


class ServerRequestSerializer(serializers.Serializer):
    """The body of a server create (and of an explain)."""

    name = serializers.CharField(max_length=200)
    flavor = FlavorField()
    project_id = serializers.CharField(max_length=255)
    user_id = serializers.CharField(max_length=255)
    count = serializers.IntegerField(min_value=1, max_value=100, default=1)
    scheduler_hints = HintsSerializer(required=False, default=dict)
    availability_zone = serializers.CharField(
        max_length=255, required=False, allow_blank=True, default=""
    )
    requested_resources = serializers.ListField(
        child=RequestedGroupSerializer(),
        required=False,
        default=list,
        max_length=MAX_REQUESTED_GROUPS,
        help_text="what each instance asks beyond its flavor, one group per item (as Nova "
        'adds a port\'s resource request): [{"resources": {"IPV4_ADDRESS": 1}}]',
    )

    def validate_requested_resources(self, requested):
        return [
            {"resources": dict(sorted(group["resources"].items())), "required": group["required"]}
            if group["required"]
            else {"resources": dict(sorted(group["resources"].items()))}
            for group in requested
        ]

    def validate(self, attrs):
        """``scheduler_hints.group`` names a group the caller may see (its project's, or any
        with ``placement:api:server_groups:all_projects``); another is a 400 naming it. So is
        a resource class or trait of ``requested_resources`` that does not exist."""
        problems = requested_problems(attrs["requested_resources"])
        if problems:  # named in full: requested_resources.0.resources.CUSTOM_X
            raise serializers.ValidationError(problems)
        wanted = attrs["scheduler_hints"].get("group")
        attrs["group"] = None
        if wanted:
            viewer = self.context.get("group_viewer", GroupViewer(project_id=None))
            attrs["group"] = server_group_lookup(value=wanted, viewer=viewer)
            if attrs["group"] is None:
                raise serializers.ValidationError(
                    {"scheduler_hints": {"group": [f"No server group {wanted}."]}}
                )
        return attrs


class ServerListSerializer(serializers.ListSerializer):
    """Servers with their devices read for the whole page in one query."""

    def to_representation(self, data):
        servers = list(data.all() if hasattr(data, "all") else data)
        self._context = {
            **self._context,
            "devices": devices_of_consumers(consumer_uuids=(s.uuid for s in servers)),
        }
        return super().to_representation(servers)


class ServerSerializer(serializers.ModelSerializer):
    id = serializers.UUIDField(source="uuid", read_only=True)
    devices = serializers.SerializerMethodField(
        help_text="the device units the server holds: resource_class, provider (uuid), "
        "provider_name, address (a VF's or device's PCI address, or a vGPU slot id), "
        "parent_address (its physical device's), mdev_type (vGPU slots)"
    )
    flavor = serializers.SlugRelatedField(slug_field="name", read_only=True)
    host = serializers.CharField(source="host.name", read_only=True, default=None)
    host_uuid = serializers.UUIDField(source="host.uuid", read_only=True, default=None)

    class Meta:
        model = Server
        fields = [
            "id",
            "name",
            "flavor",
            "project_id",
            "user_id",
            "host",
            "host_uuid",
            "allocations",
            "devices",
            "alternates",
            "availability_zone",
            "requested_availability_zone",
            "scheduler_hints",
            "requested_resources",
            "flavor_snapshot",
            "created_at",
        ]
        read_only_fields = fields
        list_serializer_class = ServerListSerializer

    def get_devices(self, server) -> list[dict]:
        known = self.context.get("devices")
        if known is None:
            known = devices_of_consumers(consumer_uuids=[server.uuid])
        return known.get(str(server.uuid), [])


class CapacityQuerySerializer(serializers.Serializer):
    flavor = FlavorField()
    aggregate = serializers.CharField(max_length=255, required=False)
    availability_zone = serializers.CharField(max_length=255, required=False)

    def validate_aggregate(self, value):
        found = aggregate_uuid(value=value)
        if found is None:
            raise serializers.ValidationError(f"No aggregate {value}.")
        return found

    def validate_availability_zone(self, value):
        if not zone_exists(value=value):
            raise serializers.ValidationError(f"No availability zone {value}.")
        return value


class AggregateSerializer(serializers.ModelSerializer):
    """An aggregate as Nova's host aggregates show it: uuid, name, zone, metadata. Which
    providers are members is the Placement API's (``/resource_providers/{uuid}/aggregates``)."""

    uuid = serializers.UUIDField(source="aggregate.uuid", required=False, format="hex_verbose")
    name = serializers.CharField(max_length=255)
    availability_zone = serializers.CharField(
        max_length=255, required=False, allow_blank=True, default=""
    )
    metadata = serializers.DictField(
        child=serializers.CharField(max_length=255, allow_blank=True), required=False, default=dict
    )

    class Meta:
        model = AggregateMetadata
        fields = ["uuid", "name", "availability_zone", "metadata", "created_at", "updated_at"]
        read_only_fields = ["created_at", "updated_at"]

    def validate_uuid(self, value):
        if self.instance is not None and str(value) != str(self.instance.aggregate.uuid):
            raise serializers.ValidationError("An aggregate's uuid cannot change.")
        return value
