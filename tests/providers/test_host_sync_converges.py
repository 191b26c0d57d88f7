"""The six ways the host sync went wrong when a host's shape changed under running workloads,
each driven through HTTP (host reports, the Placement API, /api/) and ``sync_inventory``, on
PostgreSQL: the tree is always the one the plugins describe (allocations moved with it), or
the one before with the host blocked; a deleted host is gone; devices are what they are."""

import io
import uuid

import pytest
from django.core.management import call_command

from tests.conftest import PlacementClient
from tests.providers.hosts import report, tree
from tests.scheduling.scheduler_helpers import boot, make_flavor

pytestmark = [pytest.mark.django_db, pytest.mark.postgresql]

PLUGINS = ["vcpu", "memory", "disk", "numa", "pci"]
TWO_CELLS = {
    "cells": [
        {"id": 0, "cpus": [0, 1, 2, 3], "memory_mb": 8192},
        {"id": 1, "cpus": [4, 5, 6, 7], "memory_mb": 8192},
    ]
}


@pytest.fixture(autouse=True)
def host_settings(settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = PLUGINS
    settings.PLACEMENT_ALLOCATION_RATIOS = {"VCPU": 16.0, "MEMORY_MB": 1.5, "DISK_GB": 1.0}
    settings.PLACEMENT_RESERVED = {"VCPU": 0, "MEMORY_MB": 512, "DISK_GB": 0}
    return settings


def put(api, hostname, body):
    response = api.put(f"/api/compute-nodes/{hostname}/", body)
    assert response.status in (200, 201), response
    return response


def sync(*hosts):
    """``sync_inventory`` (``--host`` for each of ``hosts``); returns ``{host: line}``."""
    out = io.StringIO()
    args = [arg for host in hosts for arg in ("--host", host)]
    call_command("sync_inventory", *args, stdout=out)
    lines = [line for line in out.getvalue().splitlines() if not line.startswith(" ")]
    return {line.split(":")[0]: line for line in lines if ":" in line}


def node(api, hostname):
    return api.get(f"/api/compute-nodes/{hostname}/").json


def allocate(api, consumer, allocations):
    body = {
        "allocations": {rp: {"resources": res} for rp, res in allocations.items()},
        "project_id": "p",
        "user_id": "u",
        "consumer_generation": None,
        "consumer_type": "INSTANCE",
    }
    response = api.put(f"/allocations/{consumer}", body)
    assert response.status == 204, response


def held(api, consumer):
    """``{provider uuid: {class: amount}}`` of a consumer, through the Placement API."""
    allocations = api.get(f"/allocations/{consumer}").json["allocations"]
    return {rp: entry["resources"] for rp, entry in allocations.items()}


def totals(allocations):
    found = {}
    for resources in allocations.values():
        for name, amount in resources.items():
            found[name] = found.get(name, 0) + amount
    return found


def tree_totals(host):
    found = {}
    for provider in host.values():
        for name, inventory in provider["inventories"].items():
            found[name] = found.get(name, 0) + inventory["total"]
    return found


def gpu(address, count=4, **extra):
    return {
        "address": address,
        "vendor_id": "10de",
        "product_id": "1eb8",
        "resource_class": "VGPU",
        "count": count,
        **extra,
    }


# --- 1. half-applied syncs ------------------------------------------------------------------


def test_numa_turned_off_under_an_allocation_moves_it_to_the_root_and_syncs_whole(api):
    put(api, "h1", report(vcpus=8, memory_mb=16384, local_gb=100, numa_topology=TWO_CELLS))
    sync("h1")
    cell = tree(api, "h1")["h1_NUMA0"]["uuid"]
    consumer = str(uuid.uuid4())
    allocate(api, consumer, {cell: {"VCPU": 2, "MEMORY_MB": 1024}})

    put(api, "h1", report(vcpus=8, memory_mb=16384, local_gb=100, numa_topology=None))
    line = sync("h1")["h1"]

    host = tree(api, "h1")
    assert set(host) == {"h1"}
    assert tree_totals(host)["VCPU"] == 8
    assert tree_totals(host)["MEMORY_MB"] == 16384
    now_held = held(api, consumer)
    assert totals(now_held) == {"VCPU": 2, "MEMORY_MB": 1024}
    assert set(now_held) == {host["h1"]["uuid"]}
    assert node(api, "h1")["sync_status"] == "ok"
    # Deletions and reshapes are changes: two cells gone, one consumer moved, classes moved.
    assert line.startswith("h1: ok, ") and not line.startswith("h1: ok, 0 ")
    # Nothing left to do: a forced resync changes nothing.
    assert sync("h1")["h1"] == "h1: ok, 0 change(s)"


def test_numa_turned_on_under_an_allocation_moves_it_to_one_cell(api):
    put(api, "h1", report(vcpus=8, memory_mb=16384, local_gb=100))
    sync("h1")
    root = tree(api, "h1")["h1"]["uuid"]
    consumer = str(uuid.uuid4())
    allocate(api, consumer, {root: {"VCPU": 3, "MEMORY_MB": 2048, "DISK_GB": 10}})

    put(api, "h1", report(vcpus=8, memory_mb=16384, local_gb=100, numa_topology=TWO_CELLS))
    sync("h1")

    host = tree(api, "h1")
    now_held = held(api, consumer)
    assert totals(now_held) == {"VCPU": 3, "MEMORY_MB": 2048, "DISK_GB": 10}
    # The server's CPUs and memory land together on one cell; its disk stays on the root.
    cells = {host[name]["uuid"] for name in ("h1_NUMA0", "h1_NUMA1")}
    on_cells = {rp: res for rp, res in now_held.items() if rp in cells}
    assert list(on_cells.values()) == [{"VCPU": 3, "MEMORY_MB": 2048}]
    assert now_held[root] == {"DISK_GB": 10}
    assert set(host["h1"]["inventories"]) == {"DISK_GB"}
    assert node(api, "h1")["sync_status"] == "ok"


def test_an_in_use_class_that_vanishes_blocks_the_host_and_applies_nothing(api):
    put(api, "h2", report(vcpus=8, pci_devices=[gpu("0000:81:00.0")]))
    sync("h2")
    before = tree(api, "h2")
    card = before["h2_pci_0000_81_00_0"]["uuid"]
    allocate(api, str(uuid.uuid4()), {card: {"VGPU": 2}})

    put(api, "h2", report(vcpus=16, pci_devices=[]))
    line = sync("h2")["h2"]

    assert line.startswith("h2: blocked")
    after = tree(api, "h2")
    assert {n: p["inventories"] for n, p in after.items()} == {
        n: p["inventories"] for n, p in before.items()
    }
    shown = node(api, "h2")
    assert shown["sync_status"] == "blocked"
    assert "h2_pci_0000_81_00_0" in shown["sync_error"]
    assert "VGPU 2" in shown["sync_error"]
    listed = api.get("/api/compute-nodes/?sync_status=blocked").json["results"]
    assert [h["hostname"] for h in listed] == ["h2"]


def test_a_host_shrunk_below_its_usage_is_blocked_and_synced_once_it_fits(api, settings):
    settings.PLACEMENT_ALLOCATION_RATIOS = {"MEMORY_MB": 1.0}
    put(api, "h3", report(vcpus=8, memory_mb=16384, numa_topology=TWO_CELLS))
    sync("h3")
    cell = tree(api, "h3")["h3_NUMA1"]["uuid"]
    allocate(api, str(uuid.uuid4()), {cell: {"MEMORY_MB": 6000}})

    shrunk = {"cells": [TWO_CELLS["cells"][0], {**TWO_CELLS["cells"][1], "memory_mb": 4096}]}
    put(api, "h3", report(vcpus=8, memory_mb=12288, numa_topology=shrunk))
    sync("h3")

    shown = node(api, "h3")
    assert shown["sync_status"] == "blocked"
    assert "h3_NUMA1: MEMORY_MB 6000 allocated" in shown["sync_error"]
    assert tree(api, "h3")["h3_NUMA1"]["inventories"]["MEMORY_MB"]["total"] == 8192

    put(api, "h3", report(vcpus=8, memory_mb=14336, numa_topology=TWO_CELLS))
    sync("h3")
    assert node(api, "h3")["sync_status"] == "ok"


# --- 2. a deleted compute node ------------------------------------------------------------


def test_a_host_with_allocations_cannot_be_deleted_and_one_without_is_gone_whole(api):
    put(api, "h1", report(vcpus=8, memory_mb=16384, numa_topology=TWO_CELLS))
    sync("h1")
    cell = tree(api, "h1")["h1_NUMA0"]["uuid"]
    consumer = str(uuid.uuid4())
    allocate(api, consumer, {cell: {"VCPU": 1}})

    refused = api.delete("/api/compute-nodes/h1/")
    assert refused.status == 409, refused
    assert refused.error_code == "compute_node.in_use"
    assert "h1_NUMA0" in refused.error["detail"]
    assert len(tree(api, "h1")) == 3

    assert api.delete(f"/allocations/{consumer}").status == 204
    assert api.delete("/api/compute-nodes/h1/").status == 204
    assert api.get("/resource_providers?name=h1").json["resource_providers"] == []
    names = [p["name"] for p in api.get("/resource_providers").json["resource_providers"]]
    assert not [n for n in names if n.startswith("h1")]
    assert api.get("/api/compute-nodes/h1/").status == 404
    # Nothing can land there any more.
    make_flavor(api, "small", vcpus=1, ram=512, disk=1)
    assert boot(api, "small").status == 409


def test_deleting_an_unknown_host_is_a_404(api):
    assert api.delete("/api/compute-nodes/nope/").status == 404


# --- 3. devices as they are -----------------------------------------------------------------


def test_two_cards_are_two_providers_and_no_card_gives_more_than_it_has(api):
    put(api, "h2", report(pci_devices=[gpu("0000:81:00.0"), gpu("0000:82:00.0")]))
    sync("h2")

    host = tree(api, "h2")
    cards = {n: p for n, p in host.items() if "VGPU" in p["inventories"]}
    assert set(cards) == {"h2_pci_0000_81_00_0", "h2_pci_0000_82_00_0"}
    for card in cards.values():
        assert card["inventories"]["VGPU"]["total"] == 4
        assert card["inventories"]["VGPU"]["max_unit"] == 4
    five = api.get("/allocation_candidates?resources=VGPU:5").json
    assert five["allocation_requests"] == []
    four = api.get("/allocation_candidates?resources=VGPU:4").json
    assert len(four["allocation_requests"]) == 2


def test_a_device_on_a_numa_node_hangs_under_that_cell(api):
    nics = [
        {
            "address": "0000:3b:00.0",
            "vendor_id": "8086",
            "product_id": "1572",
            "resource_class": "SRIOV_NET_VF",
            "count": 8,
            "numa_node": 0,
        },
        {
            "address": "0000:d8:00.0",
            "vendor_id": "8086",
            "product_id": "1572",
            "resource_class": "SRIOV_NET_VF",
            "count": 8,
            "numa_node": 1,
        },
    ]
    put(api, "h4", report(vcpus=8, memory_mb=16384, numa_topology=TWO_CELLS, pci_devices=nics))
    sync("h4")

    host = tree(api, "h4")
    assert host["h4_pci_0000_3b_00_0"]["parent"] == host["h4_NUMA0"]["uuid"]
    assert host["h4_pci_0000_d8_00_0"]["parent"] == host["h4_NUMA1"]["uuid"]
    # A VF and CPUs from one NUMA cell, asked for as one subtree (1.36 same_subtree).
    found = api.get(
        "/allocation_candidates?resources_VF=SRIOV_NET_VF:1&resources_CPU=VCPU:2"
        "&required_CPU=HW_NUMA_ROOT&same_subtree=_VF,_CPU&group_policy=none"
    ).json
    assert len(found["allocation_requests"]) == 2

    # NUMA off: the cards move to the root (the same providers).
    put(api, "h4", report(vcpus=8, memory_mb=16384, pci_devices=nics))
    sync("h4")
    after = tree(api, "h4")
    assert after["h4_pci_0000_3b_00_0"]["uuid"] == host["h4_pci_0000_3b_00_0"]["uuid"]
    assert after["h4_pci_0000_3b_00_0"]["parent"] == after["h4"]["uuid"]


def test_a_pooled_device_tree_converges_to_one_provider_per_device(api, settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = [
        *PLUGINS[:4],
        "tests.providers.plugin_fixtures:PooledPciPlugin",
    ]
    put(api, "h2", report(pci_devices=[gpu("0000:81:00.0"), gpu("0000:82:00.0")]))
    sync("h2")
    pool = tree(api, "h2")["h2_VGPU_10DE_1EB8"]
    assert pool["inventories"]["VGPU"]["total"] == 8
    three, two = str(uuid.uuid4()), str(uuid.uuid4())
    allocate(api, three, {pool["uuid"]: {"VGPU": 3}})
    allocate(api, two, {pool["uuid"]: {"VGPU": 2}})

    settings.PLACEMENT_RESOURCE_PLUGINS = PLUGINS
    sync()

    host = tree(api, "h2")
    assert "h2_VGPU_10DE_1EB8" not in host
    names = {p["uuid"]: n for n, p in host.items()}
    for consumer, amount in ((three, 3), (two, 2)):
        now_held = held(api, consumer)
        assert totals(now_held) == {"VGPU": amount}
        # Each server's vGPUs on one card.
        assert len(now_held) == 1
        assert names[next(iter(now_held))].startswith("h2_pci_")
    assert node(api, "h2")["sync_status"] == "ok"


# --- 4. dedicated CPUs ------------------------------------------------------------------------


def test_dedicated_and_shared_cpu_sets_give_pcpu_and_vcpu(api):
    body = report(
        vcpus=16,
        memory_mb=8192,
        local_gb=10,
        cpu_dedicated_set=list(range(8, 16)),
        cpu_shared_set=list(range(8)),
    )
    put(api, "h3", body)
    sync("h3")

    root = tree(api, "h3")["h3"]["inventories"]
    assert root["VCPU"]["total"] == 8
    assert root["PCPU"]["total"] == 8
    assert root["PCPU"]["allocation_ratio"] == 1.0
    make_flavor(api, "pinned", vcpus=4, ram=512, disk=1, extra_specs={"hw:cpu_policy": "dedicated"})
    assert api.get("/api/capacity/?flavor=pinned").json["total"] == 2
    server = boot(api, "pinned")
    assert server.status == 201, server
    assert totals(held(api, server.json["servers"][0]["id"]))["PCPU"] == 4


def test_dedicated_cpus_sit_on_the_numa_cells_that_hold_them(api):
    body = report(
        vcpus=8, memory_mb=16384, numa_topology=TWO_CELLS, cpu_dedicated_set=[2, 3, 4, 5, 6, 7]
    )
    put(api, "h3", body)
    sync("h3")

    host = tree(api, "h3")
    assert host["h3_NUMA0"]["inventories"]["PCPU"]["total"] == 2
    assert host["h3_NUMA1"]["inventories"]["PCPU"]["total"] == 4
    # Only a dedicated set: no CPU is left for shared guests (as Nova).
    assert "VCPU" not in host["h3_NUMA0"]["inventories"]
    assert "VCPU" not in host["h3_NUMA1"]["inventories"]


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"cpu_dedicated_set": [0, 1], "cpu_shared_set": [1, 2]}, "cpu_shared_set"),
        ({"cpu_dedicated_set": [0, 0]}, "cpu_dedicated_set"),
        ({"vcpus": 2, "cpu_dedicated_set": [0, 1, 2]}, "cpu_dedicated_set"),
        ({"numa_topology": TWO_CELLS, "cpu_shared_set": [9]}, "cpu_shared_set"),
    ],
)
def test_bad_cpu_sets_are_a_400_naming_the_field(api, overrides, field):
    response = api.put("/api/compute-nodes/h3/", report(**{"vcpus": 8, **overrides}))
    assert response.status == 400, response
    assert field in response.error["fields"]


