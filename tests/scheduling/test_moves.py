"""Moves through the HTTP stack: every kind, then confirm, revert or failure, with the usage
of both hosts checked after every step."""

import pytest

from providers.models import ComputeNode, ResourceProvider
from scheduling.models import Migration
from tests.scheduling.move_helpers import (
    boot_one,
    providers_of,
    resources_of,
    setup_hosts,
    used,
)

SMALL = {"VCPU": 2, "MEMORY_MB": 1024, "DISK_GB": 10}
MEDIUM = {"VCPU": 4, "MEMORY_MB": 2048, "DISK_GB": 10}


@pytest.fixture
def world(api):
    hosts = setup_hosts(api, flavors=("m1.small", "m1.medium"))
    server = boot_one(api, "m1.small")
    source = server["host_uuid"]
    (dest,) = set(hosts.values()) - {source}
    return server, source, dest


def _start(api, server, kind):
    if kind == "evacuate":
        # Only a host that is down is evacuated.
        source = ResourceProvider.objects.get(uuid=server["host_uuid"])
        ComputeNode.objects.create(hostname="cn-source", provider=source, forced_down=True)
    if kind == "resize":
        return api.post(f"/api/servers/{server['id']}/resize/", {"flavor": "m1.medium"})
    return api.post(f"/api/servers/{server['id']}/{kind}/", {})


def _vcpus(api, source, dest):
    return used(api, source), used(api, dest)


@pytest.mark.parametrize("kind", ["migrate", "live-migrate", "evacuate", "resize"])
@pytest.mark.parametrize("outcome", ["confirm", "revert", "fail"])
def test_move_then_settle(api, world, kind, outcome):
    server, source, dest = world
    new = MEDIUM if kind == "resize" else SMALL
    assert _vcpus(api, source, dest) == (2, 0)

    response = _start(api, server, kind)
    assert response.status == 201, response
    migration = response.json["migration"]
    assert migration["kind"] == kind
    assert migration["status"] == "migrating"
    assert (migration["source"], migration["dest"]) == (source, dest)
    assert resources_of(api, migration["id"]) == {source: SMALL}
    assert resources_of(api, server["id"]) == {dest: new}
    assert _vcpus(api, source, dest) == (2, new["VCPU"])
    shown = api.get(f"/api/servers/{server['id']}/").json
    assert shown["host_uuid"] == dest
    assert shown["flavor"] == ("m1.medium" if kind == "resize" else "m1.small")

    step = outcome
    if kind == "live-migrate" and outcome == "confirm":
        # A live migration keeps its destination by finishing (it completes); it has nothing
        # to confirm, and a confirm is refused, changing nothing.
        assert api.post(f"/api/migrations/{migration['id']}/confirm/", {}).status == 409
        step = "finish"
    settled = api.post(f"/api/migrations/{migration['id']}/{step}/", {})
    assert settled.status == 200, settled
    assert resources_of(api, migration["id"]) == {}
    if outcome == "confirm":
        assert settled.json["migration"]["status"] == (
            "completed" if step == "finish" else "confirmed"
        )
        assert resources_of(api, server["id"]) == {dest: new}
        assert _vcpus(api, source, dest) == (0, new["VCPU"])
    else:
        assert settled.json["migration"]["status"] == (
            "reverted" if outcome == "revert" else "error"
        )
        assert resources_of(api, server["id"]) == {source: SMALL}
        assert _vcpus(api, source, dest) == (2, 0)
        shown = api.get(f"/api/servers/{server['id']}/").json
        assert (shown["host_uuid"], shown["flavor"]) == (source, "m1.small")

    # Nothing settles twice: every further step is a 409 and changes nothing.
    for again in ("confirm", "revert", "fail", "finish"):
        repeated = api.post(f"/api/migrations/{migration['id']}/{again}/", {})
        assert repeated.status == 409, repeated
        assert repeated.error_code == "migration.invalid_state"
    assert _vcpus(api, source, dest) == ((0, new["VCPU"]) if outcome == "confirm" else (2, 0))


def test_finish_then_confirm(api, world):
    server, source, dest = world
    migration = _start(api, server, "migrate").json["migration"]
    finished = api.post(f"/api/migrations/{migration['id']}/finish/", {})
    assert finished.status == 200, finished
    assert finished.json["migration"]["status"] == "finished"
    assert finished.json["migration"]["finished_at"]
    # A failure is reported while migrating; a finished move is confirmed or reverted.
    assert api.post(f"/api/migrations/{migration['id']}/fail/", {}).status == 409
    assert api.post(f"/api/migrations/{migration['id']}/confirm/", {}).status == 200
    assert _vcpus(api, source, dest) == (0, 2)


def test_a_server_moves_once_at_a_time(api, world):
    server, source, dest = world
    assert _start(api, server, "migrate").status == 201
    second = _start(api, server, "live-migrate")
    assert second.status == 409, second
    assert second.error_code == "migration.in_progress"
    assert _vcpus(api, source, dest) == (2, 2)


def test_stale_consumer_generation_is_refused(api, world):
    server, source, dest = world
    migration = _start(api, server, "migrate").json["migration"]
    generation = api.get(f"/allocations/{migration['id']}").json["consumer_generation"]
    stale = api.post(
        f"/api/migrations/{migration['id']}/confirm/", {"consumer_generation": generation + 1}
    )
    assert stale.status == 409, stale
    assert stale.error_code == "migration.generation_conflict"
    assert _vcpus(api, source, dest) == (2, 2)
    current = api.post(
        f"/api/migrations/{migration['id']}/confirm/", {"consumer_generation": generation}
    )
    assert current.status == 200, current
    assert _vcpus(api, source, dest) == (0, 2)


