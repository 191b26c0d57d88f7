"""A resource pool's members may name aggregates by their names (kept by the scheduling app,
``/api/aggregates/``), through HTTP on PostgreSQL: resolved on every sync, so the hosts of a
named aggregate join and leave the pool as the aggregate changes; an unknown name that cannot
be a host's is a 400 naming ``members``. The names cross into providers through one declared
seam (providers/aggregate_names.py)."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from providers import aggregate_names
from providers.tasks import sync_resource_pools
from scheduling.selectors import aggregates as scheduling_aggregates
from tests.providers.pools import aggregates, ceph, provider, put_host, put_pool, sync_all

pytestmark = [pytest.mark.django_db, pytest.mark.postgresql]


@pytest.fixture(autouse=True)
def host_settings(settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = ["vcpu", "memory", "disk", "numa", "pci"]
    settings.PLACEMENT_SYNC_ON_REPORT = False
    return settings


def make_aggregate(api, name):
    response = api.post("/api/aggregates/", {"name": name})
    assert response.status == 201, response
    return response.json["uuid"]


def set_aggregates(api, hostname, wanted):
    host = provider(api, hostname)
    response = api.put(
        f"/resource_providers/{host['uuid']}/aggregates",
        {"resource_provider_generation": host["generation"], "aggregates": sorted(wanted)},
        version="1.19",
    )
    assert response.status == 200, response


def in_pool(api, hostname, pool="ceph1"):
    (pool_aggregate,) = aggregates(api, provider(api, pool)["uuid"])
    return pool_aggregate in aggregates(api, provider(api, hostname)["uuid"])


def test_the_hosts_of_an_aggregate_named_by_name_join_and_leave_with_it(api):
    for name in ("s1", "s2", "s3"):
        put_host(api, name)
    sync_all()
    rack = make_aggregate(api, "Rack A")
    set_aggregates(api, "s2", {rack})
    put_pool(api, "ceph1", ceph(members=["Rack A", "s3"]))
    assert "ok" in sync_all()["ceph1"]
    assert [in_pool(api, h) for h in ("s1", "s2", "s3")] == [False, True, True]
    assert aggregates(api, provider(api, "s2")["uuid"]) >= {rack}  # its own aggregate kept

    # The aggregate changes; the pool's report does not: beat's sync follows the aggregate.
    set_aggregates(api, "s1", {rack})
    set_aggregates(api, "s2", set())
    assert sync_resource_pools() == 1
    assert [in_pool(api, h) for h in ("s1", "s2", "s3")] == [True, False, True]
    assert sync_resource_pools() == 0  # converged: nothing more to do

    # Renamed, it is no longer the aggregate the pool names.
    response = api.request("PATCH", "/api/aggregates/Rack A/", {"name": "Rack B"})
    assert response.status == 200, response
    assert sync_resource_pools() == 1
    assert [in_pool(api, h) for h in ("s1", "s2", "s3")] == [False, False, True]
    assert api.get("/api/resource-pools/ceph1/").json["members"] == ["Rack A", "s3"]


def test_a_name_may_name_an_aggregate_before_it_exists_when_it_could_be_a_host(api):
    put_host(api, "s1")
    put_pool(api, "ceph1", ceph(members=["rack-b"]))
    sync_all()
    assert not in_pool(api, "s1")
    rack = make_aggregate(api, "rack-b")
    set_aggregates(api, "s1", {rack})
    assert sync_resource_pools() == 1
    assert in_pool(api, "s1")


@pytest.mark.parametrize("member", ["No Such Rack", "rack/7", "x" * 200])
def test_an_unknown_name_that_is_no_host_name_is_a_400_naming_members(api, member):
    make_aggregate(api, "Rack A")
    response = api.put("/api/resource-pools/ceph1/", ceph(members=["Rack A", member]))
    assert response.status == 400, response
    assert list(response.json["errors"][0]["fields"]) == ["members"], response.json
    assert member[:20] in response.json["errors"][0]["detail"]
    assert api.get("/api/resource-pools/ceph1/").status == 404


def test_the_scheduling_app_installs_the_aggregate_names_it_keeps():
    assert aggregate_names._installed is scheduling_aggregates
    assert aggregate_names.aggregate_uuids_named([]) == {}


def test_without_an_app_keeping_names_providers_say_so(monkeypatch):
    monkeypatch.setattr(aggregate_names, "_installed", None)
    with pytest.raises(ImproperlyConfigured, match="scheduling app"):
        aggregate_names.aggregate_uuids_named(["Rack A"])
