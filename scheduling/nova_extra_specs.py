"""The flavor extra specs Nova's API registers, with the value check Nova applies to each.

Nova (``nova/api/validation/extra_specs``) registers keys per namespace; a key in a namespace
it knows but that it does not register is refused, a key with no namespace or in a namespace
it does not know is accepted as is (a virt driver or an out-of-tree filter may read it). The
table below states the same rules in this project's words, so that flavors exported from a Nova
cloud import unchanged. Which of them change placement is :mod:`scheduling.extra_specs`'s
business; this module only says whether a key and its value are acceptable.
"""

import re
from dataclasses import dataclass

from placementsite.core.exceptions import InvalidRequest

INVALID_EXTRA_SPEC = "scheduler.invalid_extra_spec"


class InvalidExtraSpec(InvalidRequest):
    """An extra spec that cannot be understood; ``key`` names it."""

    def __init__(self, key, detail):
        super().__init__(f"Invalid extra spec {key}: {detail}", code=INVALID_EXTRA_SPEC)
        self.key = key


# oslo's strict boolean strings, as Nova's bool-typed specs take them.
_TRUE = {"1", "t", "true", "on", "y", "yes"}
_FALSE = {"0", "f", "false", "off", "n", "no"}
BOOLEAN_WORDS = _TRUE | _FALSE

# A CPU map as Nova writes them: "0-3,^2,5".
CPU_MAP = r"\^?\d+((-\d+)?(,\^?\d+(-\d+)?)?)*"
GROUP = r"[a-zA-Z0-9_-]{1,64}"


@dataclass(frozen=True)
class Spec:
    """One registered key (``pattern`` a full-match regex of the name) and its value's rule:
    ``kind`` is ``int`` (``minimum``/``maximum``), ``bool`` or ``str`` (``choices`` or
    ``value_pattern``, else anything)."""

    pattern: str
    kind: type = str
    choices: tuple = ()
    value_pattern: str = ""
    minimum: int | None = None
    maximum: int | None = None

    def check(self, key, value):
        text = str(value).strip() if self.kind is not str else str(value)
        if self.kind is int:
            if not re.fullmatch(r"-?\d+", text):
                raise InvalidExtraSpec(key, f"expected an integer, got {value!r}")
            number = int(text)
            if self.minimum is not None and number < self.minimum:
                raise InvalidExtraSpec(key, f"{number} is less than the minimum {self.minimum}")
            if self.maximum is not None and number > self.maximum:
                raise InvalidExtraSpec(key, f"{number} is more than the maximum {self.maximum}")
        elif self.kind is bool:
            if text.lower() not in BOOLEAN_WORDS:
                raise InvalidExtraSpec(key, f"expected a boolean (true/false...), got {value!r}")
        elif self.choices and text not in self.choices:
            raise InvalidExtraSpec(key, f"expected one of {', '.join(self.choices)}, got {value!r}")
        elif self.value_pattern and not re.fullmatch(self.value_pattern, text):
            raise InvalidExtraSpec(key, f"{value!r} is not of the form {self.value_pattern}")


def _int(name, minimum=None, maximum=None):
    return Spec(re.escape(name), int, minimum=minimum, maximum=maximum)


def _bool(name):
    return Spec(re.escape(name), bool)


def _one_of(name, *choices):
    return Spec(re.escape(name), str, choices=choices)


def _text(name, value_pattern=""):
    return Spec(re.escape(name), str, value_pattern=value_pattern)


def _hw():
    specs = [
        _bool("hw:cpu_realtime"),
        _text("hw:cpu_realtime_mask", r"(\^)?\d+((-\d+)?(,\^?\d+(-\d+)?)?)*"),
        _bool("hw:hide_hypervisor_id"),
        _one_of("hw:cpu_policy", "dedicated", "shared", "mixed"),
        _one_of("hw:cpu_thread_policy", "prefer", "isolate", "require"),
        _one_of("hw:emulator_threads_policy", "isolate", "share"),
        _text("hw:cpu_dedicated_mask", CPU_MAP),
        _text("hw:mem_page_size", r"(large|small|any|\d+([kKMGT]i?)?(b|bit|B)?)"),
        _bool("hw:locked_memory"),
        _int("hw:numa_nodes", minimum=1),
        Spec(r"hw:numa_cpus\.\d+", str, value_pattern=CPU_MAP),
        Spec(r"hw:numa_mem\.\d+", int, minimum=1),
        _one_of("hw:pci_numa_affinity_policy", "required", "preferred", "legacy", "socket"),
        _bool("hw:boot_menu"),
        _bool("hw:vif_multiqueue_enabled"),
        _bool("hw:mem_encryption"),
        _one_of("hw:mem_encryption_model", "amd-sev", "amd-sev-es", "amd-sev-snp"),
        _text("hw:pmem", r"([a-zA-Z0-9_]+(,)?)+"),
        _bool("hw:pmu"),
        _int("hw:serial_port_count", minimum=0),
        _one_of("hw:tpm_model", "tpm-tis", "tpm-crb"),
        _one_of("hw:tpm_version", "1.2", "2.0"),
        _one_of("hw:tpm_secret_security", "user", "host", "deployment"),
        _one_of("hw:watchdog_action", "none", "pause", "poweroff", "reset", "disabled"),
        _one_of("hw:viommu_model", "intel", "smmuv3", "virtio", "auto"),
        _bool("hw:virtio_packed_ring"),
        _one_of(
            "hw:sound_model", "sb16", "es1370", "pcspk", "ac97", "ich6", "ich9", "usb", "virtio"
        ),
        _one_of("hw:usb_model", "none", "nec-xhci", "qemu-xhci"),
        _int("hw:redirected_usb_ports", minimum=0, maximum=15),
        _bool("hw:ephemeral_encryption"),
        _one_of("hw:ephemeral_encryption_format", "plain", "luks", "luksv2"),
    ]
    for part in ("sockets", "cores", "threads"):
        specs += [_int(f"hw:cpu_{part}", minimum=1), _int(f"hw:cpu_max_{part}", minimum=1)]
    return specs


