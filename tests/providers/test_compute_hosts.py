"""Hosts report, the sync turns reports into providers, the Placement API shows them."""

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from providers.models import ComputeNode, InventoryChange
from tests.conftest import PlacementClient
from tests.providers.hosts import report, sync, tree

pytestmark = pytest.mark.django_db

PLUGINS = ["vcpu", "memory", "disk", "numa", "pci"]


@pytest.fixture(autouse=True)
def host_settings(settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = PLUGINS
    settings.PLACEMENT_ALLOCATION_RATIOS = {"VCPU": 16.0, "MEMORY_MB": 1.5, "DISK_GB": 1.0}
    settings.PLACEMENT_RESERVED = {"VCPU": 0, "MEMORY_MB": 512, "DISK_GB": 0}
    return settings


def put(api, hostname, body, **kw):
    return api.put(f"/api/compute-nodes/{hostname}/", body, **kw)


def gpu(address, count=4, **extra):
    return {
        "address": address,
        "vendor_id": "10de",
        "product_id": "1eb8",
        "resource_class": "VGPU",
        "count": count,
        **extra,
    }


def test_report_then_sync_gives_a_provider_with_inventories(api):
    response = put(api, "host-1", report())
    assert response.status == 201
    assert response.json["hostname"] == "host-1"
    assert response.json["sync_status"] == "pending"

    sync()

    host = tree(api, "host-1")
    assert list(host) == ["host-1"]
    inventories = host["host-1"]["inventories"]
    assert inventories["VCPU"]["total"] == 16
    assert inventories["VCPU"]["allocation_ratio"] == 16.0
    assert inventories["MEMORY_MB"]["total"] == 65536
    assert inventories["MEMORY_MB"]["reserved"] == 512
    assert inventories["MEMORY_MB"]["allocation_ratio"] == 1.5
    assert inventories["DISK_GB"] == {
        "total": 500,
        "reserved": 0,
        "min_unit": 1,
        "max_unit": 500,
        "step_size": 1,
        "allocation_ratio": 1.0,
    }
    node = api.get("/api/compute-nodes/host-1/").json
    assert node["sync_status"] == "ok"
    assert node["provider"] == host["host-1"]["uuid"]
    assert node["stale"] is False


def test_same_report_again_is_idempotent_and_needs_no_sync(api):
    assert put(api, "host-1", report()).status == 201
    sync()
    generation = tree(api, "host-1")["host-1"]["generation"]

    again = put(api, "host-1", report())
    assert again.status == 200
    sync()

    assert tree(api, "host-1")["host-1"]["generation"] == generation
    assert ComputeNode.objects.count() == 1


def test_changed_report_changes_inventory_and_records_history(api):
    put(api, "host-1", report())
    sync()
    put(api, "host-1", report(vcpus=32))
    sync()

    assert tree(api, "host-1")["host-1"]["inventories"]["VCPU"]["total"] == 32
    change = InventoryChange.objects.filter(resource_class__name="VCPU").first()
    assert (change.old_total, change.new_total) == (16, 32)
    assert change.compute_node.hostname == "host-1"
    # The first sync recorded every class as added.
    assert InventoryChange.objects.filter(old_total__isnull=True).count() == 3


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (report(vcpus=-4), "vcpus"),
        (report(memory_mb=-1), "memory_mb"),
        (report(colour="blue"), "colour"),
        (report(numa_topology={"cells": [{"id": 0, "cpus": [0], "memory_mb": -2}]}), "memory_mb"),
        (report(numa_topology={"cells": [{"id": 0, "cpus": "0-3", "memory_mb": 2}]}), "cpus"),
        (report(numa_topology={"cels": []}), "numa_topology.cels"),
        (
            report(
                pci_devices=[
                    {
                        "address": "nope",
                        "vendor_id": "10de",
                        "product_id": "1eb8",
                        "resource_class": "VGPU",
                    }
                ]
            ),
            "pci_devices.0.address",
        ),
        (
            report(
                pci_devices=[
                    {
                        "address": "0000:81:00.0",
                        "vendor_id": "10de",
                        "product_id": "1eb8",
                        "resource_class": "vgpu",
                    }
                ]
            ),
            "resource_class",
        ),
        (
            report(
                pci_devices=[{"address": "0000:81:00.0", "vendor_id": "10de", "product_id": "1eb8"}]
            ),
            "resource_class",
        ),
    ],
)
def test_bad_report_is_a_400_naming_the_field_and_stores_nothing(api, body, field):
    response = put(api, "host-1", body)
    assert response.status == 400, response
    assert response.error_code == "api.invalid"
    assert any(field in name for name in response.error["fields"]), response.error
    assert not ComputeNode.objects.exists()


