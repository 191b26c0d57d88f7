"""The issue's acceptance contract for moves, through the HTTP stack."""

from django.core.management import call_command

from tests.scheduling.move_helpers import allocations_of, boot_one, providers_of, resources_of
from tests.scheduling.scheduler_helpers import make_flavor, make_host


def test_contract(api):
    hosts = {make_host(api, "cn1"), make_host(api, "cn2")}
    make_flavor(api, "bar.small", vcpus=2, ram=2048, disk=10)
    server = boot_one(api, "bar.small", name="vm0")
    origin = server["host_uuid"]

    response = api.post(f"/api/servers/{server['id']}/migrate/", {})
    assert 200 <= response.status < 300, response
    migration = response.json["migration"]
    assert set(migration) >= {"id", "status", "source", "dest"}
    assert migration["source"] == origin
    assert migration["dest"] in hosts - {origin}
    assert providers_of(api, migration["id"]) == {origin}
    assert providers_of(api, server["id"]) == {migration["dest"]}

    confirmed = api.post(f"/api/migrations/{migration['id']}/confirm/", {})
    assert 200 <= confirmed.status < 300, confirmed
    assert confirmed.json["migration"]["status"] == "confirmed"
    assert allocations_of(api, migration["id"])["allocations"] == {}

    before = resources_of(api, server["id"])
    second = api.post(f"/api/servers/{server['id']}/migrate/", {})
    assert second.status == 201, second
    second_id = second.json["migration"]["id"]
    reverted = api.post(f"/api/migrations/{second_id}/revert/", {})
    assert reverted.status == 200, reverted
    assert reverted.json["migration"]["status"] == "reverted"
    assert resources_of(api, server["id"]) == before
    assert allocations_of(api, second_id)["allocations"] == {}

    again = api.post(f"/api/migrations/{second_id}/confirm/", {})
    assert 400 <= again.status < 500, again
    assert again.error_code == "migration.invalid_state"

    call_command("cleanup_migrations")
    call_command("placement_audit")
