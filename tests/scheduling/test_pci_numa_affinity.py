"""``hw:pci_numa_affinity_policy=required``: the device comes from the NUMA cell that gives
the instance's CPUs and memory (``same_subtree``). Through HTTP on PostgreSQL."""

import pytest

from tests.providers.devices import PLUGINS, boot, host_report, pf, provider_uuid, report_and_sync
from tests.scheduling.scheduler_helpers import make_flavor

pytestmark = [pytest.mark.django_db, pytest.mark.postgresql]

SMALL_CELL1 = {
    "cells": [
        {"id": 0, "cpus": [0, 1, 2, 3], "memory_mb": 8192},
        {"id": 1, "cpus": [4, 5, 6, 7], "memory_mb": 1024},
    ]
}


@pytest.fixture(autouse=True)
def plugins(settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = PLUGINS
    settings.PLACEMENT_RESERVED = {}


def flavor(api, name, **specs):
    extra = {"hw:numa_nodes": "1", "resources:SRIOV_NET_VF": "1", **specs}
    return make_flavor(api, name, vcpus=2, ram=2048, disk=1, extra_specs=extra)


def vcpu_providers(api, server):
    allocations = api.get(f"/allocations/{server['id']}").json["allocations"]
    return {rp for rp, a in allocations.items() if "VCPU" in a["resources"]}


def test_without_the_policy_the_device_is_nova_defaults_legacy(api):
    # The VF reports cell 1, which cannot give the memory: Nova's default (legacy) takes a
    # device that reports a NUMA node only on the instance's cell (test_pci_numa_legacy).
    report_and_sync(api, "d1", host_report([pf()], numa_topology=SMALL_CELL1))
    flavor(api, "free.f")

    response = boot(api, "free.f")

    assert response.status == 409, response
    assert response.json["errors"][0]["code"] == "scheduler.no_valid_host"


@pytest.mark.parametrize("policy", ["required", "socket"])
def test_socket_asks_a_device_of_the_instances_own_cell_as_required(api, policy):
    # The reports carry no socket: a device of the instance's own cell is the one known to be
    # on its socket. Cell 0 gives the CPUs and memory but has no device: refused.
    report_and_sync(api, "d1", host_report([pf()], numa_topology=SMALL_CELL1))
    flavor(api, "sock.f", **{"hw:pci_numa_affinity_policy": policy})

    refused = boot(api, "sock.f")

    assert refused.status == 409, refused
    assert refused.json["errors"][0]["code"] == "scheduler.no_valid_host"


def test_socket_takes_cpus_memory_and_the_vf_from_one_cell(api):
    report_and_sync(api, "d1", host_report([pf()]))
    flavor(api, "sock.f", **{"hw:pci_numa_affinity_policy": "socket"})

    server = boot(api, "sock.f").json["servers"][0]

    cell1 = provider_uuid(api, "d1_NUMA1")
    assert vcpu_providers(api, server) == {cell1}
    device = api.get(f"/resource_providers/{server['devices'][0]['provider']}").json
    assert device["parent_provider_uuid"] == cell1


def test_required_refuses_a_host_whose_devices_cell_cannot_give_the_memory(api):
    report_and_sync(api, "d1", host_report([pf()], numa_topology=SMALL_CELL1))
    flavor(api, "aff.f", **{"hw:pci_numa_affinity_policy": "required"})

    response = boot(api, "aff.f")

    assert response.status == 409, response
    assert response.json["errors"][0]["code"] == "scheduler.no_valid_host"


def test_required_takes_cpus_memory_and_the_vf_from_one_cell(api):
    report_and_sync(api, "d1", host_report([pf()]))
    flavor(api, "aff.f", **{"hw:pci_numa_affinity_policy": "required"})

    server = boot(api, "aff.f").json["servers"][0]

    cell1 = provider_uuid(api, "d1_NUMA1")
    assert vcpu_providers(api, server) == {cell1}
    device = api.get(f"/resource_providers/{server['devices'][0]['provider']}").json
    assert device["parent_provider_uuid"] == cell1


def _affinity_flavor(policy):
    return {
        "name": f"x-{policy}",
        "vcpus": 1,
        "ram": 512,
        "disk": 1,
        "extra_specs": {"hw:numa_nodes": "1", "hw:pci_numa_affinity_policy": policy},
    }


@pytest.mark.parametrize("policy", ["preferred", "legacy", "socket"])
def test_policies_nova_takes_are_kept(api, policy):
    # Nova's API takes them (a flavor from Nova imports); `socket` is tested above,
    # `preferred` in test_pci_numa_preferred, `legacy` in test_pci_numa_legacy.
    response = api.post("/api/flavors/", _affinity_flavor(policy))

    assert response.status == 201, response
    assert response.json["extra_specs"]["hw:pci_numa_affinity_policy"] == policy


def test_a_policy_nova_refuses_is_a_400(api):
    response = api.post("/api/flavors/", _affinity_flavor("sometimes"))

    assert response.status == 400, response
    assert "hw:pci_numa_affinity_policy" in response.json["errors"][0]["detail"]
