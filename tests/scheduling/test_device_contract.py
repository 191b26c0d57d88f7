"""Issue 25's Contract, word for word, through HTTP on PostgreSQL (``noauth2`` admin,
``PLACEMENT_RESOURCE_PLUGINS=vcpu,memory,disk,numa,pci``)."""

import pytest

from tests.providers.devices import report_and_sync

pytestmark = [pytest.mark.django_db, pytest.mark.postgresql]

VFS = ["0000:81:00.1", "0000:81:00.2"]
D1 = {
    "vcpus": 8,
    "memory_mb": 16384,
    "local_gb": 100,
    "numa_topology": {
        "cells": [
            {"id": 0, "cpus": [0, 1, 2, 3], "memory_mb": 8192},
            {"id": 1, "cpus": [4, 5, 6, 7], "memory_mb": 8192},
        ]
    },
    "pci_devices": [
        {
            "address": "0000:81:00.0",
            "vendor_id": "8086",
            "product_id": "1572",
            "numa_node": 1,
            "resource_class": "SRIOV_NET_VF",
            "vfs": VFS,
        }
    ],
}


@pytest.fixture(autouse=True)
def d1(api, settings):
    """Step 1: the host d1, reported and synced."""
    settings.PLACEMENT_RESOURCE_PLUGINS = ["vcpu", "memory", "disk", "numa", "pci"]
    report_and_sync(api, "d1", D1)
    assert api.get("/api/compute-nodes/d1/").json["sync_status"] == "ok"


def boot(api, flavor, name):
    return api.post(
        "/api/servers/", {"name": name, "flavor": flavor, "project_id": "p", "user_id": "u"}
    )


def test_step_2_two_boots_get_distinct_vfs_a_third_is_refused_a_freed_vf_is_reused(api):
    flavor = {"vcpus": 1, "ram": 512, "disk": 1, "extra_specs": {"resources:SRIOV_NET_VF": "1"}}
    assert api.post("/api/flavors/", {"name": "vf.f", **flavor}).status == 201
    first, second = boot(api, "vf.f", "s1"), boot(api, "vf.f", "s2")
    assert first.status == second.status == 201
    (a,), (b,) = first.json["servers"][0]["devices"], second.json["servers"][0]["devices"]
    assert a["address"] in VFS and b["address"] in VFS and a["address"] != b["address"]
    assert boot(api, "vf.f", "s3").status == 409

    assert api.delete(f"/api/servers/{first.json['servers'][0]['id']}/").status == 204
    again = boot(api, "vf.f", "s4")
    assert again.status == 201
    assert again.json["servers"][0]["devices"][0]["address"] == a["address"]


def test_step_3_required_pci_numa_affinity_puts_the_vcpus_on_the_devices_cell(api):
    flavor = {
        "vcpus": 2,
        "ram": 1024,
        "disk": 1,
        "extra_specs": {
            "hw:numa_nodes": "1",
            "resources:SRIOV_NET_VF": "1",
            "hw:pci_numa_affinity_policy": "required",
        },
    }
    assert api.post("/api/flavors/", {"name": "aff.f", **flavor}).status == 201
    response = boot(api, "aff.f", "a1")
    assert response.status == 201, response
    server = response.json["servers"][0]
    allocations = api.get(f"/allocations/{server['id']}").json["allocations"]
    cell1 = api.get("/resource_providers?name=d1_NUMA1").json["resource_providers"][0]["uuid"]
    vcpu = {rp: a["resources"]["VCPU"] for rp, a in allocations.items() if "VCPU" in a["resources"]}
    assert vcpu == {cell1: 2}