def test_bad_report_leaves_the_previous_one_intact(api):
    put(api, "host-1", report())
    assert put(api, "host-1", report(vcpus=-4)).status == 400
    assert ComputeNode.objects.get().vcpus == 16


def test_reports_need_a_service_or_admin_token(api):
    member = PlacementClient(token="alice:p1")
    assert put(member, "host-1", report()).status == 403
    service = PlacementClient(token="nova:service-project")
    response = put(service, "host-1", report(), headers={"X-Roles": "service"})
    assert response.status == 201


def test_numa_cells_become_children_holding_vcpu_and_memory(api):
    numa = {
        "cells": [
            {"id": 0, "cpus": [0, 1, 2, 3], "memory_mb": 8192},
            {"id": 1, "cpus": [4, 5, 6, 7], "memory_mb": 8192},
        ]
    }
    put(api, "host-n", report(vcpus=8, memory_mb=16384, numa_topology=numa))
    sync()

    host = tree(api, "host-n")
    assert set(host) == {"host-n", "host-n_NUMA0", "host-n_NUMA1"}
    root = host["host-n"]
    assert set(root["inventories"]) == {"DISK_GB"}
    for name in ("host-n_NUMA0", "host-n_NUMA1"):
        cell = host[name]
        assert cell["parent"] == root["uuid"]
        assert cell["traits"] == ["HW_NUMA_ROOT"]
        assert cell["inventories"]["VCPU"]["total"] == 4
        assert cell["inventories"]["MEMORY_MB"]["total"] == 8192
    # The cells carry their full memory: the host's reservation is held for the whole host
    # (scheduling.host_limits), never carved out of one cell.
    assert host["host-n_NUMA0"]["inventories"]["MEMORY_MB"]["reserved"] == 0
    assert host["host-n_NUMA1"]["inventories"]["MEMORY_MB"]["reserved"] == 0


def test_pci_devices_become_one_provider_per_device_with_vendor_traits(api):
    devices = [
        gpu("0000:81:00.0", count=4),
        gpu("0000:82:00.0", count=4),
        {
            "address": "0000:03:00.1",
            "vendor_id": "8086",
            "product_id": "154c",
            "resource_class": "SRIOV_NET_VF",
            "count": 8,
        },
    ]
    put(api, "host-p", report(pci_devices=devices))
    sync()

    host = tree(api, "host-p")
    for address in ("0000_81_00_0", "0000_82_00_0"):
        card = host[f"host-p_pci_{address}"]
        assert card["parent"] == host["host-p"]["uuid"]
        assert card["inventories"]["VGPU"]["total"] == 4
        assert card["inventories"]["VGPU"]["max_unit"] == 4
        # No numa_node reported: the trait hw:pci_numa_affinity_policy=legacy asks.
        assert card["traits"] == [
            "CUSTOM_PCI_NO_NUMA_AFFINITY",
            "CUSTOM_PCI_PRODUCT_1EB8",
            "CUSTOM_PCI_VENDOR_10DE",
        ]
    assert host["host-p_pci_0000_03_00_1"]["inventories"]["SRIOV_NET_VF"]["total"] == 8

    # A device gone from the report: its provider goes too.
    put(api, "host-p", report(pci_devices=devices[:2]))
    sync()
    assert set(tree(api, "host-p")) == {
        "host-p",
        "host-p_pci_0000_81_00_0",
        "host-p_pci_0000_82_00_0",
    }


