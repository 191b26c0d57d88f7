"""Property test of capacity's fast fill (seeded, bounded): on random small clouds of reported
hosts (flat ones, NUMA ones with two or three cells, the host's memory reservation held for
the whole host, existing servers) and random flavors (plain, ``hw:numa_nodes`` 1 and 2),
``GET /api/capacity/`` (each host filled alone, each candidate taken as often as it fits in
one step) answers what the scheduler's own one-instance-at-a-time fill of the same pass
places, host by host.

A NUMA flavor on a host with more cells than its NUMA nodes (the cells strategy reorders the
cells as they fill) and a host whose reservation refuses before its cells do are both drawn."""

import random
import uuid as uuidlib

import pytest

from providers.models import Aggregate, ResourceProvider
from scheduling.extra_specs import translate_flavor
from scheduling.models import AggregateMetadata, Flavor
from scheduling.selectors.pass_hosts import PassTreeFacts
from scheduling.selectors.scheduler import SchedulingPass, SchedulingSpec
from tests.providers.devices import PLUGINS, report_and_sync
from tests.scheduling.scheduler_helpers import boot, make_flavor, make_host

pytestmark = [pytest.mark.django_db, pytest.mark.postgresql]

SEEDS = range(32)


def _cells(rng, count):
    cells, cpu = [], 0
    for index in range(count):
        cpus = rng.choice([2, 4])
        cells.append(
            {
                "id": index,
                "cpus": list(range(cpu, cpu + cpus)),
                "memory_mb": rng.choice([2048, 3072, 4096]),
            }
        )
        cpu += cpus
    return cells


def _cloud(api, rng):
    for index in range(rng.randint(2, 5)):
        kind = rng.choice(["flat", "two", "three"])
        if kind == "flat":
            body = {
                "vcpus": rng.choice([4, 8]),
                "memory_mb": rng.choice([4096, 8192]),
                "local_gb": 100,
                "numa_topology": None,
            }
        else:
            cells = _cells(rng, 2 if kind == "two" else 3)
            body = {
                "vcpus": sum(len(c["cpus"]) for c in cells),
                "memory_mb": sum(c["memory_mb"] for c in cells),
                "local_gb": 100,
                "numa_topology": {"cells": cells},
            }
        report_and_sync(api, f"h{index}", body)


def _flavor(api, rng, name):
    kind = rng.choice(["plain", "numa1", "numa2"])
    specs = {"plain": {}, "numa1": {"hw:numa_nodes": "1"}, "numa2": {"hw:numa_nodes": "2"}}
    vcpus = rng.choice([1, 2]) * (2 if kind == "numa2" else 1)
    ram = rng.choice([512, 768, 1024]) * (2 if kind == "numa2" else 1)
    body = {"name": name, "vcpus": vcpus, "ram": ram, "disk": 1, "extra_specs": specs[kind]}
    response = api.post("/api/flavors/", body)
    assert response.status == 201, response
    return kind


def _slow_fill(name):
    """The scheduler's fill one instance at a time, in its own order: ``{host: fits}``."""
    flavor = Flavor.objects.get(name=name)
    spec = SchedulingSpec(flavor=flavor, flavor_request=translate_flavor(flavor, aggregates=()))
    placed = SchedulingPass(spec)._fill_in_order()
    return {host.name: count for host, count in placed.values()}


@pytest.mark.parametrize("seed", SEEDS)
def test_the_fast_fill_places_what_one_instance_at_a_time_places(api, settings, seed):
    rng = random.Random(seed)
    settings.PLACEMENT_RESOURCE_PLUGINS = PLUGINS
    settings.PLACEMENT_ALLOCATION_RATIOS = {"VCPU": 1.0, "MEMORY_MB": 1.0, "DISK_GB": 1.0}
    settings.PLACEMENT_RESERVED = {"VCPU": 0, "MEMORY_MB": rng.choice([0, 512]), "DISK_GB": 0}
    settings.PLACEMENT_NUMA_CELLS_STRATEGY = rng.choice(["spread", "pack"])
    settings.PLACEMENT_SCHEDULER_HOST_SUBSET_SIZE = 1
    _cloud(api, rng)
    first = _flavor(api, rng, "first")
    kind = _flavor(api, rng, "f")
    # Existing servers: some hosts partly used, their cells unevenly.
    for index in range(rng.randint(0, 4)):
        body = {"name": f"old{index}", "flavor": "first", "project_id": "p", "user_id": "u"}
        response = api.post("/api/servers/", body)
        assert response.status in (201, 409), response

    response = api.get("/api/capacity/?flavor=f")

    assert response.status == 200, response
    fits = {h["name"]: h["fits"] for h in response.json["hosts"] if h["fits"]}
    assert fits == _slow_fill("f"), (seed, first, kind)
    assert response.json["total"] == sum(fits.values())


