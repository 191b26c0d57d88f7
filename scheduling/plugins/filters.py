"""The built-in filters."""

from ..models import ServerGroup
from ..selectors.server_groups import group_refusal
from .base import BaseFilter, Status


class HostEnabledFilter(BaseFilter):
    """Refuses hosts an operator disabled or forced down and hosts whose report is stale."""

    reads_usage = False

    def check(self, host, spec):
        if host.forced_down:
            return "forced down by the operator"
        if not host.enabled:
            reason = f": {host.disabled_reason}" if host.disabled_reason else ""
            return f"disabled by the operator{reason}"
        if host.stale:
            return "its compute report is stale"
        return None


class SameHostFilter(BaseFilter):
    """Hint ``same_host``: only a host running one of the given servers."""

    reads_usage = False

    def applies(self, spec):
        return bool(spec.hint_list("same_host"))

    def pre_filter(self, spec):
        return spec.hosts_of(spec.hint_list("same_host"))  # once per pass

    def check(self, host, spec):
        if host.uuid in spec.cycle.of(self):
            return None
        return "runs none of the same_host servers"


class DifferentHostFilter(BaseFilter):
    """Hint ``different_host``: no host running any of the given servers."""

    reads_usage = False

    def applies(self, spec):
        return bool(spec.hint_list("different_host"))

    def pre_filter(self, spec):
        return spec.hosts_of(spec.hint_list("different_host"))

    def check(self, host, spec):
        if host.uuid in spec.cycle.of(self):
            return "runs a different_host server"
        return None


class TargetHostFilter(BaseFilter):
    """Hint ``target_host``: only the host of that name or uuid."""

    reads_usage = False

    def applies(self, spec):
        return bool(spec.hints.get("target_host"))

    def check(self, host, spec):
        target = spec.hints.get("target_host")
        if target and target not in (host.name, host.uuid):
            return Status.unresolvable(f"is not the target host {target}")
        return None


class IgnoreHostsFilter(BaseFilter):
    """Hint ``ignore_hosts``: none of the hosts named (names or uuids)."""

    reads_usage = False

    def applies(self, spec):
        return bool(spec.hint_list("ignore_hosts"))

    def check(self, host, spec):
        ignored = set(spec.hint_list("ignore_hosts"))
        if ignored and (host.name in ignored or host.uuid in ignored):
            return Status.unresolvable("is in ignore_hosts")
        return None


class AvailabilityZoneFilter(BaseFilter):
    """The request's availability zone: an aggregate (by uuid or name) or a zone name set in
    aggregate metadata; the host must be in it."""

    reads_usage = False

    def applies(self, spec):
        return bool(spec.availability_zone)

    def check(self, host, spec):
        zone = spec.availability_zone
        if zone in host.aggregates:
            return None
        for meta in host.aggregate_metadata:
            if zone in (meta["availability_zone"], meta["name"]):
                return None
        return Status.unresolvable(f"is not in availability zone {zone}")


class AggregateExtraSpecsFilter(BaseFilter):
    """Flavor ``aggregate_instance_extra_specs:KEY=VALUE``: the host must be in an aggregate
    whose metadata has KEY set to VALUE (or to a comma-separated list holding it)."""

    reads_usage = False

    def applies(self, spec):
        return bool(spec.aggregate_specs)

    def check(self, host, spec):
        for key, value in sorted(spec.aggregate_specs.items()):
            if not any(
                _matches(meta["metadata"].get(key), value) for meta in host.aggregate_metadata
            ):
                return Status.unresolvable(f"no aggregate of the host has {key}={value}")
        return None


def _matches(have, wanted):
    if have is None:
        return False
    return wanted in [part.strip() for part in str(have).split(",")]


class ExtendedResourceFilter(BaseFilter):
    """``extended_resource:CLASS:MIN``: the host must have at least MIN units of CLASS free
    (any class: compute units, accelerators...)."""

    def __init__(self, resource_class=None, minimum=None, *rest):
        if resource_class is None or minimum is None or rest:
            raise ValueError("expects extended_resource:CLASS:MINIMUM")
        self.resource_class = resource_class
        self.minimum = int(minimum)

    def check(self, host, spec):
        free = host.free(self.resource_class)
        if free < self.minimum:
            return f"has {free} {self.resource_class} free, below {self.minimum}"
        return None


class _ServerGroupFilter(BaseFilter):
    """A hard server-group policy: the members' hosts are read once per pass
    (``spec.group_hosts``, instances of the same request included)."""

    policy = None

    def applies(self, spec):
        group = getattr(spec, "group", None)
        return group is not None and group.policy == self.policy

    def check(self, host, spec):
        return group_refusal(group=spec.group, host_uuid=host.uuid, counts=spec.group_hosts)


class ServerGroupAffinityFilter(_ServerGroupFilter):
    """Hint ``group`` of an ``affinity`` group: only the host its members run on."""

    policy = ServerGroup.Policy.AFFINITY


class ServerGroupAntiAffinityFilter(_ServerGroupFilter):
    """Hint ``group`` of an ``anti-affinity`` group: no host already running
    ``max_server_per_host`` of its members (1 by default)."""

    policy = ServerGroup.Policy.ANTI_AFFINITY


BUILTIN = {
    "host_enabled": HostEnabledFilter,
    "availability_zone": AvailabilityZoneFilter,
    "aggregate_extra_specs": AggregateExtraSpecsFilter,
    "same_host": SameHostFilter,
    "different_host": DifferentHostFilter,
    "target_host": TargetHostFilter,
    "ignore_hosts": IgnoreHostsFilter,
    "extended_resource": ExtendedResourceFilter,
    "server_group_affinity": ServerGroupAffinityFilter,
    "server_group_anti_affinity": ServerGroupAntiAffinityFilter,
}
