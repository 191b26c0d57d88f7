"""Builders for the scheduler tests: providers made through the Placement API, flavors and
servers through /api/."""

import uuid as uuidlib

STANDARD = {"VCPU": 8, "MEMORY_MB": 16384, "DISK_GB": 100}


def make_host(api, name, inventories=None, *, parent=None, traits=(), aggregates=()):
    """A provider made through the Placement API alone; returns its uuid."""
    uuid = str(uuidlib.uuid4())
    body = {"name": name, "uuid": uuid}
    if parent:
        body["parent_provider_uuid"] = parent
    response = api.post("/resource_providers", body)
    assert response.status == 200, response
    generation = 0
    inventories = STANDARD if inventories is None else inventories
    if inventories:
        response = api.put(
            f"/resource_providers/{uuid}/inventories",
            {
                "resource_provider_generation": generation,
                "inventories": {
                    rc: spec if isinstance(spec, dict) else {"total": spec}
                    for rc, spec in inventories.items()
                },
            },
        )
        assert response.status == 200, response
        generation = response.json["resource_provider_generation"]
    if traits:
        for name_ in traits:
            if name_.startswith("CUSTOM_"):
                api.put(f"/traits/{name_}")
        response = api.put(
            f"/resource_providers/{uuid}/traits",
            {"resource_provider_generation": generation, "traits": list(traits)},
        )
        assert response.status == 200, response
        generation = response.json["resource_provider_generation"]
    if aggregates:
        response = api.put(
            f"/resource_providers/{uuid}/aggregates",
            {"resource_provider_generation": generation, "aggregates": list(aggregates)},
        )
        assert response.status == 200, response
    return uuid


def make_flavor(api, name="m1.small", *, vcpus=2, ram=2048, disk=10, **extra):
    body = {"name": name, "vcpus": vcpus, "ram": ram, "disk": disk, **extra}
    body.setdefault("extra_specs", {})
    response = api.post("/api/flavors/", body)
    assert response.status == 201, response
    return response.json


def boot(api, flavor="m1.small", *, name="vm", **extra):
    body = {"name": name, "flavor": flavor, "project_id": "p1", "user_id": "u1", **extra}
    return api.post("/api/servers/", body)


def usage(api, uuid):
    return api.get(f"/resource_providers/{uuid}/usages").json["usages"]