def test_operator_overrides_survive_a_sync(api, settings):
    put(api, "host-1", report())
    sync()
    root = tree(api, "host-1")["host-1"]
    vcpu = dict(root["inventories"]["VCPU"], allocation_ratio=2.0, reserved=2)
    response = api.put(
        f"/resource_providers/{root['uuid']}/inventories/VCPU",
        {**vcpu, "resource_provider_generation": root["generation"]},
    )
    assert response.status == 200

    put(api, "host-1", report(vcpus=24))
    sync()

    inventory = tree(api, "host-1")["host-1"]["inventories"]["VCPU"]
    assert inventory["total"] == 24
    assert (inventory["allocation_ratio"], inventory["reserved"]) == (2.0, 2)
    # ...and one the operator left alone follows a changed default.
    settings.PLACEMENT_ALLOCATION_RATIOS = {"VCPU": 16.0, "MEMORY_MB": 1.0, "DISK_GB": 1.0}
    sync("host-1")
    inventories = tree(api, "host-1")["host-1"]["inventories"]
    assert inventories["MEMORY_MB"]["allocation_ratio"] == 1.0
    assert inventories["VCPU"]["allocation_ratio"] == 2.0


def test_inventory_the_operator_added_by_hand_is_kept(api):
    put(api, "host-1", report())
    sync()
    root = tree(api, "host-1")["host-1"]
    api.put("/resource_classes/CUSTOM_LICENSE")
    response = api.post(
        f"/resource_providers/{root['uuid']}/inventories",
        {"resource_class": "CUSTOM_LICENSE", "total": 4},
    )
    assert response.status == 201
    put(api, "host-1", report(vcpus=8))
    sync()
    inventories = tree(api, "host-1")["host-1"]["inventories"]
    assert inventories["CUSTOM_LICENSE"]["total"] == 4
    assert inventories["VCPU"]["total"] == 8


def test_a_plugin_that_raises_is_contained(api, settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = [
        "vcpu",
        "tests.providers.plugin_fixtures:ExplodingPlugin",
        "memory",
    ]
    put(api, "host-1", report())
    sync()

    inventories = tree(api, "host-1")["host-1"]["inventories"]
    assert set(inventories) == {"VCPU", "MEMORY_MB"}
    node = api.get("/api/compute-nodes/host-1/").json
    assert node["sync_status"] == "partial"
    assert "disk controller on fire" in node["plugin_errors"]["exploding"]


def test_compute_units_from_stats_or_cpu_rating(api, settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = ["vcpu", "compute_units"]
    settings.PLACEMENT_CPU_MODEL_RATINGS = {"Skylake-Server": 130.0}
    put(api, "stated", report(stats={"compute_units": 1600}))
    put(api, "rated", report(vcpus=10))
    put(api, "unknown-model", report(vcpus=10, cpu_info={"model": "Mystery"}))
    sync()
    assert tree(api, "stated")["stated"]["inventories"]["CUSTOM_CU"]["total"] == 1600
    assert tree(api, "rated")["rated"]["inventories"]["CUSTOM_CU"]["total"] == 1300
    assert tree(api, "unknown-model")["unknown-model"]["inventories"]["CUSTOM_CU"]["total"] == 1000
    cu = api.get("/api/resource-classes/CUSTOM_CU/").json
    assert cu["unit"] == "compute unit"


def test_changed_plugin_list_resyncs_every_host(api, settings):
    put(api, "host-1", report())
    sync()
    settings.PLACEMENT_RESOURCE_PLUGINS = [*PLUGINS, "compute_units"]
    sync()
    assert "CUSTOM_CU" in tree(api, "host-1")["host-1"]["inventories"]


def test_operator_can_disable_a_host(api):
    put(api, "host-1", report())
    response = api.request("PATCH", "/api/compute-nodes/host-1/", {"enabled": False})
    assert response.status == 200
    assert response.json["enabled"] is False
    listed = api.get("/api/compute-nodes/?enabled=false").json
    assert [h["hostname"] for h in listed["results"]] == ["host-1"]


def test_sync_inventory_for_an_unknown_host_is_an_error():
    with pytest.raises(CommandError, match="nope"):
        call_command("sync_inventory", "--host", "nope")
