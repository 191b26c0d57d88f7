"""Builders for the move tests: two or three hosts, a flavor and a server, through HTTP."""

from tests.scheduling.scheduler_helpers import boot, make_flavor, make_host, usage


def setup_hosts(api, names=("cn1", "cn2"), flavors=("m1.small",)):
    hosts = {name: make_host(api, name) for name in names}
    for index, flavor in enumerate(flavors):
        make_flavor(api, flavor, vcpus=2 * (index + 1), ram=1024 * (index + 1), disk=10)
    return hosts


def boot_one(api, flavor="m1.small", name="vm", **extra):
    response = boot(api, flavor, name=name, **extra)
    assert response.status == 201, response
    return response.json["servers"][0]


def used(api, host_uuid, resource_class="VCPU"):
    return usage(api, host_uuid).get(resource_class, 0)


def allocations_of(api, consumer):
    response = api.get(f"/allocations/{consumer}")
    assert response.status == 200, response
    return response.json


def providers_of(api, consumer):
    return set(allocations_of(api, consumer)["allocations"])


def resources_of(api, consumer):
    """``{provider uuid: {class: amount}}`` of a consumer, without provider generations."""
    return {
        provider: entry["resources"]
        for provider, entry in allocations_of(api, consumer)["allocations"].items()
    }
