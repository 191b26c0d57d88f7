"""Names where ids have one: aggregates (name, zone, metadata), consumers (the server's name,
flavor and project), migrations (the server's name)."""

import csv
import io
import uuid as uuidlib

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from providers.models import Aggregate, ResourceProvider
from scheduling.models import AggregateMetadata
from tests.scheduling.move_helpers import boot_one, setup_hosts

pytestmark = pytest.mark.django_db


@pytest.fixture
def root(db):
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("root", password="pw-123456"))
    return client


@pytest.fixture
def named_cloud(api):
    hosts = setup_hosts(api)
    aggregate = Aggregate.objects.create(uuid=uuidlib.uuid4())
    AggregateMetadata.objects.create(
        aggregate=aggregate, name="rack-7", availability_zone="east", metadata={"disk": "ssd"}
    )
    for host in hosts.values():
        ResourceProvider.objects.get(uuid=host).aggregates.add(aggregate)
    bare = Aggregate.objects.create(uuid=uuidlib.uuid4())
    server = boot_one(api, name="web-frontend")
    migration = api.post(f"/api/servers/{server['id']}/migrate/", {}).json["migration"]
    return {
        "aggregate": aggregate,
        "bare": bare,
        "server": server,
        "migration": migration,
        "hosts": hosts,
    }


def test_aggregates_show_their_name_zone_and_metadata(root, named_cloud):
    body = root.get("/dashboard/aggregates/").content.decode()
    assert "rack-7" in body and "east" in body and "<b>disk</b>=ssd" in body
    assert str(named_cloud["bare"].uuid) in body  # one without a name keeps its uuid
    page = root.get(f"/dashboard/aggregates/{named_cloud['aggregate'].uuid}/").content.decode()
    assert "Aggregate rack-7" in page and 'id="aggregate-facts"' in page


def test_a_providers_aggregates_are_named(root, named_cloud):
    host = next(iter(named_cloud["hosts"].values()))
    body = root.get(f"/dashboard/providers/{host}/").content.decode()
    assert '>rack-7 <span class="muted">zone east</span></a>' in body


def test_aggregate_export_has_names_and_zones(root, named_cloud):
    rows = list(
        csv.DictReader(io.StringIO(root.get("/dashboard/aggregates/?export=csv").content.decode()))
    )
    named = next(r for r in rows if r["uuid"] == str(named_cloud["aggregate"].uuid))
    assert (named["name"], named["availability_zone"], named["metadata"]) == (
        "rack-7",
        "east",
        "disk=ssd",
    )


def test_consumers_show_the_server_name_flavor_and_moves(root, named_cloud):
    body = root.get("/dashboard/consumers/").content.decode()
    assert "web-frontend" in body and "m1.small" in body
    assert '<span class="tag">migrate</span> of' in body  # the migration consumer
    page = root.get(f"/dashboard/consumers/{named_cloud['server']['id']}/").content.decode()
    assert "Server web-frontend" in page and 'id="consumer-server"' in page
    assert "east" in page  # the zone it landed in
    rows = list(
        csv.DictReader(io.StringIO(root.get("/dashboard/consumers/?export=csv").content.decode()))
    )
    server_row = next(r for r in rows if r["uuid"] == named_cloud["server"]["id"])
    assert (server_row["server"], server_row["flavor"]) == ("web-frontend", "m1.small")


def test_migrations_show_the_server_name(root, named_cloud):
    body = root.get("/dashboard/migrations/").content.decode()
    assert '<span class="strong">web-frontend</span>' in body


def test_names_need_the_scheduler_view_permissions(staff, named_cloud):
    """A viewer of Placement's data alone sees ids, not the scheduler's names."""
    body = staff.get("/dashboard/consumers/").content.decode()
    assert "web-frontend" not in body
    assert "rack-7" not in staff.get("/dashboard/aggregates/").content.decode()
