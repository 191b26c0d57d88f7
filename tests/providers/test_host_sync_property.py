"""A property of the host sync, checked against what really happens on PostgreSQL.

Seeded random sequences of host reports (NUMA turned on and off, cells added and removed,
devices added, removed and split, CPU sets changed, memory shrunk below and grown above what
is allocated) are interleaved with allocations and frees on random providers of a few hosts.
After every sync of a host:

- the host's tree is exactly the plugins' tree for its report (``ok``), or exactly the tree
  it had before the sync (``blocked``, with a reason); never anything in between;
- no class is offered twice for one host: the tree's total per class never exceeds what the
  last applied report says the host has;
- every consumer holds, on each host, the same amount of each class as before the sync; and
  no inventory has more allocated than it can give.

Each seed runs a bounded number of steps within a time budget.
"""

import random
import time
import uuid

import pytest

from allocations.models import Allocation
from allocations.services.allocations import (
    ConsumerAllocationWrite,
    allocation_delete,
    allocation_replace,
)
from placementsite.core.exceptions import DomainError
from providers.capacity import CAPACITY_FIELDS, Capacity
from providers.host_reports import desired_tree, inventories_of
from providers.models import ComputeNode, Inventory, ResourceProvider
from providers.plugins import HostReport, configured_plugins
from providers.rest.serializers import HostReportSerializer
from providers.services.compute_nodes import compute_node_report
from providers.services.host_sync import compute_nodes_sync

pytestmark = [pytest.mark.django_db, pytest.mark.postgresql]

SEEDS = [11, 23, 47]
STEPS = 80
SECONDS_PER_SEED = 40
HOSTS = ["ph0", "ph1", "ph2"]
DEVICE_CLASSES = ["VGPU", "SRIOV_NET_VF"]