def _quota():
    specs = []
    for key in ("cpu", "memory", "disk_io", "vif"):  # the VMware driver's
        specs += [
            _int(f"quota:{key}_limit", minimum=0),
            _int(f"quota:{key}_reservation"),
            _one_of(f"quota:{key}_shares_level", "custom", "high", "normal", "low"),
            _int(f"quota:{key}_shares_share", minimum=0),
        ]
    specs += [
        _int("quota:cpu_shares", minimum=0),
        _int("quota:cpu_period", minimum=0),
        _int("quota:cpu_quota"),
    ]
    for stat in ("read", "write", "total"):
        for metric in ("bytes", "iops"):
            specs.append(_int(f"quota:disk_{stat}_{metric}_sec", minimum=0))
    for direction in ("inbound", "outbound"):
        for metric in ("average", "peak", "burst"):
            specs.append(_int(f"quota:vif_{direction}_{metric}", minimum=0))
    return specs


# What the ComputeCapabilitiesFilter compares (any operator expression as the value).
_CAPABILITIES = (
    "id uuid service_id host vcpus memory_mb local_gb vcpus_used memory_mb_used local_gb_used "
    "hypervisor_type hypervisor_version hypervisor_hostname free_ram_mb free_disk_gb "
    "current_workload running_vms disk_available_least host_ip mapped cpu_allocation_ratio "
    "ram_allocation_ratio disk_allocation_ratio total_usable_ram_mb total_usable_disk_gb "
    "disk_mb_used free_disk_mb vcpus_total num_instances num_io_ops failed_builds aggregates "
    "cell_uuid updated"
).split()
_CAPABILITY_TREES = (
    "cpu_info metrics stats numa_topology supported_hv_specs pci_device_pools nodename "
    "pci_stats supported_instances limits instances"
).split()


def _others():
    return [
        _bool("hide_hypervisor_id"),
        _one_of("group_policy", "isolate", "none"),
        _bool("hw_rng:allowed"),
        _int("hw_rng:rate_bytes", minimum=0),
        _int("hw_rng:rate_period", minimum=0),
        _int("hw_video:ram_max_mb", minimum=0),
        _one_of("os:secure_boot", "disabled", "required"),
        _text("accel:device_profile"),
        _text("pci_passthrough:alias", r"[^:]+:\d+(?:\s*,\s*[^:]+:\d+)*"),
        _text("vmware:hw_version"),
        _text("vmware:storage_policy"),
        Spec(r"aggregate_instance_extra_specs:.+"),
        *[_text(f"capabilities:{name}") for name in _CAPABILITIES],
        *[Spec(rf"capabilities:{re.escape(name)}(:\w+)*") for name in _CAPABILITY_TREES],
        # Placement's own words; the trait's or class's existence is checked on write.
        Spec(rf"resources({GROUP})?:[A-Z0-9_]+", int, minimum=0),
        Spec(rf"trait({GROUP})?:[A-Z0-9_]+", str, choices=("required", "forbidden")),
    ]


REGISTRY = tuple(_hw() + _quota() + _others())
# Most keys are literal names: looked up at once, the parameterised ones searched.
_EXACT = {spec.pattern: spec for spec in REGISTRY}
# The namespaces Nova knows: a key in one of them must be registered.
NAMESPACES = (
    "hw",
    "hw_rng",
    "hw_video",
    "quota",
    "os",
    "accel",
    "pci_passthrough",
    "vmware",
    "capabilities",
    "aggregate_instance_extra_specs",
    rf"resources({GROUP})?",
    rf"trait({GROUP})?",
)
_NAMESPACE = re.compile("|".join(f"(?:{n})" for n in NAMESPACES))


def check(key, value):
    """Accept ``key: value`` as Nova's API does, or raise InvalidExtraSpec naming the key."""
    spec = _EXACT.get(re.escape(key))
    if spec is None:
        spec = next((s for s in REGISTRY if re.fullmatch(s.pattern, key)), None)
    if spec is not None:
        spec.check(key, value)
        return
    namespace, colon, _rest = key.partition(":")
    if colon and _NAMESPACE.fullmatch(namespace):
        raise InvalidExtraSpec(key, f"unknown extra spec in Nova's namespace {namespace}")


def cpu_map(key, text, universe=()):
    """The CPU ids of a Nova CPU map (``0-3,^2``): ranges and singles, minus the ``^`` ones.
    With a ``universe`` (the flavor's CPUs, for a dedicated or realtime mask), a map that
    starts with an exclusion starts from the whole universe, as Nova reads such a mask
    (``0-N,`` put before it): ``^0,1`` is every CPU but 0, not CPU 1 alone."""
    included = set(universe) if str(text).strip().startswith("^") else set()
    excluded = set()
    for part in str(text).split(","):
        part = part.strip()
        target = excluded if part.startswith("^") else included
        part = part.lstrip("^")
        if not re.fullmatch(r"\d+(-\d+)?", part):
            raise InvalidExtraSpec(key, f"{text!r} is not a CPU map such as 0-3,^2")
        first, _dash, last = part.partition("-")
        low, high = int(first), int(last or first)
        if high < low:
            raise InvalidExtraSpec(key, f"the range {part} runs backwards")
        target.update(range(low, high + 1))
    return included - excluded
