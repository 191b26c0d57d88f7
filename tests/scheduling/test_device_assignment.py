"""Assignment in the claim: a boot that takes N units of a device class from a device's
provider is assigned N concrete free units in the same transaction; servers answer them as
``devices``; delete frees them; Placement API writes assign nothing and never leave more units
assigned than allocated. Through HTTP on PostgreSQL."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.providers.devices import (
    PLUGINS,
    boot,
    gpu,
    host_report,
    pf,
    provider_uuid,
    report_and_sync,
)
from tests.scheduling.scheduler_helpers import make_flavor

pytestmark = [pytest.mark.django_db, pytest.mark.postgresql]

VFS = ("0000:81:00.1", "0000:81:00.2")


@pytest.fixture(autouse=True)
def plugins(settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = PLUGINS


@pytest.fixture
def d1(api):
    report_and_sync(api, "d1", host_report([pf()]))
    make_flavor(api, "vf.f", vcpus=1, ram=512, disk=1, extra_specs={"resources:SRIOV_NET_VF": "1"})
    return provider_uuid(api, "d1_pci_0000_81_00_0")


def holders(api, hostname="d1"):
    devices = api.get(f"/api/compute-nodes/{hostname}/devices/").json["devices"]
    return {d["address"]: d["consumer"] for d in devices}


def test_two_boots_get_the_two_vfs_a_third_is_refused_and_a_freed_vf_is_reused(api, d1):
    first, second = boot(api, "vf.f", name="a"), boot(api, "vf.f", name="b")
    assert first.status == second.status == 201, (first, second)
    a, b = first.json["servers"][0], second.json["servers"][0]
    assert len(a["devices"]) == len(b["devices"]) == 1
    assert a["devices"][0] == {
        "resource_class": "SRIOV_NET_VF",
        "provider": d1,
        "provider_name": "d1_pci_0000_81_00_0",
        "address": a["devices"][0]["address"],
        "parent_address": "0000:81:00.0",
    }
    assert {a["devices"][0]["address"], b["devices"][0]["address"]} == set(VFS)
    assert api.get(f"/api/servers/{a['id']}/").json["devices"] == a["devices"]

    third = boot(api, "vf.f", name="c")
    assert third.status == 409, third
    assert third.json["errors"][0]["code"] == "scheduler.no_valid_host"

    assert api.delete(f"/api/servers/{a['id']}/").status == 204
    assert holders(api)[a["devices"][0]["address"]] is None
    again = boot(api, "vf.f", name="d")
    assert again.status == 201, again
    assert again.json["servers"][0]["devices"][0]["address"] == a["devices"][0]["address"]
    assert holders(api) == {
        a["devices"][0]["address"]: again.json["servers"][0]["id"],
        b["devices"][0]["address"]: b["id"],
    }


def test_a_server_without_devices_answers_an_empty_list(api, d1):
    make_flavor(api, "plain", vcpus=1, ram=512, disk=1)
    response = boot(api, "plain")
    assert response.status == 201
    assert response.json["servers"][0]["devices"] == []


def test_n_units_of_a_class_are_n_distinct_units(api, d1):
    make_flavor(api, "vf2", vcpus=1, ram=512, disk=1, extra_specs={"resources:SRIOV_NET_VF": "2"})
    server = boot(api, "vf2").json["servers"][0]
    assert sorted(d["address"] for d in server["devices"]) == list(VFS)


def test_vgpu_slots_and_whole_devices_are_assigned(api):
    devices = [
        gpu("0000:3b:00.0", mdev_type="nvidia-35", count=2),
        {
            "address": "0000:5e:00.0",
            "vendor_id": "1af4",
            "product_id": "1000",
            "resource_class": "PCI_DEVICE",
        },
    ]
    report_and_sync(api, "g1", host_report(devices, numa_topology=None))
    make_flavor(
        api,
        "gpu.f",
        vcpus=1,
        ram=512,
        disk=1,
        extra_specs={"resources1:VGPU": "1", "resources2:PCI_DEVICE": "1"},
    )
    server = boot(api, "gpu.f").json["servers"][0]
    by_class = {d["resource_class"]: d for d in server["devices"]}
    assert by_class["VGPU"]["address"] == "nvidia-35-0"
    assert by_class["VGPU"]["mdev_type"] == "nvidia-35"
    assert by_class["VGPU"]["parent_address"] == "0000:3b:00.0"
    assert by_class["PCI_DEVICE"]["address"] == "0000:5e:00.0"
    assert by_class["PCI_DEVICE"]["parent_address"] is None
    assert boot(api, "gpu.f").status == 409  # the one plain device is taken


def test_the_server_list_reads_devices_without_a_query_per_server(api, d1):
    make_flavor(api, "plain", vcpus=1, ram=256, disk=1)
    boot(api, "vf.f")
    with CaptureQueriesContext(connection) as two:
        listed = api.get("/api/servers/").json["results"]
    for n in range(4):
        boot(api, "plain", name=f"p{n}")
    boot(api, "vf.f")
    with CaptureQueriesContext(connection) as six:
        listed = api.get("/api/servers/").json["results"]
    assert len(listed) == 6
    assert len(six) == len(two)
    assert sum(len(s["devices"]) for s in listed) == 2


def test_placement_api_allocations_get_no_assignment(api, d1):
    consumer = "11111111-1111-1111-1111-111111111111"
    body = {
        "allocations": {d1: {"resources": {"SRIOV_NET_VF": 1}}},
        "project_id": "p",
        "user_id": "u",
        "consumer_generation": None,
        "consumer_type": "INSTANCE",
    }
    assert api.put(f"/allocations/{consumer}", body).status == 204
    assert set(holders(api).values()) == {None}
    # The other VF is still there for a boot; the PF is then full.
    assert boot(api, "vf.f").status == 201
    assert boot(api, "vf.f", name="x").status == 409


def test_a_placement_api_write_shrinking_a_servers_allocation_frees_its_unit(api, d1):
    server = boot(api, "vf.f").json["servers"][0]
    allocations = api.get(f"/allocations/{server['id']}").json
    kept = {
        rp: {"resources": {k: v for k, v in a["resources"].items() if k != "SRIOV_NET_VF"}}
        for rp, a in allocations["allocations"].items()
        if rp != d1
    }
    body = {
        "allocations": kept,
        "project_id": "p1",
        "user_id": "u1",
        "consumer_generation": allocations["consumer_generation"],
        "consumer_type": "INSTANCE",
    }
    assert api.put(f"/allocations/{server['id']}", body).status == 204

    assert set(holders(api).values()) == {None}
    assert api.get(f"/api/servers/{server['id']}/").json["devices"] == []


def test_deleting_a_servers_allocations_through_placement_frees_its_units(api, d1):
    server = boot(api, "vf.f").json["servers"][0]
    assert api.delete(f"/allocations/{server['id']}").status == 204
    assert set(holders(api).values()) == {None}


def test_an_inventory_above_its_units_refuses_the_claim_it_cannot_back(api, d1):
    """An operator's ratio lets Placement count more VFs than there are: the claim that would
    need a third unit is refused (next host), never given a unit twice."""
    inventory = api.get(f"/resource_providers/{d1}/inventories/SRIOV_NET_VF").json
    inventory["allocation_ratio"] = 2.0
    assert api.put(f"/resource_providers/{d1}/inventories/SRIOV_NET_VF", inventory).status == 200
    answers = [boot(api, "vf.f", name=f"s{n}") for n in range(3)]

    assert [r.status for r in answers] == [201, 201, 409]
    addresses = [r.json["servers"][0]["devices"][0]["address"] for r in answers[:2]]
    assert sorted(addresses) == list(VFS)
