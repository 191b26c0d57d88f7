"""``hw:pci_numa_affinity_policy=preferred`` as Nova fits it: the cells with a free device
first and the device from the instance's cell when it has one, else from another cell (where
``required`` refuses the host). Boots, explain (with ``target_host``) and capacity answer alike,
through HTTP on PostgreSQL."""

import pytest

from tests.providers.devices import pf, provider_uuid, report_and_sync
from tests.scheduling.test_numa_placement import (
    allocations,
    flavor,
    plugins,  # noqa: F401 (the autouse fixture: the NUMA plugins, ratios 1.0, 512 MB reserved)
    request,
)

pytestmark = [pytest.mark.django_db, pytest.mark.postgresql]

POLICY = "hw:pci_numa_affinity_policy"
VFS = ("0000:81:00.1", "0000:81:00.2", "0000:81:00.3", "0000:81:00.4")


def host(cell1_cpus=2, devices=None):
    """Cell 0: 4 CPUs; cell 1: ``cell1_cpus`` CPUs and a PF of 4 VFs (``numa_node`` 1)."""
    cells = [
        {"id": 0, "cpus": [0, 1, 2, 3], "memory_mb": 8192},
        {"id": 1, "cpus": list(range(4, 4 + cell1_cpus)), "memory_mb": 8192},
    ]
    return {
        "vcpus": 4 + cell1_cpus,
        "memory_mb": 16384,
        "local_gb": 100,
        "numa_topology": {"cells": cells},
        "pci_devices": [pf(vfs=VFS)] if devices is None else devices,
    }


def vf_flavor(api, name, policy):
    specs = {"hw:numa_nodes": "1", "resources:SRIOV_NET_VF": "1", POLICY: policy}
    response = flavor(api, name, 2, 512, **specs)
    assert response.status == 201, response


def boot(api, flavor_name, name="vm"):
    return api.post("/api/servers/", request(flavor_name, "d1", name))


def explain(api, flavor_name):
    return api.post("/api/scheduler/explain/", request(flavor_name, "d1"))


def capacity(api, flavor_name):
    response = api.get(f"/api/capacity/?flavor={flavor_name}")
    assert response.status == 200, response
    return {h["name"]: h["fits"] for h in response.json["hosts"]}


def fill(api, flavor_name):
    """Capacity as answered first, then boots until one is refused: ``(capacity, booted,
    the refusal)``, so a test checks capacity against what boots really place."""
    expected = capacity(api, flavor_name)
    booted = 0
    while (response := boot(api, flavor_name, f"vm{booted}")).status == 201:
        booted += 1
    return expected, booted, response


def placed(api, response):
    """``(the cell provider giving the VCPU, the parent of the VF's device provider)``."""
    assert response.status == 201, response
    server = response.json["servers"][0]
    found = allocations(api, server["id"])
    (cell,) = [rp for rp, resources in found.items() if "VCPU" in resources]
    device = api.get(f"/resource_providers/{server['devices'][0]['provider']}").json
    return cell, device["parent_provider_uuid"]


def test_preferred_takes_the_cell_of_the_device_when_it_fits(api):
    # Both cells empty: the spread order alone would take cell 0; the device's cell comes first.
    report_and_sync(api, "d1", host(cell1_cpus=4))
    vf_flavor(api, "pref", "preferred")

    cell, device_parent = placed(api, boot(api, "pref"))

    cell1 = provider_uuid(api, "d1_NUMA1")
    assert (cell, device_parent) == (cell1, cell1)


def test_preferred_falls_back_to_a_device_of_another_cell_where_required_refuses(api):
    report_and_sync(api, "d1", host())
    vf_flavor(api, "pref", "preferred")
    vf_flavor(api, "req", "required")
    cell0, cell1 = provider_uuid(api, "d1_NUMA0"), provider_uuid(api, "d1_NUMA1")
    assert placed(api, boot(api, "pref", "first")) == (cell1, cell1)  # cell 1's CPUs are gone

    refused = boot(api, "req", "second")
    explained = explain(api, "pref")
    fallback = boot(api, "pref", "third")

    assert refused.status == 409, refused
    assert refused.json["errors"][0]["code"] == "scheduler.no_valid_host"
    assert explained.status == 200, explained
    chosen = explained.json["chosen"]["allocations"]
    assert {rp for rp, resources in chosen.items() if "VCPU" in resources} == {cell0}
    assert placed(api, fallback) == (cell0, cell1)


def test_explain_names_the_affine_variant_then_the_fallback(api):
    # Cell 1 has the VFs but no CPU for a 2-vCPU node, cell 0 no device: explain of a host
    # refusing both variants (no VF left) names each.
    report_and_sync(api, "d1", host(devices=[pf(vfs=VFS[:1])]))
    vf_flavor(api, "pref", "preferred")
    assert boot(api, "pref", "first").status == 201

    explained = explain(api, "pref")

    assert explained.status == 409, explained
    groups = explained.json["errors"][0]["explain"]["groups"]
    variants = {g["variant"] for g in groups if g["group"] == "_PCI"}
    assert variants == {
        f"{POLICY}=preferred: device on _NUMA0's cell",
        f"{POLICY}=preferred: device anywhere",
    }


@pytest.mark.parametrize(("policy", "fits"), [("preferred", 3), ("required", 1)])
def test_capacity_is_what_boots_place(api, policy, fits):
    # Cell 1 holds one 2-vCPU instance, cell 0 two; the four VFs are all on cell 1.
    report_and_sync(api, "d1", host())
    vf_flavor(api, "f", policy)

    expected, booted, response = fill(api, "f")

    assert response.status == 409, response
    assert expected == {"d1": fits}
    assert booted == fits


def test_preferred_with_large_pages_tries_the_devices_cell_before_the_page_size(api):
    # Cell 0 has 1 GiB pages, cell 1 only 2 MiB pages and the VF: Nova picks the cell first
    # (the device's), then that cell's largest page size.
    two_mib, gib = 2048, 1048576
    report = host(cell1_cpus=4)
    report["numa_topology"]["cells"][0]["mempages"] = [
        {"size_kb": 4, "total": 7168 * 256},
        {"size_kb": gib, "total": 1},
    ]
    report["numa_topology"]["cells"][1]["mempages"] = [
        {"size_kb": 4, "total": 7168 * 256},
        {"size_kb": two_mib, "total": 512},
    ]
    report_and_sync(api, "d1", report)
    specs = {
        "hw:numa_nodes": "1",
        "resources:SRIOV_NET_VF": "1",
        POLICY: "preferred",
        "hw:mem_page_size": "large",
    }
    assert flavor(api, "big", 2, 1024, **specs).status == 201

    response = boot(api, "big")

    cell1 = provider_uuid(api, "d1_NUMA1")
    assert placed(api, response) == (cell1, cell1)
    pages = allocations(api, response.json["servers"][0]["id"])[cell1]
    assert pages.get(f"CUSTOM_MEMPAGE_{two_mib}KB") == 512, pages


def test_an_instance_without_devices_takes_a_cell_without_devices_first(api):
    # Nova's order when the instance asks no device: the cells with devices last (the spread
    # order alone would take cell 0 of two empty cells).
    report_and_sync(api, "d1", host(cell1_cpus=4, devices=[pf(vfs=VFS, numa_node=0)]))
    assert flavor(api, "plain", 2, 512, **{"hw:numa_nodes": "1"}).status == 201

    response = boot(api, "plain")

    assert response.status == 201, response
    found = allocations(api, response.json["servers"][0]["id"])
    assert {rp for rp, r in found.items() if "VCPU" in r} == {provider_uuid(api, "d1_NUMA1")}
