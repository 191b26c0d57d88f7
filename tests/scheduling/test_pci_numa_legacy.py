"""``hw:pci_numa_affinity_policy=legacy``, Nova's default (an instance with a NUMA topology
and no policy): a device that reports a NUMA node only from the instance's cell, a device
that reports none (the pci plugin's ``CUSTOM_PCI_NO_NUMA_AFFINITY``, under the host's root)
from anywhere. Boots, explain and capacity answer alike, through HTTP on PostgreSQL."""

import pytest

from tests.providers.devices import pf, provider_uuid, report_and_sync
from tests.scheduling.test_numa_placement import (
    allocations,
    flavor,
    plugins,  # noqa: F401 (the autouse fixture: the NUMA plugins, ratios 1.0, 512 MB reserved)
)
from tests.scheduling.test_pci_numa_preferred import (
    POLICY,
    VFS,
    boot,
    capacity,
    explain,
    fill,
    host,
    placed,
)

pytestmark = [pytest.mark.django_db, pytest.mark.postgresql]

LOOSE = ("0000:82:00.1",)  # the VF of a PF that reports no NUMA node


def loose_pf():
    return pf(address="0000:82:00.0", vfs=LOOSE, numa_node=None)


def vf_flavor(api, name, policy, **specs):
    specs = {"resources:SRIOV_NET_VF": "1", **specs}
    if policy is not None:
        specs[POLICY] = policy
    response = flavor(api, name, 2, 512, **specs)
    assert response.status == 201, response


def numa_flavor(api, name, policy):
    vf_flavor(api, name, policy, **{"hw:numa_nodes": "1"})


def device_address(response):
    return response.json["servers"][0]["devices"][0]["address"]


@pytest.mark.parametrize("policy", ["legacy", None])
def test_legacy_takes_the_device_on_the_instances_cell(api, policy):
    # Both cells have room; the device reports cell 1: CPUs, memory and VF from cell 1.
    report_and_sync(api, "d1", host(cell1_cpus=4))
    numa_flavor(api, "leg", policy)

    cell, device_parent = placed(api, boot(api, "leg"))

    cell1 = provider_uuid(api, "d1_NUMA1")
    assert (cell, device_parent) == (cell1, cell1)


@pytest.mark.parametrize("policy", ["legacy", None])
def test_legacy_refuses_a_host_whose_only_free_device_reports_the_other_cell(api, policy):
    # Cell 1 (the VFs' cell) holds one 2-vCPU instance; once it is taken, cell 0 has the CPUs
    # but no device, and the device is not "without NUMA affinity": refused where preferred
    # places.
    report_and_sync(api, "d1", host())
    numa_flavor(api, "leg", policy)
    numa_flavor(api, "pref", "preferred")
    cell1 = provider_uuid(api, "d1_NUMA1")
    assert placed(api, boot(api, "leg", "first")) == (cell1, cell1)

    refused = boot(api, "leg", "second")
    explained = explain(api, "leg")
    preferred = boot(api, "pref", "third")

    assert refused.status == 409, refused
    assert refused.json["errors"][0]["code"] == "scheduler.no_valid_host"
    assert explained.status == 409, explained
    groups = explained.json["errors"][0]["explain"]["groups"]
    key = f"{POLICY}=legacy" if policy else f"{POLICY}=legacy (unset)"
    assert {g["variant"] for g in groups if g["group"] == "_PCI"} == {
        f"{key}: device on _NUMA0's cell"
    }
    # No device without a NUMA node was ever reported: the trait of the second variant does
    # not exist, and explain says so for that variant (nothing was written to make it).
    assert {g["error"] for g in groups if g["variant"] == f"{key}: device with no NUMA node"} == {
        "No such trait: CUSTOM_PCI_NO_NUMA_AFFINITY"
    }
    assert placed(api, preferred) == (provider_uuid(api, "d1_NUMA0"), cell1)


@pytest.mark.parametrize("policy", ["legacy", None])
def test_legacy_places_with_a_device_that_reports_no_numa_node(api, policy):
    # Cell 1 (1 CPU) cannot take a 2-vCPU node: its VFs are out, the PF without a NUMA node
    # gives the VF to an instance on cell 0.
    report_and_sync(api, "d1", host(cell1_cpus=1, devices=[pf(vfs=VFS), loose_pf()]))
    numa_flavor(api, "leg", policy)

    response = boot(api, "leg")

    cell, device_parent = placed(api, response)
    assert cell == provider_uuid(api, "d1_NUMA0")
    assert device_parent == provider_uuid(api, "d1")
    assert device_address(response) == LOOSE[0]


def test_required_refuses_the_device_that_reports_no_numa_node(api):
    report_and_sync(api, "d1", host(cell1_cpus=1, devices=[pf(vfs=VFS), loose_pf()]))
    numa_flavor(api, "req", "required")

    response = boot(api, "req")

    assert response.status == 409, response


@pytest.mark.parametrize("policy", ["legacy", None])
def test_without_a_numa_topology_the_policy_has_no_effect(api, policy):
    # No hw:numa_nodes: the instance has no NUMA topology, the VF of cell 1 is taken although
    # cell 1 cannot give the 2 vCPUs (they come from cell 0).
    report_and_sync(api, "d1", host(cell1_cpus=1))
    vf_flavor(api, "flat", policy)

    response = boot(api, "flat")

    assert response.status == 201, response
    assert device_address(response) in VFS
    found = allocations(api, response.json["servers"][0]["id"])
    assert {rp for rp, r in found.items() if "VCPU" in r} == {provider_uuid(api, "d1_NUMA0")}


@pytest.mark.parametrize(("policy", "fits"), [("legacy", 2), (None, 2), ("preferred", 3)])
def test_capacity_is_what_boots_place(api, policy, fits):
    # Cell 1 holds one 2-vCPU instance (with a VF of cell 1), cell 0 two; one VF reports no
    # NUMA node: legacy places the second instance on cell 0 with it, and no third.
    report_and_sync(api, "d1", host(devices=[pf(vfs=VFS), loose_pf()]))
    numa_flavor(api, "f", policy)

    expected, booted, response = fill(api, "f")

    assert response.status == 409, response
    assert expected == {"d1": fits}
    assert booted == fits


def test_a_legacy_boot_before_any_device_without_numa_node_was_synced(api):
    # The trait the second variant asks may not exist yet (no host reported such a device):
    # the boot is no 400, the variant finds nothing.
    report_and_sync(api, "d1", host())
    assert api.get("/traits/CUSTOM_PCI_NO_NUMA_AFFINITY").status == 404
    numa_flavor(api, "leg", "legacy")

    assert explain(api, "leg").status == 200
    assert capacity(api, "leg") == {"d1": 1}
    assert boot(api, "leg", "first").status == 201
    assert boot(api, "leg", "second").status == 409
    # Reads and boots leave the trait to the sync: explain and capacity may read a replica.
    assert api.get("/traits/CUSTOM_PCI_NO_NUMA_AFFINITY").status == 404
