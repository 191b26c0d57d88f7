"""Helpers of the resource pool tests: reports of hosts and pools, the sync, reading a
provider's aggregates and inventories through the Placement API."""

import io

from django.core.management import call_command

HOST = {"vcpus": 16, "memory_mb": 32768, "local_gb": 500}


def put_host(api, hostname, **overrides):
    response = api.put(f"/api/compute-nodes/{hostname}/", {**HOST, **overrides})
    assert response.status in (200, 201), response
    return response.json


def put_pool(api, name, body, status=(200, 201)):
    response = api.put(f"/api/resource-pools/{name}/", body)
    assert response.status in status, response
    return response


def ceph(total=1000, members=("s1", "s2"), **extra):
    return {
        "kind": "shared_storage",
        "inventories": {"DISK_GB": {"total": total}},
        "members": list(members),
        **extra,
    }


def sync_all():
    """``manage.py sync_inventory --all``; returns ``{name: line}`` of hosts and pools."""
    out = io.StringIO()
    call_command("sync_inventory", "--all", stdout=out)
    lines = [line for line in out.getvalue().splitlines() if not line.startswith(" ")]
    return {line.split(":")[0]: line for line in lines if ":" in line}


def provider(api, name):
    found = api.get(f"/resource_providers?name={name}").json["resource_providers"]
    assert len(found) == 1, found
    return found[0]


def aggregates(api, uuid):
    return set(api.get(f"/resource_providers/{uuid}/aggregates").json["aggregates"])


def inventories(api, uuid):
    return api.get(f"/resource_providers/{uuid}/inventories").json["inventories"]


def traits(api, uuid):
    return set(api.get(f"/resource_providers/{uuid}/traits").json["traits"])


def usages(api, uuid):
    return api.get(f"/resource_providers/{uuid}/usages").json["usages"]


def tree_classes(api, root_uuid):
    """Every class any provider of the tree under ``root_uuid`` has."""
    members = api.get(f"/resource_providers?in_tree={root_uuid}").json["resource_providers"]
    return {name for p in members for name in inventories(api, p["uuid"])}