# --- 5. strict PATCH ----------------------------------------------------------------------------


def test_patch_refuses_unknown_and_read_only_fields_and_keeps_a_reason(api):
    put(api, "h2", report())

    typo = api.request("PATCH", "/api/compute-nodes/h2/", {"enable": False})
    assert typo.status == 400, typo
    assert "enable" in typo.error["fields"]
    read_only = api.request("PATCH", "/api/compute-nodes/h2/", {"vcpus": 4, "enabled": False})
    assert read_only.status == 400, read_only
    assert "vcpus" in read_only.error["fields"]
    assert node(api, "h2")["enabled"] is True

    response = api.request(
        "PATCH", "/api/compute-nodes/h2/", {"enabled": False, "disabled_reason": "maintenance"}
    )
    assert response.status == 200, response
    shown = node(api, "h2")
    assert (shown["enabled"], shown["disabled_reason"]) == (False, "maintenance")

    # A reason belongs to a disabled host; enabling clears it.
    wrong = api.request(
        "PATCH", "/api/compute-nodes/h2/", {"enabled": True, "disabled_reason": "x"}
    )
    assert wrong.status == 400, wrong
    assert api.request("PATCH", "/api/compute-nodes/h2/", {"enabled": True}).status == 200
    assert node(api, "h2")["disabled_reason"] == ""