def _flat_cloud(api, rng):
    """Flat hosts made through the Placement API, some without disk of their own and some in
    an aggregate with a sharing disk provider (large enough or not for what they take)."""
    aggregate = str(uuidlib.uuid4())
    sharing = rng.random() < 0.5
    for index in range(rng.randint(2, 6)):
        inventories = {
            "VCPU": {"total": rng.choice([4, 8]), "allocation_ratio": rng.choice([1.0, 2.0])},
            "MEMORY_MB": {"total": rng.choice([4096, 8192]), "reserved": rng.choice([0, 512])},
        }
        if not sharing or rng.random() < 0.5:
            inventories["DISK_GB"] = {"total": rng.choice([20, 100])}
        make_host(api, f"h{index}", inventories, aggregates=[aggregate] if sharing else ())
    if sharing:
        make_host(
            api,
            "shared-disk",
            {"DISK_GB": {"total": rng.choice([10, 40, 1000])}},
            traits=["MISC_SHARES_VIA_AGGREGATE"],
            aggregates=[aggregate],
        )
    return sharing


@pytest.mark.parametrize("seed", SEEDS)
def test_a_flat_cloud_fills_in_one_loop_as_one_instance_at_a_time(api, settings, monkeypatch, seed):
    """Flat hosts and a flavor without NUMA nodes: the pass is filled in one loop
    (PassTreeFacts.fill_flat) unless a sharing provider bounds it, with the answer of the
    one-instance-at-a-time fill."""
    rng = random.Random(seed)
    settings.PLACEMENT_SCHEDULER_HOST_SUBSET_SIZE = 1
    calls = []
    fill_flat = PassTreeFacts.fill_flat
    monkeypatch.setattr(
        PassTreeFacts, "fill_flat", lambda tree, roots: calls.append(1) or fill_flat(tree, roots)
    )
    sharing = _flat_cloud(api, rng)
    make_flavor(api, "first", vcpus=1, ram=512, disk=rng.choice([1, 5]))
    make_flavor(api, "f", vcpus=rng.choice([1, 2]), ram=rng.choice([512, 1024]), disk=5)
    for index in range(rng.randint(0, 4)):
        assert boot(api, "first", name=f"old{index}").status in (201, 409)

    response = api.get("/api/capacity/?flavor=f")

    assert response.status == 200, response
    fits = {h["name"]: h["fits"] for h in response.json["hosts"] if h["fits"]}
    assert fits == _slow_fill("f"), (seed, sharing)
    assert response.json["total"] == sum(fits.values())
    assert calls or sharing  # without a sharing provider, always the one loop


def _general_fill(name, zone=""):
    """The fill over a pass whose engine built every host's candidates (no host's counted
    apart from its free units): ``{host: fits}``."""
    flavor = Flavor.objects.get(name=name)
    spec = SchedulingSpec(
        flavor=flavor,
        flavor_request=translate_flavor(flavor, aggregates=()),
        availability_zone=zone,
    )
    placed = SchedulingPass(spec).fill()
    return {host.name: count for host, count in placed.values()}


def _random_inventories(rng, classes):
    inventories = {}
    for rc in classes:
        total = {"VCPU": rng.choice([2, 4, 8]), "MEMORY_MB": rng.choice([2048, 4096, 8192])}.get(
            rc, rng.choice([20, 100])
        )
        inventory = {"total": total, "allocation_ratio": rng.choice([1.0, 1.5, 2.0])}
        if rng.random() < 0.3:
            inventory["reserved"] = total // 4
        if rc == "VCPU" and rng.random() < 0.15:
            inventory["max_unit"] = 1  # refuses any flavor of two VCPUs
        inventories[rc] = inventory
    return inventories


