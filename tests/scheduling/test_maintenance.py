"""Maintenance as operators do it: forced-down hosts, draining a host, evacuating only from a
host that is down (and never disabling a source when the evacuation fails), unknown names a
400, live migrations that complete on finish, and leases that follow the current setting."""

import pytest
from django.utils import timezone

from scheduling.models import LifecycleRecord, Migration
from scheduling.services.cleanup import migrations_cleanup
from tests.conftest import PlacementClient
from tests.providers.hosts import report, sync
from tests.scheduling.move_helpers import boot_one, resources_of, setup_hosts, used
from tests.scheduling.scheduler_helpers import boot, make_flavor

SERVICE = PlacementClient(token="svc:service-project", roles="service")


@pytest.fixture
def reported_hosts(api, settings):
    """Two hosts that report (a compute node each), synced into providers, and a flavor."""
    settings.PLACEMENT_RESOURCE_PLUGINS = ["vcpu", "memory", "disk"]
    for name in ("h1", "h2"):
        assert api.put(f"/api/compute-nodes/{name}/", report()).status == 201
    sync()
    make_flavor(api, "m1.small", vcpus=2, ram=1024, disk=10)
    providers = api.get("/resource_providers").json["resource_providers"]
    return {p["name"]: p["uuid"] for p in providers}


def _patch(api, host, body, client=None):
    return (client or api).request("PATCH", f"/api/compute-nodes/{host}/", body)


def _boot_on(api, host, name="vm"):
    response = boot(api, "m1.small", name=name, scheduler_hints={"target_host": host})
    assert response.status == 201, response
    return response.json["servers"][0]


# --- forced_down -------------------------------------------------------------------------------


def test_a_forced_down_host_is_never_scheduled_to(api, reported_hosts):
    response = _patch(api, "h1", {"forced_down": True})
    assert response.status == 200, response
    assert response.json["forced_down"] is True
    assert response.json["enabled"] is True
    for index in range(3):
        assert boot_one(api, name=f"vm{index}")["host"] == "h2"
    funnel = api.post(
        "/api/scheduler/explain/",
        {"name": "x", "flavor": "m1.small", "project_id": "p1", "user_id": "u1"},
    ).json
    assert "forced down by the operator" in str(funnel)
    assert _patch(api, "h1", {"forced_down": False}).json["forced_down"] is False
    assert api.get("/api/compute-nodes/h1/").json["forced_down"] is False


def test_forcing_a_host_down_is_for_admins(api, reported_hosts):
    response = _patch(api, "h1", {"forced_down": True}, client=SERVICE)
    assert response.status == 403, response
    assert api.get("/api/compute-nodes/h1/").json["forced_down"] is False
    # The service may still disable and enable the host.
    assert _patch(api, "h1", {"enabled": False}, client=SERVICE).status == 200


# --- evacuate ---------------------------------------------------------------------------------


def test_evacuate_from_a_host_that_is_up_is_409_and_leaves_it_enabled(api, reported_hosts):
    server = _boot_on(api, "h1")
    response = api.post(f"/api/servers/{server['id']}/evacuate/", {})
    assert response.status == 409, response
    assert response.error_code == "migration.source_up"
    assert api.get("/api/compute-nodes/h1/").json["enabled"] is True
    assert not Migration.objects.exists()


def test_evacuate_from_a_provider_without_report_is_409(api):
    setup_hosts(api)
    server = boot_one(api)
    response = api.post(f"/api/servers/{server['id']}/evacuate/", {})
    assert response.status == 409
    assert response.error_code == "migration.source_up"


def test_evacuate_from_a_forced_down_host_moves_and_disables_it(api, reported_hosts):
    server = _boot_on(api, "h1")
    _patch(api, "h1", {"forced_down": True})
    response = api.post(f"/api/servers/{server['id']}/evacuate/", {})
    assert response.status == 201, response
    assert response.json["migration"]["dest_host"] == "h2"
    node = api.get("/api/compute-nodes/h1/").json
    assert node["enabled"] is False and "evacuated" in node["disabled_reason"]


