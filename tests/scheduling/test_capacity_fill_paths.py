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

from scheduling.extra_specs import translate_flavor
from scheduling.models import Flavor
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