def test_explain_gives_the_reason_a_host_was_disabled(api):
    put(api, "h2", report())
    sync("h2")
    make_flavor(api, "small", vcpus=1, ram=512, disk=1)
    api.request(
        "PATCH", "/api/compute-nodes/h2/", {"enabled": False, "disabled_reason": "maintenance"}
    )

    body = {"name": "x", "flavor": "small", "project_id": "p", "user_id": "u"}
    response = api.post("/api/scheduler/explain/", body)
    assert response.status == 409 and response.error_code == "scheduler.no_valid_host"
    funnel = response.json["errors"][0]["explain"]
    step = next(s for s in funnel["filters"] if s["name"] == "host_enabled")
    dropped = [(d["host"], d["reason"]) for d in step["dropped"]]
    assert dropped == [("h2", "disabled by the operator: maintenance")]


# --- 6. one bad report stops every host --------------------------------------------------------


def test_a_long_device_class_makes_a_provider_named_from_its_address(api):
    long_class = "CUSTOM_" + "X" * 200
    put(api, "h6", report(pci_devices=[{**gpu("0000:81:00.0"), "resource_class": long_class}]))
    sync("h6")

    card = tree(api, "h6")["h6_pci_0000_81_00_0"]
    assert card["inventories"][long_class]["total"] == 4
    assert node(api, "h6")["sync_status"] == "ok"


