"""Builders of the device tests: a host with devices (VFs, vGPU slots) reported and synced,
through HTTP."""

import io

from django.core.management import call_command

PLUGINS = ["vcpu", "memory", "disk", "numa", "pci"]
TWO_CELLS = {
    "cells": [
        {"id": 0, "cpus": [0, 1, 2, 3], "memory_mb": 8192},
        {"id": 1, "cpus": [4, 5, 6, 7], "memory_mb": 8192},
    ]
}


def pf(address="0000:81:00.0", vfs=("0000:81:00.1", "0000:81:00.2"), **extra):
    return {
        "address": address,
        "vendor_id": "8086",
        "product_id": "1572",
        "resource_class": "SRIOV_NET_VF",
        "numa_node": 1,
        "vfs": list(vfs),
        **extra,
    }


def gpu(address="0000:3b:00.0", **extra):
    return {
        "address": address,
        "vendor_id": "10de",
        "product_id": "1eb8",
        "resource_class": "VGPU",
        **extra,
    }


def host_report(devices, **overrides):
    return {
        "vcpus": 8,
        "memory_mb": 16384,
        "local_gb": 100,
        "numa_topology": TWO_CELLS,
        "pci_devices": devices,
        **overrides,
    }


def report_and_sync(api, hostname, body):
    """PUT the report, run ``sync_inventory --host``; returns the sync's output line."""
    response = api.put(f"/api/compute-nodes/{hostname}/", body)
    assert response.status in (200, 201), response
    out = io.StringIO()
    call_command("sync_inventory", "--host", hostname, stdout=out)
    return out.getvalue()


def node(api, hostname):
    return api.get(f"/api/compute-nodes/{hostname}/").json


def provider_uuid(api, name):
    found = api.get(f"/resource_providers?name={name}").json["resource_providers"]
    assert len(found) == 1, (name, found)
    return found[0]["uuid"]


def boot(api, flavor, name="vm"):
    body = {"name": name, "flavor": flavor, "project_id": "p1", "user_id": "u1"}
    return api.post("/api/servers/", body)
