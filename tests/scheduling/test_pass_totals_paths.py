"""Property test of the scheduler pass's tree totals (seeded, bounded): on random small clouds
(flat hosts, NUMA hosts with two or three cells, hosts with devices, a custom class on some,
existing servers) and random flavors (some asking no disk, some ``hw:numa_nodes``), a pass
that sums the trees whose inventories are all among the engine's selection rows from those
rows (reading only how many rows each tree has) gives the same totals, the same per-provider
rows and the same explain answer through HTTP as one that reads every tree's inventories."""

import random

import pytest

from scheduling import candidates as engine
from scheduling import queries
from scheduling.extra_specs import translate_flavor
from scheduling.models import Flavor
from scheduling.selectors.scheduler import SchedulingPass, SchedulingSpec
from tests.providers.devices import PLUGINS, TWO_CELLS, pf, report_and_sync

pytestmark = [pytest.mark.django_db, pytest.mark.postgresql]

SEEDS = range(24)


def _cloud(api, rng):
    for index in range(rng.randint(2, 6)):
        kind = rng.choice(["flat", "flat", "numa", "devices"])
        body = {
            "vcpus": rng.choice([4, 8]),
            "memory_mb": rng.choice([4096, 8192, 16384]),
            "local_gb": 100,
            "numa_topology": None,
        }
        if kind == "numa":
            body.update(vcpus=8, memory_mb=16384, numa_topology=TWO_CELLS)
        if kind == "devices":
            body.update(
                pci_devices=[pf(address=f"0000:8{index}:00.0", vfs=[f"0000:8{index}:00.1"])]
            )
        report_and_sync(api, f"h{index}", body)
        if rng.random() < 0.3:  # a class no flavor asks, put through the Placement API
            _custom_inventory(api, f"h{index}")


def _custom_inventory(api, name):
    api.put("/resource_classes/CUSTOM_EXTRA", None)
    provider = api.get(f"/resource_providers?name={name}").json["resource_providers"][0]
    inventories = api.get(f"/resource_providers/{provider['uuid']}/inventories").json
    body = {
        "resource_provider_generation": inventories["resource_provider_generation"],
        "inventories": {**inventories["inventories"], "CUSTOM_EXTRA": {"total": 4}},
    }
    response = api.put(f"/resource_providers/{provider['uuid']}/inventories", body)
    assert response.status == 200, response


def _flavor(api, rng, name):
    specs = rng.choice([{}, {}, {"hw:numa_nodes": "1"}])
    body = {
        "name": name,
        "vcpus": rng.choice([1, 2]),
        "ram": rng.choice([512, 1024]),
        "disk": rng.choice([0, 1]),
        "extra_specs": specs,
    }
    response = api.post("/api/flavors/", body)
    assert response.status == 201, response


def _pass(name):
    flavor = Flavor.objects.get(name=name)
    spec = SchedulingSpec(flavor=flavor, flavor_request=translate_flavor(flavor, aggregates=()))
    return SchedulingPass(spec)


def _without_selection_rows(monkeypatch):
    """The engine keeps no selection rows: the pass reads every tree's inventories."""
    find = engine.find_candidates

    def find_without_rows(*args, **kwargs):
        found = find(*args, **kwargs)
        found.rows = None
        return found

    monkeypatch.setattr(engine, "find_candidates", find_without_rows)


@pytest.mark.parametrize("seed", SEEDS)
def test_totals_from_the_selection_are_those_read(api, settings, monkeypatch, seed):
    rng = random.Random(seed)
    settings.PLACEMENT_RESOURCE_PLUGINS = PLUGINS
    settings.PLACEMENT_SCHEDULER_HOST_SUBSET_SIZE = 1
    _cloud(api, rng)
    _flavor(api, rng, "old")
    _flavor(api, rng, "f")
    for index in range(rng.randint(0, 4)):
        body = {"name": f"old{index}", "flavor": "old", "project_id": "p", "user_id": "u"}
        response = api.post("/api/servers/", body)
        assert response.status in (201, 409), response
    body = {"name": "x", "flavor": "f", "project_id": "p", "user_id": "u"}

    fast = _pass("f")
    assert fast.found.rows is not None or not fast.found.candidates
    fast_explain = api.post("/api/scheduler/explain/", body)
    assert fast_explain.status == (200 if fast.hosts else 409), fast_explain
    with monkeypatch.context() as patched:
        _without_selection_rows(patched)
        slow = _pass("f")
        assert slow.found.rows is None
        if slow.tree is not None:
            assert slow.tree._parts is None  # every tree's rows read
        slow_explain = api.post("/api/scheduler/explain/", body)

    assert [h.id for h in fast.hosts] == [h.id for h in slow.hosts]
    for host in fast.hosts:
        assert fast.tree.totals(host.id) == slow.tree.totals(host.id), (seed, host.name)
        assert fast.tree.inventories(host.id) == slow.tree.inventories(host.id)
    if fast.tree is not None:
        assert fast.tree._raw_rows() == queries.tree_inventories_with_usage(fast.tree.by_host)
        assert fast.tree.limits(None) == slow.tree.limits(None)
    assert slow_explain.status == fast_explain.status
    if fast_explain.status == 200:
        assert fast_explain.json == slow_explain.json, seed
