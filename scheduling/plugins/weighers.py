"""The built-in weighers. Positive multipliers spread (most free first), negative pack."""

from .base import BaseWeigher


class ResourceWeigher(BaseWeigher):
    """``resource:CLASS[:free|ratio]``: the host's free amount of any class, or its free
    share (free / capacity). Covers compute units: ``resource:CUSTOM_CU:ratio=-1`` packs."""

    resource_class = None
    mode = "free"

    def __init__(self, resource_class=None, mode=None, *rest):
        resource_class = resource_class or self.resource_class
        if resource_class is None or rest or (mode or self.mode) not in ("free", "ratio"):
            raise ValueError("expects resource:CLASS or resource:CLASS:free|ratio")
        self.resource_class = resource_class
        self.mode = mode or self.mode
        # A free share is 0..1 already: not stretched over the pass's hosts. A free amount is
        # normalised over them, as Nova's RAM weigher (no fixed bounds).
        self.normalised = self.mode == "ratio"
        if self.aggregate_multiplier_key is None:
            self.aggregate_multiplier_key = f"{resource_class.lower()}_weight_multiplier"

    def weigh(self, host, spec):
        free = host.free(self.resource_class)
        if self.mode == "ratio":
            capacity = host.capacity(self.resource_class)
            return free / capacity if capacity else 0.0
        return float(free)

    def weigh_hosts(self, hosts, spec):
        # Thousands of hosts a pass: each host's totals read once, without a call per level
        # (what :meth:`weigh` answers, unless a subclass redefines it).
        if type(self).weigh is not ResourceWeigher.weigh:
            return super().weigh_hosts(hosts, spec)
        resource_class, none = self.resource_class, (0, 0)
        pairs = [host._totals().get(resource_class, none) for host in hosts]
        if self.mode == "ratio":
            return [(capacity - used) / capacity if capacity else 0.0 for capacity, used in pairs]
        return [float(capacity - used) for capacity, used in pairs]


class RAMWeigher(ResourceWeigher):
    aggregate_multiplier_key = "ram_weight_multiplier"  # Nova's
    resource_class = "MEMORY_MB"

    def __init__(self, *args):
        if args:
            raise ValueError(f"takes no arguments, got {':'.join(args)}")
        super().__init__()


class CPUWeigher(ResourceWeigher):
    aggregate_multiplier_key = "cpu_weight_multiplier"  # Nova's
    resource_class = "VCPU"

    def __init__(self, *args):
        if args:
            raise ValueError(f"takes no arguments, got {':'.join(args)}")
        super().__init__()


class DiskWeigher(ResourceWeigher):
    aggregate_multiplier_key = "disk_weight_multiplier"  # Nova's
    resource_class = "DISK_GB"

    def __init__(self, *args):
        if args:
            raise ValueError(f"takes no arguments, got {':'.join(args)}")
        super().__init__()


class _ServerGroupWeigher(BaseWeigher):
    """A soft server-group policy: how many of the group's members the host runs, counted
    for (``soft-affinity``) or against (``soft-anti-affinity``); 0 for every host otherwise."""

    policy = None
    sign = 1.0

    def __init__(self, *args):
        if args:
            raise ValueError(f"takes no arguments, got {':'.join(args)}")

    def weigh(self, host, spec):
        group = getattr(spec, "group", None)
        if group is None or group.policy != self.policy:
            return 0.0
        return self.sign * spec.group_hosts.get(host.uuid, 0)


class ServerGroupSoftAffinityWeigher(_ServerGroupWeigher):
    policy = "soft-affinity"


class ServerGroupSoftAntiAffinityWeigher(_ServerGroupWeigher):
    policy = "soft-anti-affinity"
    sign = -1.0


BUILTIN = {
    "ram": RAMWeigher,
    "cpu": CPUWeigher,
    "disk": DiskWeigher,
    "resource": ResourceWeigher,
    "server_group_soft_affinity": ServerGroupSoftAffinityWeigher,
    "server_group_soft_anti_affinity": ServerGroupSoftAntiAffinityWeigher,
}
