"""Flavors do not change under servers: sizes are immutable, extra-spec edits are for new
servers only, and each server's flavor snapshot is what the audit, moves and reverts read."""

import io

import pytest
from django.core.management import call_command

from scheduling.models import LifecycleRecord
from tests.scheduling.move_helpers import boot_one, resources_of, setup_hosts


def _audit():
    out = io.StringIO()
    call_command("placement_audit", stdout=out)
    return out.getvalue()


@pytest.mark.parametrize(
    "change", [{"vcpus": 4}, {"ram": 4096}, {"disk": 20}, {"ephemeral": 1}, {"swap": 512}]
)
def test_a_flavors_sizes_cannot_change(api, change):
    setup_hosts(api)
    field = next(iter(change))
    response = api.request("PATCH", "/api/flavors/m1.small/", change)
    assert response.status == 400, response
    assert field in response.error["fields"]
    flavor = api.get("/api/flavors/m1.small/").json
    assert (flavor["vcpus"], flavor["ram"], flavor["disk"]) == (2, 1024, 10)


def test_a_put_with_the_same_sizes_and_new_extra_specs_is_allowed(api):
    setup_hosts(api)
    body = {
        "name": "m1.small",
        "vcpus": 2,
        "ram": 1024,
        "disk": 10,
        "extra_specs": {"hw:mem_page_size": "large"},
    }
    response = api.put("/api/flavors/m1.small/", body)
    assert response.status == 200, response
    assert response.json["extra_specs"] == {"hw:mem_page_size": "large"}
    body["vcpus"] = 3
    assert api.put("/api/flavors/m1.small/", body).status == 400


def test_extra_spec_edits_apply_to_new_servers_only(api):
    hosts = setup_hosts(api)
    old = boot_one(api, name="old")
    assert old["flavor_snapshot"]["vcpus"] == 2
    assert old["flavor_snapshot"]["extra_specs"] == {}
    response = api.request(
        "PATCH", "/api/flavors/m1.small/", {"extra_specs": {"resources:VCPU": "1"}}
    )
    assert response.status == 200, response
    new = boot_one(api, name="new")
    assert resources_of(api, new["id"])[new["host_uuid"]]["VCPU"] == 1
    assert resources_of(api, old["id"])[old["host_uuid"]]["VCPU"] == 2

    # The audit reads each server's snapshot: neither is a mismatch.
    assert "mismatch" not in _audit()
    assert not LifecycleRecord.objects.filter(action="mismatch").exists()

    # A move schedules the flavor the server was booted with.
    response = api.post(f"/api/servers/{old['id']}/migrate/", {})
    assert response.status == 201, response
    dest = response.json["migration"]["dest"]
    dest_uuid = hosts[dest] if dest in hosts else dest
    assert resources_of(api, old["id"])[dest_uuid] == {"VCPU": 2, "MEMORY_MB": 1024, "DISK_GB": 10}
    shown = api.get(f"/api/servers/{old['id']}/").json
    assert shown["flavor_snapshot"]["extra_specs"] == {}


def test_resize_takes_the_new_flavors_snapshot_and_revert_restores_the_old(api):
    setup_hosts(api, flavors=("m1.small", "m1.medium"))
    server = boot_one(api)
    response = api.post(f"/api/servers/{server['id']}/resize/", {"flavor": "m1.medium"})
    assert response.status == 201, response
    migration = response.json["migration"]
    shown = api.get(f"/api/servers/{server['id']}/").json
    assert shown["flavor"] == "m1.medium" and shown["flavor_snapshot"]["vcpus"] == 4

    # The old flavor is edited meanwhile; the revert restores what the server had.
    api.request("PATCH", "/api/flavors/m1.small/", {"extra_specs": {"resources:VCPU": "1"}})
    response = api.post(f"/api/migrations/{migration['id']}/revert/", {})
    assert response.status == 200, response
    shown = api.get(f"/api/servers/{server['id']}/").json
    assert shown["flavor"] == "m1.small"
    assert shown["flavor_snapshot"]["extra_specs"] == {}
    assert resources_of(api, server["id"])[server["host_uuid"]] == {
        "VCPU": 2,
        "MEMORY_MB": 1024,
        "DISK_GB": 10,
    }
    assert "mismatch" not in _audit()


def test_resize_then_confirm_keeps_the_new_snapshot_through_later_edits(api):
    setup_hosts(api, flavors=("m1.small", "m1.medium"))
    server = boot_one(api)
    migration = api.post(f"/api/servers/{server['id']}/resize/", {"flavor": "m1.medium"}).json
    response = api.post(f"/api/migrations/{migration['migration']['id']}/confirm/", {})
    assert response.status == 200, response
    api.request("PATCH", "/api/flavors/m1.medium/", {"extra_specs": {"resources:VCPU": "1"}})
    assert "mismatch" not in _audit()
    shown = api.get(f"/api/servers/{server['id']}/").json
    assert shown["flavor_snapshot"]["vcpus"] == 4
    assert shown["flavor_snapshot"]["extra_specs"] == {}
