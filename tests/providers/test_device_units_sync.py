"""Device units in host reports, kept by the host sync on the provider of their physical
device, through HTTP on PostgreSQL; an assigned unit never vanishes (the host is blocked)."""

import io

import pytest
from django.core.management import call_command

from providers.plugins.builtin import PCI_NO_NUMA_TRAIT, PciPlugin
from tests.providers.devices import (
    PLUGINS,
    boot,
    gpu,
    host_report,
    node,
    pf,
    provider_uuid,
    report_and_sync,
)
from tests.scheduling.scheduler_helpers import make_flavor

pytestmark = [pytest.mark.django_db, pytest.mark.postgresql]


@pytest.fixture(autouse=True)
def plugins(settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = PLUGINS


def units(api, hostname):
    response = api.get(f"/api/compute-nodes/{hostname}/devices/")
    assert response.status == 200, response
    return response.json["devices"]


def test_a_pfs_vfs_become_units_of_its_provider_under_its_numa_cell(api):
    report_and_sync(api, "d1", host_report([pf()]))

    assert node(api, "d1")["sync_status"] == "ok"
    device = provider_uuid(api, "d1_pci_0000_81_00_0")
    provider = api.get(f"/resource_providers/{device}").json
    assert provider["parent_provider_uuid"] == provider_uuid(api, "d1_NUMA1")
    inventory = api.get(f"/resource_providers/{device}/inventories").json["inventories"]
    assert inventory["SRIOV_NET_VF"]["total"] == 2
    assert units(api, "d1") == [
        {
            "provider": device,
            "provider_name": "d1_pci_0000_81_00_0",
            "resource_class": "SRIOV_NET_VF",
            "address": address,
            "parent_address": "0000:81:00.0",
            "mdev_type": None,
            "consumer": None,
        }
        for address in ("0000:81:00.1", "0000:81:00.2")
    ]


def traits(api, name):
    uuid = provider_uuid(api, name)
    return set(api.get(f"/resource_providers/{uuid}/traits").json["traits"])


def test_a_device_reporting_no_numa_node_has_the_no_numa_affinity_trait(api):
    # The GPU reports no numa_node: under the host's root, with the trait legacy affinity
    # asks; the PF reports cell 1: under its cell, without it.
    report_and_sync(api, "d1", host_report([pf(), gpu()]))

    gpu_traits = traits(api, "d1_pci_0000_3b_00_0")
    assert PCI_NO_NUMA_TRAIT == "CUSTOM_PCI_NO_NUMA_AFFINITY"
    assert {PCI_NO_NUMA_TRAIT, "CUSTOM_PCI_VENDOR_10DE"} <= gpu_traits
    assert PCI_NO_NUMA_TRAIT not in traits(api, "d1_pci_0000_81_00_0")
    device = api.get(f"/resource_providers/{provider_uuid(api, 'd1_pci_0000_3b_00_0')}").json
    assert device["parent_provider_uuid"] == provider_uuid(api, "d1")


def test_hosts_synced_by_the_previous_pci_plugin_are_synced_again_with_the_trait(api, monkeypatch):
    # A host synced by version 3 (no trait): the version bump makes the next periodic sync
    # (every host needing one) sync it again, and the device gets the trait.
    contribute = PciPlugin.contribute

    def previous(self, report, tree):
        contribute(self, report, tree)
        for spec in tree.providers():
            spec.traits.discard(PCI_NO_NUMA_TRAIT)

    monkeypatch.setattr(PciPlugin, "version", "3")
    monkeypatch.setattr(PciPlugin, "contribute", previous)
    report_and_sync(api, "d1", host_report([gpu()]))
    assert PCI_NO_NUMA_TRAIT not in traits(api, "d1_pci_0000_3b_00_0")
    unchanged = io.StringIO()
    call_command("sync_inventory", stdout=unchanged)
    assert PCI_NO_NUMA_TRAIT not in traits(api, "d1_pci_0000_3b_00_0")

    monkeypatch.undo()
    out = io.StringIO()
    call_command("sync_inventory", stdout=out)

    assert "d1" in out.getvalue(), out.getvalue()
    assert PCI_NO_NUMA_TRAIT in traits(api, "d1_pci_0000_3b_00_0")
    assert node(api, "d1")["sync_status"] == "ok"


def test_vgpu_slots_named_or_counted_and_a_plain_device_is_its_own_unit(api):
    devices = [
        gpu("0000:3b:00.0", mdev_type="nvidia-35", count=2),
        gpu("0000:3c:00.0", mdev_type="nvidia-36", instances=["slot-a", "slot-b", "slot-c"]),
        {
            "address": "0000:5e:00.0",
            "vendor_id": "1af4",
            "product_id": "1000",
            "resource_class": "PCI_DEVICE",
        },
    ]
    report_and_sync(api, "g1", host_report(devices, numa_topology=None))

    found = {(u["provider_name"], u["address"]): u for u in units(api, "g1")}
    assert set(found) == {
        ("g1_pci_0000_3b_00_0", "nvidia-35-0"),
        ("g1_pci_0000_3b_00_0", "nvidia-35-1"),
        ("g1_pci_0000_3c_00_0", "slot-a"),
        ("g1_pci_0000_3c_00_0", "slot-b"),
        ("g1_pci_0000_3c_00_0", "slot-c"),
        ("g1_pci_0000_5e_00_0", "0000:5e:00.0"),
    }
    assert found[("g1_pci_0000_3c_00_0", "slot-b")]["mdev_type"] == "nvidia-36"
    assert found[("g1_pci_0000_3c_00_0", "slot-b")]["parent_address"] == "0000:3c:00.0"
    assert found[("g1_pci_0000_5e_00_0", "0000:5e:00.0")]["parent_address"] is None
    vgpus = api.get(
        f"/resource_providers/{provider_uuid(api, 'g1_pci_0000_3c_00_0')}/inventories"
    ).json["inventories"]["VGPU"]
    assert vgpus["total"] == 3


def test_units_follow_the_report(api):
    report_and_sync(api, "d1", host_report([pf(vfs=["0000:81:00.1", "0000:81:00.2"])]))
    report_and_sync(api, "d1", host_report([pf(vfs=["0000:81:00.2", "0000:81:00.3"])]))

    assert [u["address"] for u in units(api, "d1")] == ["0000:81:00.2", "0000:81:00.3"]
    report_and_sync(api, "d1", host_report([]))
    assert units(api, "d1") == []
    assert node(api, "d1")["sync_status"] == "ok"


@pytest.mark.parametrize(
    ("device", "field"),
    [
        (pf(count=3), "pci_devices.0.count"),
        (pf(vfs=["0000:81:00.1", "0000:81:00.1"]), "pci_devices.0.vfs"),
        (pf(vfs=["0000:81:00.0"]), "pci_devices.0.vfs"),
        (pf(vfs=["not-an-address"]), "pci_devices.0.vfs.0"),
        (pf(vfs=[]), "pci_devices.0.vfs"),
        (pf(mdev_type="nvidia-35"), "pci_devices.0.vfs"),
        (gpu(instances=["a"]), "pci_devices.0.instances"),
    ],
)
def test_a_malformed_unit_list_is_a_400_naming_the_field_and_stores_nothing(api, device, field):
    response = api.put("/api/compute-nodes/bad/", host_report([device]))

    assert response.status == 400, response
    assert field in str(response.json["errors"][0].get("fields", response.json)), response.json
    assert api.get("/api/compute-nodes/bad/").status == 404


def test_a_vf_listed_as_another_device_is_a_400(api):
    other = pf("0000:81:00.1", vfs=["0000:81:00.5"])
    response = api.put("/api/compute-nodes/bad/", host_report([pf(), other]))

    assert response.status == 400, response
    assert "listed twice" in str(response.json)


def test_an_assigned_unit_cannot_vanish_the_host_is_blocked_naming_it(api):
    report_and_sync(api, "d1", host_report([pf()]))
    make_flavor(api, "vf.f", vcpus=1, ram=512, disk=1, extra_specs={"resources:SRIOV_NET_VF": "1"})
    server = boot(api, "vf.f").json["servers"][0]
    held = server["devices"][0]["address"]
    remaining = [a for a in ("0000:81:00.1", "0000:81:00.2") if a != held]

    report_and_sync(api, "d1", host_report([pf(vfs=[*remaining, "0000:81:00.3"])]))

    host = node(api, "d1")
    assert host["sync_status"] == "blocked"
    assert held in host["sync_error"]
    assert server["id"] in host["sync_error"]
    # Nothing applied: the units are those of the last good report.
    assert [u["address"] for u in units(api, "d1")] == ["0000:81:00.1", "0000:81:00.2"]

    # Once the server is gone, the same report goes through.
    assert api.delete(f"/api/servers/{server['id']}/").status == 204
    report_and_sync(api, "d1", host_report([pf(vfs=[*remaining, "0000:81:00.3"])]))
    assert node(api, "d1")["sync_status"] == "ok"
    assert [u["address"] for u in units(api, "d1")] == sorted([*remaining, "0000:81:00.3"])


def test_a_device_removed_while_a_unit_is_assigned_blocks_the_host(api):
    report_and_sync(api, "d1", host_report([pf()]))
    make_flavor(api, "vf.f", vcpus=1, ram=512, disk=1, extra_specs={"resources:SRIOV_NET_VF": "1"})
    assert boot(api, "vf.f").status == 201

    report_and_sync(api, "d1", host_report([]))

    host = node(api, "d1")
    assert host["sync_status"] == "blocked"
    assert "d1_pci_0000_81_00_0" in host["sync_error"]