def _mixed_cloud(api, rng):
    """Hosts made through the Placement API: flat ones (every class on the root), nested ones
    (a class, or part of one, on a child), some without a disk of their own; some in a zone's
    aggregate with metadata a flavor may ask, some in an aggregate with a sharing disk
    provider. Returns the names of the flat hosts outside the sharing aggregate."""
    zone = Aggregate.objects.create(uuid=uuidlib.uuid4())
    AggregateMetadata.objects.create(
        aggregate=zone, name="rack", availability_zone="az1", metadata={"disk": "ssd"}
    )
    shared = str(uuidlib.uuid4())
    alone = set()
    for index in range(rng.randint(3, 8)):
        name = f"h{index}"
        kind = rng.choice(["flat", "flat", "child_disk", "child_vcpu", "no_disk"])
        aggregates = []
        if rng.random() < 0.5:
            aggregates.append(str(zone.uuid))
        in_shared = kind == "no_disk" or rng.random() < 0.3
        if in_shared:
            aggregates.append(shared)
        own = {"flat": ["VCPU", "MEMORY_MB", "DISK_GB"], "child_disk": ["VCPU", "MEMORY_MB"]}
        classes = own.get(kind, ["VCPU", "MEMORY_MB"] if kind == "no_disk" else ["MEMORY_MB"])
        if kind == "child_vcpu":
            classes = ["VCPU", "MEMORY_MB", "DISK_GB"] if rng.random() < 0.5 else classes
        root = make_host(api, name, _random_inventories(rng, classes), aggregates=aggregates)
        if kind == "child_disk":
            make_host(api, f"{name}-disk", _random_inventories(rng, ["DISK_GB"]), parent=root)
        elif kind == "child_vcpu":
            child = ["VCPU"] if "DISK_GB" in classes else ["VCPU", "DISK_GB"]
            make_host(api, f"{name}-cell", _random_inventories(rng, child), parent=root)
        if kind == "flat" and not in_shared:
            alone.add(name)
    if rng.random() < 0.7:
        make_host(
            api,
            "shared-disk",
            {"DISK_GB": {"total": rng.choice([10, 40, 1000])}},
            traits=["MISC_SHARES_VIA_AGGREGATE"],
            aggregates=[shared],
        )
    return alone


@pytest.mark.parametrize("seed", SEEDS)
def test_hosts_counted_apart_give_what_the_general_fill_gives(api, settings, monkeypatch, seed):
    """Capacity's pass leaves a flat host's one candidate (everything from its root)
    unbuilt and counts it from the free units (CandidatesById.alone): on random clouds of
    flat and nested hosts, with reserved units, ratios, a max_unit refusing, a sharing disk
    provider, existing servers, and filters dropping hosts (an aggregate's extra spec, a
    zone), the answer is the fill over a pass where the engine built every candidate, and
    the scheduler's own one-instance-at-a-time fill: same total, same hosts, same fits."""
    rng = random.Random(seed)
    settings.PLACEMENT_SCHEDULER_HOST_SUBSET_SIZE = 1
    reads_usage = rng.random() < 0.25
    if reads_usage:  # a filter reading usage: each host is filled one instance at a time
        settings.PLACEMENT_SCHEDULER_FILTERS += ",extended_resource:VCPU:3"
    counted = []
    fill_flat = PassTreeFacts.fill_flat
    monkeypatch.setattr(
        PassTreeFacts,
        "fill_flat",
        lambda tree, roots: counted.extend(set(tree.alone) & set(roots)) or fill_flat(tree, roots),
    )
    alone = _mixed_cloud(api, rng)
    make_flavor(api, "first", vcpus=1, ram=512, disk=rng.choice([1, 5]))
    specs = rng.choice([{}, {}, {"aggregate_instance_extra_specs:disk": "ssd"}])
    make_flavor(
        api, "f", vcpus=rng.choice([1, 2]), ram=rng.choice([512, 1024]), disk=5, extra_specs=specs
    )
    for index in range(rng.randint(0, 5)):
        assert boot(api, "first", name=f"old{index}").status in (201, 409)
    zone = rng.choice(["", "", "az1"])

    query = "flavor=f" + (f"&availability_zone={zone}" if zone else "")
    response = api.get(f"/api/capacity/?{query}")

    assert response.status == 200, response
    fits = {h["name"]: h["fits"] for h in response.json["hosts"] if h["fits"]}
    general = _general_fill("f", zone)
    assert fits == general, (seed, sorted(alone))
    assert response.json["total"] == sum(general.values())
    assert {h["name"] for h in response.json["hosts"]} == set(general)
    if not zone:
        assert fits == _slow_fill("f"), seed
    # Every flat host outside the sharing aggregate that takes an instance was counted apart
    # (the filters kept it: the fill counts only those). Others may be too: a nested host
    # whose child has no room for one instance, a host of the aggregate without a sharing
    # provider.
    counted_names = set(
        ResourceProvider.objects.filter(id__in=counted).values_list("name", flat=True)
    )
    if not reads_usage:
        assert alone & set(general) <= counted_names, seed

    # A work budget stopping the engine stops it at the same tree either way (a host
    # counted apart is one combination examined, as its candidate is).
    settings.PLACEMENT_ALLOCATION_CANDIDATES_MAX_EXAMINED = rng.randint(1, 6)
    cut = api.get(f"/api/capacity/?{query}").json
    assert {h["name"]: h["fits"] for h in cut["hosts"] if h["fits"]} == _general_fill("f", zone)