def test_evacuate_from_a_stale_host_is_allowed(api, reported_hosts, settings):
    from providers.models import ComputeNode

    server = _boot_on(api, "h1")
    ComputeNode.objects.filter(hostname="h1").update(
        reported_at=timezone.now()
        - timezone.timedelta(seconds=settings.PLACEMENT_HOST_STALE_SECONDS + 5)
    )
    response = api.post(f"/api/servers/{server['id']}/evacuate/", {})
    assert response.status == 201, response


def test_a_failed_evacuation_never_disables_the_source(api, reported_hosts):
    server = _boot_on(api, "h1")
    _patch(api, "h1", {"forced_down": True})
    _patch(api, "h2", {"enabled": False, "disabled_reason": "full"})
    response = api.post(f"/api/servers/{server['id']}/evacuate/", {})
    assert response.status == 409
    assert response.error_code == "scheduler.no_valid_host"
    node = api.get("/api/compute-nodes/h1/").json
    assert node["enabled"] is True and node["disabled_reason"] == ""
    assert Migration.objects.get().status == "error"


# --- unknown names ----------------------------------------------------------------------------


def test_migrate_to_an_unknown_host_is_400_naming_it(api):
    setup_hosts(api)
    server = boot_one(api)
    response = api.post(f"/api/servers/{server['id']}/migrate/", {"host": "no-such-host"})
    assert response.status == 400, response
    assert "no-such-host" in response.error["detail"]
    assert response.error_code == "scheduler.unknown_name"
    assert not Migration.objects.exists()


def test_boot_with_an_unknown_zone_or_target_host_is_400_naming_it(api):
    setup_hosts(api)
    response = boot(api, availability_zone="nowhere")
    assert response.status == 400, response
    assert "nowhere" in response.error["detail"]
    response = boot(api, scheduler_hints={"target_host": "ghost"})
    assert response.status == 400, response
    assert "ghost" in response.error["detail"]
    response = api.post(
        "/api/scheduler/explain/",
        {
            "name": "x",
            "flavor": "m1.small",
            "project_id": "p1",
            "user_id": "u1",
            "availability_zone": "nowhere",
        },
    )
    assert response.status == 400
    assert api.get("/api/servers/").json["count"] == 0


def test_a_known_zone_name_and_host_uuid_are_accepted(api):
    from providers.models import Aggregate
    from scheduling.models import AggregateMetadata

    hosts = setup_hosts(api)
    aggregate = Aggregate.objects.create(uuid="5a1b0c7e-0000-4000-8000-000000000001")
    AggregateMetadata.objects.create(aggregate=aggregate, name="fast", availability_zone="az1")
    api.put(
        f"/resource_providers/{hosts['cn1']}/aggregates",
        {"resource_provider_generation": 1, "aggregates": [str(aggregate.uuid)]},
    )
    assert boot(api, availability_zone="az1").json["servers"][0]["host"] == "cn1"
    assert boot(api, scheduler_hints={"target_host": hosts["cn2"]}).status == 201


# --- drain ------------------------------------------------------------------------------------


def test_drain_moves_every_server_off_and_leaves_the_host_disabled(api, reported_hosts):
    servers = [_boot_on(api, "h1", name=f"vm{i}") for i in range(3)]
    response = api.post("/api/compute-nodes/h1/drain/", {"reason": "kernel upgrade"})
    assert response.status == 200, response
    body = response.json
    assert body["moved"] == 3 and body["failed"] == 0
    assert [s["server"] for s in body["servers"]] == [s["id"] for s in servers]
    assert {s["kind"] for s in body["servers"]} == {"live-migrate"}
    assert {s["dest"] for s in body["servers"]} == {"h2"}
    node = api.get("/api/compute-nodes/h1/").json
    assert node["enabled"] is False and node["disabled_reason"] == "kernel upgrade"
    for server in servers:
        assert api.get(f"/api/servers/{server['id']}/").json["host"] == "h2"


def test_drain_reports_servers_that_cannot_move(api, reported_hosts):
    servers = [_boot_on(api, "h1", name=f"vm{i}") for i in range(2)]
    _patch(api, "h2", {"enabled": False})
    body = api.post("/api/compute-nodes/h1/drain/", {}).json
    assert body["moved"] == 0 and body["failed"] == 2
    assert {s["code"] for s in body["servers"]} == {"scheduler.no_valid_host"}
    assert body["disabled_reason"] == "drained"
    for server in servers:
        assert api.get(f"/api/servers/{server['id']}/").json["host"] == "h1"


