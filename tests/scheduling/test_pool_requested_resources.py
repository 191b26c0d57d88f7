"""A boot asking resources beyond its flavor (``requested_resources``, as Nova adds a port's
resource request: an IP pool's address) through HTTP on PostgreSQL: it lands on a host whose
pool has a free one, its allocation holds it on the pool's provider, a full pool is a 409,
bad input a 400 naming the field, explain accepts it, and moves ask it again: held once
within one pool, on both pools across two, confirm and revert leaving usage exact."""

import io

import pytest
from django.core.management import call_command

from tests.providers.pools import provider, put_host, put_pool, sync_all, usages
from tests.scheduling.move_helpers import resources_of
from tests.scheduling.scheduler_helpers import boot, make_flavor

pytestmark = [pytest.mark.django_db, pytest.mark.postgresql]

ADDRESS = [{"resources": {"IPV4_ADDRESS": 1}}]


@pytest.fixture(autouse=True)
def host_settings(settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = ["vcpu", "memory", "disk", "numa", "pci"]
    settings.PLACEMENT_SYNC_ON_REPORT = False
    return settings


def ip_pool(total, members):
    return {
        "kind": "ip_pool",
        "inventories": {"IPV4_ADDRESS": {"total": total}},
        "members": members,
    }


@pytest.fixture
def net1(api):
    """Hosts s1 and s2; only s2 is on the routed segment of ``net1`` (two addresses)."""
    put_host(api, "s1")
    put_host(api, "s2")
    put_pool(api, "net1", ip_pool(2, ["s2"]))
    sync_all()
    make_flavor(api, "small", vcpus=1, ram=512, disk=1)
    return provider(api, "net1")["uuid"]


def addresses(api, pool):
    return usages(api, pool).get("IPV4_ADDRESS", 0)


def test_a_boot_asking_an_address_lands_where_the_ip_pool_has_one(api, net1):
    for index in range(2):
        response = boot(api, "small", name=f"vm{index}", requested_resources=ADDRESS)
        assert response.status == 201, response
        server = response.json["servers"][0]
        assert server["host"] == "s2"
        assert server["requested_resources"] == ADDRESS
        assert resources_of(api, server["id"])[net1] == {"IPV4_ADDRESS": 1}
    assert addresses(api, net1) == 2
    full = boot(api, "small", name="vm2", requested_resources=ADDRESS)
    assert full.status == 409, full
    assert full.error_code == "scheduler.no_valid_host"
    assert addresses(api, net1) == 2
    # Without the address, the flavor alone still boots anywhere.
    assert boot(api, "small", name="plain").status == 201


def test_explain_takes_the_requested_resources_and_names_the_pool(api, net1):
    body = {
        "name": "vm",
        "flavor": "small",
        "project_id": "p1",
        "user_id": "u1",
        "requested_resources": ADDRESS,
    }
    response = api.post("/api/scheduler/explain/", body)
    assert response.status == 200, response
    chosen = response.json["chosen"]
    assert net1 in chosen["allocations"]
    assert [pool["name"] for pool in chosen["pools"]] == ["net1"]
    assert addresses(api, net1) == 0  # explain claims nothing


@pytest.mark.parametrize(
    ("requested", "field"),
    [
        ([{"resources": {"CUSTOM_NOPE": 1}}], "requested_resources.0.resources.CUSTOM_NOPE"),
        ([{"resources": {"IPV4_ADDRESS": 0}}], "requested_resources.0.resources.IPV4_ADDRESS"),
        ([{"resources": {}}], "requested_resources.0.resources"),
        ([{"resources": {"IPV4_ADDRESS": 1}, "colour": "red"}], "requested_resources.0.colour"),
        (
            [ADDRESS[0], {"resources": {"IPV4_ADDRESS": 1}, "required": ["CUSTOM_NO_SUCH"]}],
            "requested_resources.1.required",
        ),
        (
            [{"resources": {"IPV4_ADDRESS": 1}, "required": ["lower"]}],
            "requested_resources.0.required.0",
        ),
        ({"IPV4_ADDRESS": 1}, "requested_resources"),
        ([ADDRESS[0]] * 9, "requested_resources"),
    ],
)
def test_bad_requested_resources_are_a_400_naming_the_field(api, net1, requested, field):
    response = boot(api, "small", requested_resources=requested)
    assert response.status == 400, response
    fields = response.json["errors"][0]["fields"]
    assert any(name == field or name.startswith(f"{field}.") for name in fields), fields
    assert api.get("/api/servers/").json["count"] == 0


def migrate(api, server):
    response = api.post(f"/api/servers/{server['id']}/migrate/", {})
    assert response.status == 201, response
    return response.json["migration"]


def settle(api, migration, verb):
    response = api.post(f"/api/migrations/{migration['id']}/{verb}/", {})
    assert response.status == 200, response


@pytest.mark.parametrize("verb", ["confirm", "revert"])
def test_a_move_within_a_full_ip_pool_keeps_the_servers_address(api, verb):
    put_host(api, "s1")
    put_host(api, "s2")
    put_pool(api, "net1", ip_pool(1, ["s1", "s2"]))
    sync_all()
    make_flavor(api, "small", vcpus=1, ram=512, disk=1)
    net = provider(api, "net1")["uuid"]
    response = boot(api, "small", requested_resources=ADDRESS)
    assert response.status == 201, response
    server = response.json["servers"][0]
    before = resources_of(api, server["id"])
    moving = migrate(api, server)
    assert addresses(api, net) == 1
    assert net not in resources_of(api, moving["id"])
    assert resources_of(api, server["id"])[net] == {"IPV4_ADDRESS": 1}
    settle(api, moving, verb)
    assert addresses(api, net) == 1
    if verb == "revert":
        assert resources_of(api, server["id"]) == before


@pytest.mark.parametrize("verb", ["confirm", "revert"])
def test_a_move_across_ip_pools_holds_both_until_it_settles(api, verb):
    put_host(api, "s1")
    put_host(api, "s2")
    put_pool(api, "net1", ip_pool(4, ["s1"]))
    put_pool(api, "net2", ip_pool(4, ["s2"]))
    sync_all()
    make_flavor(api, "small", vcpus=1, ram=512, disk=1)
    one, two = provider(api, "net1")["uuid"], provider(api, "net2")["uuid"]
    response = boot(api, "small", requested_resources=ADDRESS)
    server = response.json["servers"][0]
    before = resources_of(api, server["id"])
    source, dest = (one, two) if server["host"] == "s1" else (two, one)
    moving = migrate(api, server)
    assert resources_of(api, moving["id"])[source] == {"IPV4_ADDRESS": 1}
    assert resources_of(api, server["id"])[dest] == {"IPV4_ADDRESS": 1}
    assert (addresses(api, source), addresses(api, dest)) == (1, 1)
    settle(api, moving, verb)
    expected = (0, 1) if verb == "confirm" else (1, 0)
    assert (addresses(api, source), addresses(api, dest)) == expected
    if verb == "revert":
        assert resources_of(api, server["id"]) == before
    else:
        assert source not in resources_of(api, server["id"])


def test_the_audit_counts_what_a_boot_asked_beyond_its_flavor(api, net1):
    response = boot(api, "small", requested_resources=ADDRESS)
    assert response.status == 201, response
    out = io.StringIO()
    call_command("placement_audit", stdout=out)
    assert "mismatch" not in out.getvalue(), out.getvalue()

    server = response.json["servers"][0]
    current = api.get(f"/allocations/{server['id']}").json
    without_address = {
        rp: {"resources": a["resources"]} for rp, a in current["allocations"].items() if rp != net1
    }
    response = api.put(
        f"/allocations/{server['id']}",
        {
            "allocations": without_address,
            "project_id": "p1",
            "user_id": "u1",
            "consumer_generation": current["consumer_generation"],
            "consumer_type": "INSTANCE",
        },
    )
    assert response.status == 204, response
    out = io.StringIO()
    call_command("placement_audit", stdout=out)
    assert f"mismatch: {server['id']}" in out.getvalue(), out.getvalue()
