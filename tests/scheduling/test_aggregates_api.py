"""/api/aggregates/: names, zones and metadata of aggregates (membership stays the Placement
API's), and capacity restricted by zone or aggregate as server creates are."""

import uuid as uuidlib

import pytest

from providers.models import Aggregate
from scheduling import queries
from scheduling.models import AggregateMetadata
from tests.scheduling.scheduler_helpers import make_flavor, make_host

SSD = {
    "vcpus": 1,
    "ram": 1024,
    "disk": 1,
    "extra_specs": {"aggregate_instance_extra_specs:ssd": "true"},
}


def capacity(api, query):
    response = api.get(f"/api/capacity/?{query}")
    assert response.status == 200, response
    return response.json["total"], {h["name"]: h["fits"] for h in response.json["hosts"]}


def join(api, provider, aggregate):
    generation = api.get(f"/resource_providers/{provider}").json["generation"]
    response = api.put(
        f"/resource_providers/{provider}/aggregates",
        {"resource_provider_generation": generation, "aggregates": [aggregate]},
    )
    assert response.status == 200, response


def test_create_list_show_update_delete(api):
    response = api.post(
        "/api/aggregates/",
        {"name": "fast", "availability_zone": "az-fast", "metadata": {"ssd": "true"}},
    )
    assert response.status == 201, response
    created = response.json
    assert uuidlib.UUID(created["uuid"])
    assert Aggregate.objects.filter(uuid=created["uuid"]).exists()

    listed = api.get("/api/aggregates/").json
    assert [a["name"] for a in listed["results"]] == ["fast"]
    assert api.get(f"/api/aggregates/{created['uuid']}/").json["availability_zone"] == "az-fast"
    assert api.get("/api/aggregates/fast/").json["uuid"] == created["uuid"]

    patched = api.request("PATCH", "/api/aggregates/fast/", {"metadata": {"ssd": "false"}})
    assert patched.status == 200, patched
    assert patched.json["metadata"] == {"ssd": "false"}
    assert patched.json["name"] == "fast"

    assert api.delete("/api/aggregates/fast/").status == 204
    assert api.get("/api/aggregates/fast/").status == 404
    # Placement keeps the aggregate itself.
    assert Aggregate.objects.filter(uuid=created["uuid"]).exists()


def test_create_with_a_known_uuid_names_that_aggregate(api):
    aggregate = str(uuidlib.uuid4())
    host = make_host(api, "cn1", aggregates=[aggregate])
    response = api.post("/api/aggregates/", {"uuid": aggregate, "name": "rack1"})
    assert response.status == 201, response
    assert response.json["uuid"] == aggregate
    assert api.get(f"/resource_providers/{host}/aggregates").json["aggregates"] == [aggregate]


def test_bad_bodies_and_duplicates(api):
    assert api.post("/api/aggregates/", {"name": "a"}).status == 201
    duplicate = api.post("/api/aggregates/", {"name": "a"})
    assert duplicate.status == 409
    assert api.post("/api/aggregates/", {"availability_zone": "z"}).status == 400
    assert api.post("/api/aggregates/", {"name": "b", "metadata": {"k": {"x": 1}}}).status == 400
    assert api.post("/api/aggregates/", {"name": "c", "uuid": "nope"}).status == 400
    assert AggregateMetadata.objects.count() == 1


def test_only_admins_write(api):
    body = {"name": "a"}
    assert api.post("/api/aggregates/", body, token="alice:p1").status == 403
    assert AggregateMetadata.objects.count() == 0


# How a pass's hosts are read (scheduling.queries.hosts_with_aggregates): as a short list; as
# many hosts are (joined with their unnested ids on PostgreSQL); as a range of ids when they
# fill most of it (the others in the range left out).
HOST_READS = {"short list": (100, 0.5), "many": (0, 2.0), "dense range": (0, 0.5)}


@pytest.mark.parametrize("read", list(HOST_READS))
def test_capacity_by_zone_and_aggregate_with_aggregate_extra_specs(api, monkeypatch, read):
    # Each way gives the hosts with their aggregates and metadata alike.
    monkeypatch.setattr(queries, "_SHORT_ARRAY", HOST_READS[read][0])
    monkeypatch.setattr(queries, "_DENSE_IDS", HOST_READS[read][1])
    response = api.post(
        "/api/aggregates/",
        {"name": "fast", "availability_zone": "az-fast", "metadata": {"ssd": "true"}},
    )
    aggregate = response.json["uuid"]
    p1 = make_host(api, "p1", {"VCPU": 16, "MEMORY_MB": 32768, "DISK_GB": 100})
    make_host(api, "n1", {"VCPU": 16, "MEMORY_MB": 32768, "DISK_GB": 100})
    join(api, p1, aggregate)
    make_flavor(api, "ssd.f", **SSD)
    make_flavor(api, "plain", vcpus=1, ram=1024, disk=1)

    assert capacity(api, "flavor=ssd.f") == (16, {"p1": 16})
    assert capacity(api, "flavor=ssd.f&availability_zone=az-fast") == (16, {"p1": 16})
    assert capacity(api, "flavor=plain") == (32, {"p1": 16, "n1": 16})
    assert capacity(api, "flavor=plain&availability_zone=az-fast") == (16, {"p1": 16})
    assert capacity(api, "flavor=plain&availability_zone=fast") == (16, {"p1": 16})
    assert capacity(api, "flavor=plain&aggregate=fast") == (16, {"p1": 16})
    assert capacity(api, f"flavor=plain&aggregate={aggregate}") == (16, {"p1": 16})

    # A host between two of the pass's, in none of its aggregates: a range of ids holds it,
    # the pass does not.
    make_host(api, "m1", {"VCPU": 16, "MEMORY_MB": 32768, "DISK_GB": 100})
    last = make_host(api, "p2", {"VCPU": 8, "MEMORY_MB": 32768, "DISK_GB": 100})
    join(api, last, aggregate)
    assert capacity(api, "flavor=plain&aggregate=fast") == (24, {"p1": 16, "p2": 8})
    assert capacity(api, "flavor=ssd.f") == (24, {"p1": 16, "p2": 8})
    assert capacity(api, "flavor=plain")[1] == {"p1": 16, "n1": 16, "m1": 16, "p2": 8}

    for query in ("availability_zone=nowhere", "aggregate=nowhere", f"aggregate={uuidlib.uuid4()}"):
        response = api.get(f"/api/capacity/?flavor=plain&{query}")
        assert response.status == 400, (query, response)
