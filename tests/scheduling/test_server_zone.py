"""A server records the availability zone it landed in: its host's, on boot and on each move
(and its source's again on a revert)."""

import uuid as uuidlib

import pytest

from providers.models import Aggregate, ResourceProvider
from scheduling.models import AggregateMetadata
from tests.scheduling.move_helpers import boot_one
from tests.scheduling.scheduler_helpers import make_flavor, make_host

pytestmark = pytest.mark.django_db


def _zone(name, zone, *hosts):
    aggregate = Aggregate.objects.create(uuid=uuidlib.uuid4())
    AggregateMetadata.objects.create(aggregate=aggregate, name=name, availability_zone=zone)
    for host in hosts:
        ResourceProvider.objects.get(uuid=host).aggregates.add(aggregate)
    return str(aggregate.uuid)


def _zone_of(api, server):
    return api.get(f"/api/servers/{server['id']}/").json["availability_zone"]


def test_a_server_booted_without_a_zone_records_its_hosts_zone(api):
    make_flavor(api, "f", vcpus=1, ram=512, disk=1)
    host = make_host(api, "cn1")
    _zone("rack-1", "", host)  # an aggregate without a zone does not count
    _zone("az-east", "east", host)
    server = boot_one(api, "f")
    assert _zone_of(api, server) == "east"


def test_a_zone_asked_by_aggregate_name_records_the_zone_itself(api):
    make_flavor(api, "f", vcpus=1, ram=512, disk=1)
    host = make_host(api, "cn1")
    _zone("az-east-agg", "east", host)
    assert _zone_of(api, boot_one(api, "f", availability_zone="az-east-agg")) == "east"


def test_a_host_in_no_zone_records_none(api):
    make_flavor(api, "f", vcpus=1, ram=512, disk=1)
    make_host(api, "cn1")
    assert _zone_of(api, boot_one(api, "f")) == ""


@pytest.mark.parametrize("outcome", ["confirm", "revert"])
def test_a_move_records_the_destinations_zone_and_a_revert_the_sources(api, outcome):
    make_flavor(api, "f", vcpus=1, ram=512, disk=1)
    west = make_host(api, "west-1")
    _zone("w", "west", west)
    server = boot_one(api, "f")  # no zone asked: free to move to another zone, as in Nova
    east = make_host(api, "east-1")
    _zone("e", "east", east)
    shown = api.get(f"/api/servers/{server['id']}/").json
    assert (shown["availability_zone"], shown["requested_availability_zone"]) == ("west", "")
    migration = api.post(f"/api/servers/{server['id']}/migrate/", {}).json["migration"]
    assert _zone_of(api, server) == "east"
    assert api.post(f"/api/migrations/{migration['id']}/{outcome}/", {}).status == 200
    assert _zone_of(api, server) == ("east" if outcome == "confirm" else "west")


def test_a_server_that_asked_for_a_zone_moves_within_it(api):
    make_flavor(api, "f", vcpus=1, ram=512, disk=1)
    west = make_host(api, "west-1")
    _zone("w", "west", west)
    server = boot_one(api, "f", availability_zone="west")
    _zone("e", "east", make_host(api, "east-1"))
    response = api.post(f"/api/servers/{server['id']}/migrate/", {})
    assert response.status == 409, response  # no other host in west
    assert _zone_of(api, server) == "west"