def test_drain_of_an_unknown_host_is_404_and_admin_only(api, reported_hosts):
    assert api.post("/api/compute-nodes/nope/drain/", {}).status == 404
    assert SERVICE.post("/api/compute-nodes/h1/drain/", {}).status == 403
    assert api.post("/api/compute-nodes/h1/drain/", {"bogus": 1}).status == 400


# --- live migrations complete on finish -------------------------------------------------------


def test_finishing_a_live_migration_frees_the_source_and_completes_it(api):
    hosts = setup_hosts(api)
    server = boot_one(api)
    source = server["host_uuid"]
    migration = api.post(f"/api/servers/{server['id']}/live-migrate/", {}).json["migration"]
    response = api.post(f"/api/migrations/{migration['id']}/finish/", {})
    assert response.status == 200, response
    assert response.json["migration"]["status"] == "completed"
    assert used(api, source) == 0
    assert resources_of(api, migration["id"]) == {}
    dest = next(u for u in hosts.values() if u != source)
    assert used(api, dest) == 2
    assert api.post(f"/api/migrations/{migration['id']}/confirm/", {}).status == 409
    assert api.post(f"/api/migrations/{migration['id']}/revert/", {}).status == 409


def test_a_live_migration_is_not_confirmed_only_finished_or_reverted(api):
    setup_hosts(api)
    server = boot_one(api)
    migration = api.post(f"/api/servers/{server['id']}/live-migrate/", {}).json["migration"]
    refused = api.post(f"/api/migrations/{migration['id']}/confirm/", {})
    assert refused.status == 409, refused
    assert refused.json["errors"][0]["code"] == "migration.invalid_state"
    assert "a live migration is finished" in refused.json["errors"][0]["detail"]
    assert Migration.objects.get(uuid=migration["id"]).status == "migrating"
    assert resources_of(api, migration["id"])  # the source is still held
    reverted = api.post(f"/api/migrations/{migration['id']}/revert/", {})
    assert reverted.status == 200, reverted
    assert reverted.json["migration"]["status"] == "reverted"


def test_an_expired_live_migration_is_reported_never_reverted(api, settings):
    setup_hosts(api)
    server = boot_one(api)
    migration = api.post(f"/api/servers/{server['id']}/live-migrate/", {}).json["migration"]
    settings.PLACEMENT_MIGRATION_EXPIRED_ACTION = "revert"
    Migration.objects.update(lease_started_at="2000-01-01T00:00:00Z")
    migrations_cleanup()
    found = Migration.objects.get()
    assert found.status == "migrating"
    assert LifecycleRecord.objects.filter(action="expired", migration=found).exists()
    assert api.get(f"/api/servers/{server['id']}/").json["host"] == migration["dest_host"]


def test_lowering_the_lease_applies_to_moves_in_flight(api, settings):
    setup_hosts(api)
    server = boot_one(api)
    api.post(f"/api/servers/{server['id']}/migrate/", {})
    settings.PLACEMENT_MIGRATION_EXPIRED_ACTION = "revert"
    migrations_cleanup()
    assert Migration.objects.get().status == "migrating"
    settings.PLACEMENT_MIGRATION_LEASE_SECONDS = 0
    shown = api.get(f"/api/migrations/{Migration.objects.get().uuid}/").json
    assert shown["lease_expires_at"] <= timezone.now().isoformat().replace("+00:00", "Z")
    migrations_cleanup()
    assert Migration.objects.get().status == "reverted"


def test_the_admin_forces_a_host_down_through_the_service(client, api, reported_hosts):
    from django.contrib.auth.models import User as DjangoUser

    from providers.models import ComputeNode

    client.force_login(DjangoUser.objects.create_superuser("root", "root@example.com", "pw"))
    node = ComputeNode.objects.get(hostname="h1")
    response = client.post(
        f"/admin/providers/computenode/{node.pk}/change/",
        {"enabled": "on", "disabled_reason": "", "forced_down": "on"},
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert api.get("/api/compute-nodes/h1/").json["forced_down"] is True
