"""Helpers of the compute host tests: reports, and reading a host's tree through Placement."""

from django.core.management import call_command


def report(**overrides):
    body = {
        "vcpus": 16,
        "memory_mb": 65536,
        "local_gb": 500,
        "hypervisor_type": "QEMU",
        "cpu_info": {"model": "Skylake-Server", "vendor": "Intel"},
        "stats": {},
        "numa_topology": None,
        "pci_devices": [],
    }
    body.update(overrides)
    return body


def sync(host=None):
    args = ["--host", host] if host else []
    call_command("sync_inventory", *args, stdout=_Discard())


class _Discard:
    def write(self, _text):
        pass


def tree(api, hostname):
    """``{provider name: {"inventories": {...}, "traits": [...], "parent": uuid}}`` of the
    tree whose root is named ``hostname``, read through the Placement API."""
    roots = api.get(f"/resource_providers?name={hostname}").json["resource_providers"]
    assert len(roots) == 1, roots
    root = roots[0]
    members = api.get(f"/resource_providers?in_tree={root['uuid']}").json["resource_providers"]
    found = {}
    for provider in members:
        inventories = api.get(f"/resource_providers/{provider['uuid']}/inventories").json
        traits = api.get(f"/resource_providers/{provider['uuid']}/traits").json["traits"]
        found[provider["name"]] = {
            "uuid": provider["uuid"],
            "generation": provider["generation"],
            "parent": provider["parent_provider_uuid"],
            "inventories": inventories["inventories"],
            "traits": sorted(traits),
        }
    return found
