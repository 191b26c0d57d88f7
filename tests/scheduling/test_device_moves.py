"""Moves of a server holding a VF: the destination's unit is assigned at the claim, the
source's stays with the migration consumer until confirm frees it, and revert gives the very
same unit back to the server. Through HTTP on PostgreSQL."""

import pytest

from tests.providers.devices import PLUGINS, boot, host_report, pf, report_and_sync
from tests.scheduling.scheduler_helpers import make_flavor

pytestmark = [pytest.mark.django_db, pytest.mark.postgresql]


@pytest.fixture(autouse=True)
def plugins(settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = PLUGINS


@pytest.fixture
def moving(api):
    """A server holding a VF of d1 (two VFs), migrating to d2 (one VF):
    ``(server, migration)``."""
    report_and_sync(api, "d1", host_report([pf()]))
    make_flavor(api, "vf.f", vcpus=1, ram=512, disk=1, extra_specs={"resources:SRIOV_NET_VF": "1"})
    server = boot(api, "vf.f").json["servers"][0]
    assert server["host"] == "d1"
    report_and_sync(api, "d2", host_report([pf("0000:82:00.0", vfs=["0000:82:00.1"])]))
    response = api.post(f"/api/servers/{server['id']}/migrate/", {"host": "d2"})
    assert response.status == 201, response
    return server, response.json["migration"]


def holders(api, hostname):
    devices = api.get(f"/api/compute-nodes/{hostname}/devices/").json["devices"]
    return {d["address"]: d["consumer"] for d in devices}


def held_by(api, consumer):
    return {
        address
        for host in ("d1", "d2")
        for address, holder in holders(api, host).items()
        if holder == consumer
    }


def test_a_move_assigns_the_destination_and_the_migration_holds_the_source(api, moving):
    server, migration = moving
    source_unit = server["devices"][0]["address"]

    moved = api.get(f"/api/servers/{server['id']}/").json
    assert moved["host"] == "d2"
    assert len(moved["devices"]) == 1
    assert moved["devices"][0]["address"] != source_unit
    assert moved["devices"][0]["provider_name"].startswith("d2" + "_pci_")
    assert held_by(api, migration["id"]) == {source_unit}
    assert held_by(api, server["id"]) == {moved["devices"][0]["address"]}


def test_confirm_frees_the_source_unit(api, moving):
    server, migration = moving
    source_unit = server["devices"][0]["address"]

    assert api.post(f"/api/migrations/{migration['id']}/confirm/", {}).status == 200

    assert held_by(api, migration["id"]) == set()
    assert holders(api, server["host"])[source_unit] is None
    assert len(api.get(f"/api/servers/{server['id']}/").json["devices"]) == 1


def test_revert_gives_the_same_unit_back_and_frees_the_destination(api, moving):
    server, migration = moving
    dest_unit = api.get(f"/api/servers/{server['id']}/").json["devices"][0]["address"]

    response = api.post(f"/api/migrations/{migration['id']}/revert/", {})
    assert response.status == 200, response

    back = api.get(f"/api/servers/{server['id']}/").json
    assert back["host"] == server["host"]
    assert back["devices"] == server["devices"]
    assert held_by(api, migration["id"]) == set()
    assert holders(api, "d2")[dest_unit] is None


def test_a_move_to_a_host_whose_units_are_all_taken_is_refused(api, moving):
    server, migration = moving
    assert api.post(f"/api/migrations/{migration['id']}/confirm/", {}).status == 200
    for name in ("other1", "other2"):  # d1's two VFs
        assert boot(api, "vf.f", name=name).json["servers"][0]["host"] == "d1"
    before = api.get(f"/api/servers/{server['id']}/").json["devices"]

    response = api.post(f"/api/servers/{server['id']}/migrate/", {"host": "d1"})

    assert response.status == 409, response
    assert api.get(f"/api/servers/{server['id']}/").json["devices"] == before
    assert held_by(api, server["id"]) == {"0000:82:00.1"}