def test_migrate_to_a_named_host(api):
    hosts = setup_hosts(api, names=("cn1", "cn2", "cn3"))
    server = boot_one(api)
    others = sorted(name for name, uuid in hosts.items() if uuid != server["host_uuid"])
    response = api.post(f"/api/servers/{server['id']}/migrate/", {"host": others[-1]})
    assert response.status == 201, response
    assert response.json["migration"]["dest_host"] == others[-1]


def test_migrate_to_its_own_host_is_a_400(api, world):
    server, source, _dest = world
    response = api.post(f"/api/servers/{server['id']}/migrate/", {"host": source})
    assert response.status == 400, response
    assert response.error_code == "migration.invalid"
    assert not Migration.objects.exists()


def test_no_other_host_is_no_valid_host_and_an_error_migration(api):
    setup_hosts(api, names=("cn1",))
    server = boot_one(api)
    response = api.post(f"/api/servers/{server['id']}/migrate/", {})
    assert response.status == 409, response
    assert response.error_code == "scheduler.no_valid_host"
    assert response.error["explain"] is not None
    migration = Migration.objects.get()
    assert migration.status == "error"
    assert resources_of(api, server["id"]) == {server["host_uuid"]: SMALL}
    assert resources_of(api, str(migration.uuid)) == {}


def test_resize_to_the_same_host_only_when_allowed(api, settings):
    (host,) = setup_hosts(api, names=("cn1",), flavors=("m1.small", "m1.medium")).values()
    server = boot_one(api)
    refused = api.post(f"/api/servers/{server['id']}/resize/", {"flavor": "m1.medium"})
    assert refused.status == 409, refused

    settings.PLACEMENT_RESIZE_SAME_HOST = True
    response = api.post(f"/api/servers/{server['id']}/resize/", {"flavor": "m1.medium"})
    assert response.status == 201, response
    migration = response.json["migration"]
    assert migration["source"] == migration["dest"] == host
    # Both flavors are held on the one host until the resize is confirmed.
    assert used(api, host) == 6
    assert api.post(f"/api/migrations/{migration['id']}/confirm/", {}).status == 200
    assert used(api, host) == 4


def test_resize_to_the_same_flavor_is_a_400(api, world):
    server, _source, _dest = world
    response = api.post(f"/api/servers/{server['id']}/resize/", {"flavor": "m1.small"})
    assert response.status == 400, response
    assert response.error_code == "migration.invalid"


def test_evacuate_marks_the_source_down(api, world):
    server, source, _dest = world
    node = ComputeNode.objects.create(
        hostname="cn-source", provider=ResourceProvider.objects.get(uuid=source), forced_down=True
    )
    assert api.post(f"/api/servers/{server['id']}/evacuate/", {}).status == 201
    node.refresh_from_db()
    assert node.enabled is False


@pytest.mark.parametrize(
    ("path", "body", "status"),
    [
        ("migrate/", {"hosts": "cn2"}, 400),
        ("migrate/", [], 400),
        ("resize/", {}, 400),
        ("resize/", {"flavor": "nope"}, 400),
        ("migrate/", {"host": 5}, 400),  # no host named 5
    ],
)
def test_bad_move_requests(api, world, path, body, status):
    server, source, dest = world
    response = api.post(f"/api/servers/{server['id']}/{path}", body)
    assert response.status == status, response
    assert response.error_code
    assert _vcpus(api, source, dest) == (2, 0)


@pytest.mark.parametrize("server_id", ["not-a-uuid", "7c5b9f7e-0000-4000-8000-000000000000"])
def test_moving_an_unknown_server_is_a_404(api, server_id):
    response = api.post(f"/api/servers/{server_id}/migrate/", {})
    assert response.status == 404, response


def test_settling_an_unknown_migration_is_a_404(api):
    for path in ("not-a-uuid", "7c5b9f7e-0000-4000-8000-000000000000"):
        assert api.post(f"/api/migrations/{path}/confirm/", {}).status == 404


def test_list_filters(api, world):
    server, source, dest = world
    first = _start(api, server, "migrate").json["migration"]
    api.post(f"/api/migrations/{first['id']}/confirm/", {})
    second = _start(api, server, "resize").json["migration"]

    def ids(query):
        response = api.get(f"/api/migrations/?{query}")
        assert response.status == 200, response
        return [m["id"] for m in response.json["results"]]

    assert ids("") == [second["id"], first["id"]]
    assert ids("status=confirmed") == [first["id"]]
    assert ids("status=confirmed&status=migrating") == [second["id"], first["id"]]
    assert ids("in_flight=true") == [second["id"]]
    assert ids("kind=resize") == [second["id"]]
    assert ids(f"server={server['id']}") == [second["id"], first["id"]]
    assert ids("host=cn1") == [second["id"], first["id"]]
    assert ids(f"host={dest}") == [second["id"], first["id"]]
    assert ids("older_than=2000-01-01T00:00:00Z") == []
    assert api.get("/api/migrations/?status=bogus").status == 400
    shown = api.get(f"/api/migrations/{second['id']}/")
    assert shown.status == 200 and shown.json["new_flavor"] == "m1.medium"
    assert providers_of(api, second["id"]) == {dest}


def test_the_api_root_links_servers_and_migrations(api):
    response = api.get("/api/")
    assert response.status == 200, response
    assert response.json["servers"].endswith("/api/servers/")
    assert response.json["migrations"].endswith("/api/migrations/")
