"""A write that does not raise a provider's usage is never refused for its capacity (as
Placement allows): a host whose inventory an operator lowered below its usage can be drained,
and a move its source refuses says so with its own code."""

import random

import pytest

from providers.capacity import Capacity, CapacityExceeded
from tests.conftest import new_uuid
from tests.scheduling.move_helpers import boot_one, setup_hosts, used

pytestmark = pytest.mark.django_db


def lower(api, provider, resource_class, **fields):
    inventory = api.get(f"/resource_providers/{provider}/inventories/{resource_class}").json
    body = {
        "total": inventory["total"],
        "max_unit": inventory["max_unit"],
        "resource_provider_generation": inventory["resource_provider_generation"],
        **fields,
    }
    response = api.put(f"/resource_providers/{provider}/inventories/{resource_class}", body)
    assert response.status == 200, response
    return response


@pytest.fixture
def crowded(api):
    """cn1 holds two servers (2 VCPU each), then its VCPU is lowered to 1: over capacity."""
    hosts = setup_hosts(api, names=("cn1",))
    servers = [boot_one(api, name=f"vm{i}") for i in range(2)]
    hosts.update(setup_hosts(api, names=("cn2", "cn3"), flavors=()))
    lower(api, hosts["cn1"], "VCPU", total=1)
    return hosts, servers


def test_a_server_moves_off_a_host_lowered_below_its_usage(api, crowded):
    hosts, servers = crowded
    response = api.post(f"/api/servers/{servers[0]['id']}/migrate/", {})
    assert response.status == 201, response
    migration = response.json["migration"]
    assert migration["status"] == "migrating"
    # The migration consumer holds the source amounts; the source's usage did not grow.
    assert used(api, hosts["cn1"]) == 4
    confirmed = api.post(f"/api/migrations/{migration['id']}/confirm/", {})
    assert confirmed.status == 200, confirmed
    assert used(api, hosts["cn1"]) == 2


def test_every_server_drains_off_the_lowered_host(api, crowded):
    hosts, servers = crowded
    for server in servers:
        moved = api.post(f"/api/servers/{server['id']}/migrate/", {})
        assert moved.status == 201, moved
        migration = moved.json["migration"]["id"]
        assert api.post(f"/api/migrations/{migration}/confirm/", {}).status == 200
    assert used(api, hosts["cn1"]) == 0


def test_a_revert_onto_the_lowered_host_is_allowed(api, crowded):
    hosts, servers = crowded
    migration = api.post(f"/api/servers/{servers[0]['id']}/migrate/", {}).json["migration"]
    reverted = api.post(f"/api/migrations/{migration['id']}/revert/", {})
    assert reverted.status == 200, reverted
    assert used(api, hosts["cn1"]) == 4


def test_a_move_its_source_refuses_says_so(api, crowded):
    hosts, servers = crowded
    # The source now refuses 2 VCPU in one allocation: no destination can help.
    lower(api, hosts["cn1"], "VCPU", max_unit=1)
    response = api.post(f"/api/servers/{servers[0]['id']}/migrate/", {})
    assert response.status == 409, response
    assert response.error_code == "migration.source_refused"
    assert hosts["cn1"] in response.error["detail"]
    (migration,) = api.get("/api/migrations/").json["results"]
    assert migration["status"] == "error"
    assert used(api, hosts["cn1"]) == 4


def placement_body(provider, amount, generation):
    return {
        "allocations": {provider: {"resources": {"VCPU": amount}}},
        "project_id": "p",
        "user_id": "u",
        "consumer_generation": generation,
        "consumer_type": "INSTANCE",
    }


def test_shrinking_an_allocation_on_an_over_capacity_provider_is_allowed(api, crowded):
    hosts, servers = crowded
    server = servers[0]["id"]
    held = api.get(f"/allocations/{server}").json
    body = placement_body(hosts["cn1"], 1, held["consumer_generation"])
    body["allocations"][hosts["cn1"]]["resources"] = {
        **held["allocations"][hosts["cn1"]]["resources"],
        "VCPU": 1,
    }
    assert api.put(f"/allocations/{server}", body).status == 204
    assert used(api, hosts["cn1"]) == 3


def test_the_same_allocation_again_on_an_over_capacity_provider_is_allowed(api, crowded):
    hosts, servers = crowded
    server = servers[0]["id"]
    held = api.get(f"/allocations/{server}").json
    body = placement_body(hosts["cn1"], 2, held["consumer_generation"])
    body["allocations"][hosts["cn1"]]["resources"] = held["allocations"][hosts["cn1"]]["resources"]
    assert api.put(f"/allocations/{server}", body).status == 204


def test_growing_on_an_over_capacity_provider_is_refused(api, crowded):
    hosts, _servers = crowded
    response = api.put(f"/allocations/{new_uuid()}", placement_body(hosts["cn1"], 1, None))
    assert response.status == 409
    assert "exceed the capacity" in response.error["detail"]


def test_moving_amounts_between_consumers_in_one_post_is_allowed(api, crowded):
    hosts, servers = crowded
    source = servers[0]["id"]
    held = api.get(f"/allocations/{source}").json
    taker = new_uuid()
    body = {
        source: {**placement_body(hosts["cn1"], 0, held["consumer_generation"]), "allocations": {}},
        taker: {
            **placement_body(hosts["cn1"], 0, None),
            "allocations": {
                hosts["cn1"]: {"resources": held["allocations"][hosts["cn1"]]["resources"]}
            },
        },
    }
    response = api.post("/allocations", body)
    assert response.status == 204, response
    assert used(api, hosts["cn1"]) == 4


def test_capacity_rule_against_a_brute_force_model():
    """Seeded: a write is refused for capacity exactly when it leaves the usage above both
    the capacity and the usage before it."""
    rng = random.Random(26)
    for _ in range(5000):
        capacity = Capacity(total=rng.randint(0, 20), reserved=rng.randint(0, 5))
        before = rng.randint(0, 30)
        freed = rng.randint(0, before)
        amount = rng.randint(1, 30)
        expected_ok = (before - freed + amount) <= max(capacity.usable, before)
        try:
            capacity.consume(amount, before - freed, usage_before=before)
            ok = True
        except CapacityExceeded as exc:
            assert [s.rule for s in exc.shortfalls] == ["capacity"]
            ok = False
        assert ok == expected_ok, (capacity, before, freed, amount)