@pytest.fixture(autouse=True)
def host_settings(settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = ["vcpu", "memory", "disk", "numa", "pci"]
    # No overcommit and nothing reserved: shrinking below usage is easy to reach.
    settings.PLACEMENT_ALLOCATION_RATIOS = {}
    settings.PLACEMENT_RESERVED = {}


class HostModel:
    """A host whose hardware the test changes at random, and the report it sends."""

    def __init__(self, name, rng):
        self.name = name
        self.rng = rng
        self.cpus = rng.choice([4, 8, 12])
        self.numa = rng.random() < 0.5
        self.cell_memory = [rng.choice([2048, 4096, 8192]) for _ in range(rng.choice([1, 2]))]
        self.memory = rng.choice([4096, 8192, 16384])
        self.devices = []
        self.next_address = 0x10
        self.dedicated = None
        self.shared = None
        for _ in range(rng.choice([0, 1, 2])):
            self.add_device()

    # the report
    def cells(self):
        count = len(self.cell_memory)
        ids = list(range(self.cpus))
        size = -(-self.cpus // count)
        return [
            {"id": i, "cpus": ids[i * size : (i + 1) * size], "memory_mb": memory}
            for i, memory in enumerate(self.cell_memory)
        ]

    def report(self):
        cells = self.cells() if self.numa else None
        cell_ids = {c["id"] for c in cells or []}
        devices = [
            {**d, "numa_node": d["numa_node"] if d["numa_node"] in cell_ids or not cells else None}
            for d in self.devices
        ]
        return {
            "vcpus": self.cpus,
            "memory_mb": sum(self.cell_memory) if self.numa else self.memory,
            "local_gb": 100,
            "cpu_info": {},
            "hypervisor_type": "QEMU",
            "stats": {},
            "numa_topology": {"cells": cells} if cells else None,
            "pci_devices": devices,
            "cpu_dedicated_set": self.dedicated,
            "cpu_shared_set": self.shared,
        }

    # what the report says the host has, per class (the bound of its tree's totals)
    def offered(self, report):
        cpus = report["vcpus"]
        found = {"DISK_GB": report["local_gb"], "MEMORY_MB": report["memory_mb"]}
        found["VCPU"] = found["PCPU"] = cpus
        for device in report["pci_devices"]:
            name = device["resource_class"]
            found[name] = found.get(name, 0) + device["count"]
        return found

    # changes
    def add_device(self):
        address = f"0000:{self.next_address:02x}:00.0"
        self.next_address += 1
        self.devices.append(
            {
                "address": address,
                "vendor_id": self.rng.choice(["10de", "8086"]),
                "product_id": "1eb8",
                "resource_class": self.rng.choice(DEVICE_CLASSES),
                "count": self.rng.choice([1, 2, 4]),
                "numa_node": self.rng.choice([None, 0, 1]),
            }
        )

    def mutate(self):
        change = self.rng.choice(
            [
                self.toggle_numa,
                self.change_cells,
                self.change_memory,
                self.change_memory,
                self.change_devices,
                self.split_device,
                self.change_cpu_sets,
            ]
        )
        change()

    def toggle_numa(self):
        self.numa = not self.numa

    def change_cells(self):
        if len(self.cell_memory) > 1 and self.rng.random() < 0.5:
            self.cell_memory.pop()
        else:
            self.cell_memory.append(self.rng.choice([2048, 4096]))
        self.dedicated = self.shared = None  # the CPUs of the cells move

    def change_memory(self):
        if self.numa:
            index = self.rng.randrange(len(self.cell_memory))
            self.cell_memory[index] = self.rng.choice([1024, 2048, 4096, 8192, 12288])
        else:
            self.memory = self.rng.choice([1024, 4096, 8192, 16384, 24576])

    def change_devices(self):
        if self.devices and self.rng.random() < 0.5:
            self.devices.pop(self.rng.randrange(len(self.devices)))
        else:
            self.add_device()

    def split_device(self):
        big = [d for d in self.devices if d["count"] >= 2]
        if not big:
            return self.add_device()
        device = self.rng.choice(big)
        half = device["count"] // 2
        device["count"] -= half
        self.add_device()
        self.devices[-1].update(
            {k: device[k] for k in ("vendor_id", "product_id", "resource_class")}, count=half
        )

    def change_cpu_sets(self):
        ids = list(range(self.cpus))
        choice = self.rng.choice(["none", "dedicated", "both"])
        if choice == "none":
            self.dedicated = self.shared = None
            return
        dedicated = sorted(self.rng.sample(ids, self.rng.randrange(1, self.cpus)))
        self.dedicated = dedicated
        self.shared = [i for i in ids if i not in dedicated] if choice == "both" else None


# --- what is on record --------------------------------------------------------------------------


def tree_of(hostname):
    """``{name: (parent name, {class: Capacity}, traits)}`` of the tree rooted at ``hostname``."""
    root = ResourceProvider.objects.filter(name=hostname, parent__isnull=True).first()
    if root is None:
        return {}
    members = list(
        ResourceProvider.objects.filter(root_id=root.id).values_list("id", "name", "parent__name")
    )
    inventories = {pk: {} for pk, _n, _p in members}
    for pk, name, *fields in Inventory.objects.filter(
        resource_provider_id__in=list(inventories)
    ).values_list("resource_provider_id", "resource_class__name", *CAPACITY_FIELDS):
        inventories[pk][name] = Capacity(*fields)
    traits = {pk: set() for pk in inventories}
    for pk, name in ResourceProvider.traits.through.objects.filter(
        resource_provider_id__in=list(inventories)
    ).values_list("resource_provider_id", "trait__name"):
        traits[pk].add(name)
    return {name: (parent, inventories[pk], frozenset(traits[pk])) for pk, name, parent in members}


def desired_of(hostname):
    node = ComputeNode.objects.get(hostname=hostname)
    tree = desired_tree(HostReport.of(node), configured_plugins()).tree
    names = {spec.key: spec.name for spec in tree.providers()}
    return {
        spec.name: (
            names.get(spec.parent) if spec.parent is not None else None,
            inventories_of(spec),
            frozenset(spec.traits),
        )
        for spec in tree.providers()
    }


def holdings_by_host():
    """``{(consumer, host): {class: amount}}``."""
    found = {}
    for consumer, host, name, used in Allocation.objects.values_list(
        "consumer__uuid", "resource_provider__root__name", "resource_class__name", "used"
    ):
        slot = found.setdefault((str(consumer), host), {})
        slot[name] = slot.get(name, 0) + used
    return found


def class_totals(tree):
    found = {}
    for _parent, inventories, _traits in tree.values():
        for name, inventory in inventories.items():
            found[name] = found.get(name, 0) + inventory.total
    return found


def assert_nothing_over_allocated():
    used = {}
    for provider, name, amount in Allocation.objects.values_list(
        "resource_provider_id", "resource_class__name", "used"
    ):
        used[(provider, name)] = used.get((provider, name), 0) + amount
    for provider, name, *fields in Inventory.objects.values_list(
        "resource_provider_id", "resource_class__name", *CAPACITY_FIELDS
    ):
        assert used.pop((provider, name), 0) <= Capacity(*fields).usable, (provider, name)
    assert not used, f"allocations without inventory: {used}"


# --- the run ------------------------------------------------------------------------------------


def report(model):
    body = model.report()
    serializer = HostReportSerializer(data=body, context={"hostname": model.name})
    assert serializer.is_valid(), (body, serializer.errors)
    compute_node_report(hostname=model.name, report=serializer.validated_data)
    return body


def allocate(rng):
    """A new consumer taking what fits from one or two classes of one random provider."""
    rows = list(
        Inventory.objects.values_list(
            "resource_provider__uuid", "resource_class__name", *CAPACITY_FIELDS
        )
    )
    if not rows:
        return
    provider = rng.choice(rows)[0]
    mine = [r for r in rows if r[0] == provider]
    wanted = {}
    for _rp, name, *fields in rng.sample(mine, min(len(mine), rng.choice([1, 2]))):
        capacity = Capacity(*fields)
        wanted[name] = rng.randint(1, max(1, min(capacity.max_unit, capacity.usable // 2 or 1)))
    try:
        allocation_replace(
            consumer=ConsumerAllocationWrite(
                consumer_uuid=str(uuid.uuid4()),
                allocations={str(provider): wanted},
                project_id="p",
                user_id="u",
                generation=None,
            )
        )
    except DomainError:
        pass  # does not fit: a refused claim is not the sync's business


def free(rng):
    consumers = list(Allocation.objects.values_list("consumer__uuid", flat=True).distinct())
    if consumers:
        allocation_delete(consumer_uuid=str(rng.choice(consumers)))


def placed():
    return set(Allocation.objects.values_list("consumer_id", "resource_provider_id", "used"))


def sync_and_check(model, outcomes_seen):
    before_tree = tree_of(model.name)
    before_held = holdings_by_host()
    before_placed = placed()
    outcomes = compute_nodes_sync(hostnames=[model.name], force=True)
    assert len(outcomes) == 1
    outcome = outcomes[0]
    outcomes_seen[outcome.status] = outcomes_seen.get(outcome.status, 0) + 1
    after_tree = tree_of(model.name)
    if outcome.status == "ok":
        assert after_tree == desired_of(model.name)
        bound = model.offered(model.report())
        totals = class_totals(after_tree)
        for name, total in totals.items():
            assert total <= bound.get(name, 0), (name, total, bound)
        assert totals.get("VCPU", 0) + totals.get("PCPU", 0) <= model.cpus
    else:
        assert outcome.status == "blocked", (outcome.status, outcome.errors)
        assert outcome.errors
        assert after_tree == before_tree
    assert holdings_by_host() == before_held
    assert_nothing_over_allocated()
    if placed() != before_placed:
        outcomes_seen["moved"] = outcomes_seen.get("moved", 0) + 1


@pytest.mark.parametrize("seed", SEEDS)
def test_every_sync_gives_the_plugins_tree_or_the_one_before_and_keeps_every_allocation(seed):
    rng = random.Random(seed)
    models = {name: HostModel(name, rng) for name in HOSTS}
    seen = {}
    for model in models.values():
        report(model)
        sync_and_check(model, seen)
    deadline = time.monotonic() + SECONDS_PER_SEED
    for _step in range(STEPS):
        # The time bound only cuts a sequence short once it has reached every outcome asserted
        # below: a slow machine runs more of the seed's steps rather than failing.
        if time.monotonic() > deadline and _covered(seen):
            break
        roll = rng.random()
        if roll < 0.4:
            allocate(rng)
        elif roll < 0.45:
            free(rng)
        else:
            model = models[rng.choice(HOSTS)]
            model.mutate()
            report(model)
            sync_and_check(model, seen)
    # The sequences reach both outcomes and move allocations (else they test less than they
    # claim).
    assert _covered(seen), seen


def _covered(seen):
    return bool(seen.get("ok") and seen.get("blocked") and seen.get("moved"))
