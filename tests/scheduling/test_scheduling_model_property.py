"""Property test of the one scheduling model (seeded, bounded): on random small clouds (flat
and NUMA hosts, sharing providers, aggregates with zones and metadata, existing usage,
disabled hosts) and random flavors (plain, isolated groups, ``hw:numa_nodes``, aggregate extra
specs, an extended resource checked by a filter), capacity's ``total`` and every host's
``fits`` are what real boots place until no valid host, and explain's ``placeable`` for
``count=N`` is what a real ``count=N`` boot places."""

import random
import uuid as uuidlib
from collections import Counter

import pytest
from django.utils import timezone

from providers.models import ComputeNode, ResourceProvider
from tests.scheduling.scheduler_helpers import make_flavor, make_host

pytestmark = pytest.mark.postgresql

SEEDS = range(12)
MAX_BOOTS = 120  # a bound on each cloud's fill (the clouds are far smaller)
FILTERS = "host_enabled,availability_zone,aggregate_extra_specs"
# A filter that reads usage: with it a fill asks the filters after every instance.
EXTENDED = ",extended_resource:CUSTOM_CU:50"


def _cloud(api, rng):
    """Hosts of random shapes; returns their names."""
    api.put("/resource_classes/CUSTOM_CU")
    zones = []
    for name, zone, ssd in (("agg-a", "az-a", "true"), ("agg-b", "az-b", "false")):
        response = api.post(
            "/api/aggregates/", {"name": name, "availability_zone": zone, "metadata": {"ssd": ssd}}
        )
        assert response.status == 201, response
        zones.append(response.json["uuid"])
    names = []
    for index in range(rng.randint(2, 5)):
        name = f"h{index}"
        aggregates = [rng.choice(zones)] if rng.random() < 0.7 else []
        cu = rng.choice([0, 100, 200, 400])
        if rng.random() < 0.5:
            root = make_host(
                api,
                name,
                {"DISK_GB": rng.choice([20, 50, 100]), **({"CUSTOM_CU": cu} if cu else {})},
                aggregates=aggregates,
            )
            for cell in range(2):
                make_host(
                    api,
                    f"{name}_c{cell}",
                    {"VCPU": rng.choice([4, 8]), "MEMORY_MB": rng.choice([4096, 8192, 16384])},
                    parent=root,
                    traits=["HW_NUMA_ROOT"],
                )
        else:
            root = make_host(
                api,
                name,
                {
                    "VCPU": rng.choice([4, 8, 16]),
                    "MEMORY_MB": rng.choice([4096, 8192, 32768]),
                    "DISK_GB": rng.choice([20, 50, 100]),
                    **({"CUSTOM_CU": cu} if cu else {}),
                },
                aggregates=aggregates,
            )
        names.append(name)
        if rng.random() < 0.3:  # existing usage
            consumer = str(uuidlib.uuid4())
            response = api.put(
                f"/allocations/{consumer}",
                {
                    "allocations": {root: {"resources": {"DISK_GB": rng.choice([5, 10])}}},
                    "project_id": "other",
                    "user_id": "other",
                    "consumer_generation": None,
                    "consumer_type": "INSTANCE",
                },
            )
            assert response.status == 204, response
        if rng.random() < 0.2:  # disabled by the operator
            ComputeNode.objects.create(
                hostname=f"node-{name}",
                provider=ResourceProvider.objects.get(uuid=root),
                enabled=False,
                reported_at=timezone.now(),
            )
    if rng.random() < 0.5:  # a disk pool shared with the hosts of agg-a
        make_host(
            api,
            "pool",
            {"DISK_GB": rng.choice([30, 60])},
            traits=["MISC_SHARES_VIA_AGGREGATE"],
            aggregates=[zones[0]],
        )
    return names


def _flavor(api, rng):
    kind = rng.choice(["plain", "isolate", "numa", "ssd", "cu"])
    vcpus, ram, disk = (
        rng.choice([1, 2, 4]),
        rng.choice([512, 1024, 2048, 4096]),
        rng.choice([1, 5, 10]),
    )
    specs = {
        "plain": {},
        "isolate": {
            "resources1:VCPU": "1",
            "resources1:MEMORY_MB": "512",
            "resources2:VCPU": "1",
            "resources2:MEMORY_MB": "512",
            "resources:VCPU": "0",
            "resources:MEMORY_MB": "0",
            "group_policy": "isolate",
        },
        "numa": {"hw:numa_nodes": "2"},
        "ssd": {"aggregate_instance_extra_specs:ssd": "true"},
        "cu": {"resources:CUSTOM_CU": "50"},
    }[kind]
    if kind == "numa":
        vcpus, ram = 2 * vcpus, 2 * ram
    make_flavor(api, "f", vcpus=vcpus, ram=ram, disk=disk, extra_specs=specs)
    return kind


def _capacity(api, zone=""):
    query = "flavor=f" + (f"&availability_zone={zone}" if zone else "")
    response = api.get(f"/api/capacity/?{query}")
    assert response.status == 200, response
    return response.json["total"], {h["name"]: h["fits"] for h in response.json["hosts"]}


def _boot(api, count=1, zone=""):
    body = {"name": "vm", "flavor": "f", "project_id": "p", "user_id": "u", "count": count}
    if zone:
        body["availability_zone"] = zone
    return api.post("/api/servers/", body)


def _explain(api, count, zone=""):
    body = {"name": "vm", "flavor": "f", "project_id": "p", "user_id": "u", "count": count}
    if zone:
        body["availability_zone"] = zone
    response = api.post("/api/scheduler/explain/", body)
    if response.status == 409:  # nothing placeable: the funnel is the error's
        assert response.error_code == "scheduler.no_valid_host", response
        return response.json["errors"][0]["explain"]
    assert response.status == 200, response
    return response.json


@pytest.mark.parametrize("seed", SEEDS)
def test_capacity_and_explain_are_what_real_boots_place(api, settings, seed):
    rng = random.Random(seed)
    settings.PLACEMENT_SCHEDULER_FILTERS = FILTERS + (EXTENDED if seed % 2 else "")
    _cloud(api, rng)
    kind = _flavor(api, rng)
    zone = rng.choice(["", "", "az-a", "az-b"])
    total, fits = _capacity(api, zone)

    # Explain, then a real boot, of more than fit: explain places exactly total, the boot none.
    over = _explain(api, total + 1, zone)
    assert over["placeable"] == total, (seed, kind)
    refused = _boot(api, total + 1, zone)
    assert refused.status == 409 and refused.error_code == "scheduler.no_valid_host"

    # Explain, then a real boot, of a part: the same hosts.
    part = total // 2
    placed = Counter()
    if part:
        explained = _explain(api, part, zone)
        assert explained["placeable"] == part
        booted = _boot(api, part, zone)
        assert booted.status == 201, booted
        hosts = [s["host"] for s in booted.json["servers"]]
        assert sorted(hosts) == sorted(explained["placements"]), (seed, kind)
        placed.update(hosts)

    # Then single boots until no valid host: per host, what capacity said.
    for _ in range(MAX_BOOTS):
        response = _boot(api, 1, zone)
        if response.status == 409:
            assert response.error_code == "scheduler.no_valid_host"
            break
        assert response.status == 201, response
        placed[response.json["servers"][0]["host"]] += 1
    assert sum(placed.values()) == total, (seed, kind, zone, dict(placed), fits)
    assert dict(placed) == fits, (seed, kind, zone)
    assert _capacity(api, zone) == (0, {})