def test_a_report_whose_provider_name_would_not_fit_is_a_400_naming_the_field(api, settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = [
        "vcpu",
        "tests.providers.plugin_fixtures:LongNamePlugin",
    ]
    response = api.put("/api/compute-nodes/h6/", report(stats={"child": "x" * 250}))
    assert response.status == 400, response
    assert "stats" in response.error["fields"]
    assert api.get("/api/compute-nodes/h6/").status == 404


def test_one_hosts_database_error_fails_that_host_and_the_run_goes_on(api, settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = ["vcpu"]
    put(api, "a-first", report(stats={"child": "x" * 250}))
    put(api, "b-second", report(vcpus=4))
    # The operator turns on a plugin that makes a name the database cannot hold for one host.
    settings.PLACEMENT_RESOURCE_PLUGINS = [
        "vcpu",
        "tests.providers.plugin_fixtures:LongNamePlugin",
    ]
    put(api, "c-new", report(vcpus=2))

    lines = sync()

    assert lines["a-first"].startswith("a-first: failed")
    failed = node(api, "a-first")
    assert failed["sync_status"] == "failed"
    assert "too long" in failed["sync_error"]
    assert not api.get("/resource_providers?name=a-first").json["resource_providers"]
    for hostname, vcpus in (("b-second", 4), ("c-new", 2)):
        assert node(api, hostname)["sync_status"] == "ok"
        assert tree(api, hostname)[hostname]["inventories"]["VCPU"]["total"] == vcpus


def test_a_service_token_reports_but_only_an_admin_deletes(api):
    service = PlacementClient(token="nova:service-project")
    response = service.put("/api/compute-nodes/h7/", report(), headers={"X-Roles": "service"})
    assert response.status == 201
    refused = service.delete("/api/compute-nodes/h7/", headers={"X-Roles": "service"})
    assert refused.status == 403


def test_a_scheduling_pass_whose_host_changed_shape_meanwhile_tries_again(api):
    """Candidates read before a sync deleted their providers are stale: the pass leaves them
    out (a boot then reads afresh) instead of failing on a provider that is gone."""
    from scheduling.models import Flavor
    from scheduling.selectors.scheduler import first_allocations, select_hosts
    from scheduling.services.servers import scheduling_spec

    put(api, "h8", report(vcpus=8, memory_mb=16384, numa_topology=TWO_CELLS))
    sync("h8")
    make_flavor(api, "small", vcpus=1, ram=512, disk=1)
    spec = scheduling_spec(
        flavor=Flavor.objects.get(name="small"), project_id="p", user_id="u", hints={}
    )
    selection = select_hosts(spec=spec)
    put(api, "h8", report(vcpus=8, memory_mb=16384, numa_topology=None))
    sync("h8")

    assert first_allocations(host=selection.chosen.host) is None
    server = boot(api, "small")
    assert server.status == 201, server
    assert set(held(api, server.json["servers"][0]["id"])) == {tree(api, "h8")["h8"]["uuid"]}
