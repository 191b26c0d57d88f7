"""Twenty clients booting at once into one server group on ten hosts, through a gunicorn of
several worker processes on PostgreSQL: the group's row lock serialises the decisions.
Anti-affinity (max 1 per host): at most one member per host, exactly ten placed, the others
scheduler.no_valid_host. Affinity, with a random pick among all ten hosts (so that unlocked
first boots would scatter): every member on one host."""

import threading
from collections import Counter

import pytest
from django.db import connection, transaction

from allocations.models import Project, User
from providers.models import ResourceProvider
from scheduling.models import Flavor, Server, ServerGroup, ServerGroupMember
from tests.allocations.test_concurrency import Client, race
from tests.factories import make_provider
from tests.gunicorn_server import running_gunicorn

pytestmark = [
    pytest.mark.live,
    pytest.mark.postgresql,
    pytest.mark.django_db(transaction=True),
]

CLIENTS = 20
HOSTS = 10
WORKERS = 4


@pytest.fixture
def server(transactional_db):
    # A random pick among every fitting host: concurrent boots would scatter without the lock.
    env = {"PLACEMENT_SCHEDULER_HOST_SUBSET_SIZE": str(HOSTS)}
    with running_gunicorn(workers=WORKERS, env=env) as base:
        yield base


def _cloud(policy, **rules):
    # The project and user exist already (as in any cloud that ran a boot): creating them
    # would serialise the first boots by accident and hide a missing lock.
    Project.objects.create(external_id="p")
    User.objects.create(external_id="u")
    Flavor.objects.create(name="f", vcpus=1, ram=512, disk=1)
    for index in range(HOSTS):
        make_provider(f"h{index}", inventories={"VCPU": 64, "MEMORY_MB": 65536, "DISK_GB": 1000})
    return ServerGroup.objects.create(name="web", policy=policy, rules=rules, project_id="p")


def _boot_all(server, group, count=1, groups=None):
    clients = [Client(server) for _ in range(CLIENTS)]
    # Every worker process warmed up first, so that the boots below really overlap.
    race(clients, lambda client, _index: client.call("GET", "/api/flavors/"))

    def work(client, index):
        target = groups[index % len(groups)] if groups else group
        body = {
            "name": f"vm{index}",
            "flavor": "f",
            "project_id": "p",
            "user_id": "u",
            "count": count,
            "scheduler_hints": {"group": str(target.uuid)},
        }
        status, payload = client.call("POST", "/api/servers/", body)
        return status, payload["errors"][0]["code"] if status >= 400 else None

    return Counter(race(clients, work))


@pytest.mark.parametrize("count", [1, 2])
def test_concurrent_boots_never_break_anti_affinity(server, count):
    group = _cloud("anti-affinity", max_server_per_host=1)
    outcomes = _boot_all(server, group, count)
    assert set(outcomes) <= {(201, None), (409, "scheduler.no_valid_host")}, outcomes
    assert outcomes[(201, None)] * count == HOSTS
    per_host = Counter(Server.objects.values_list("host__name", flat=True))
    assert len(per_host) == HOSTS and set(per_host.values()) == {1}
    assert ServerGroupMember.objects.filter(group=group).count() == HOSTS == Server.objects.count()


def test_concurrent_boots_into_affinity_groups_land_together(server):
    # Five groups, four clients racing into each: every group's first members race.
    groups = [_cloud("affinity")] + [
        ServerGroup.objects.create(name=f"g{i}", policy="affinity", project_id="p")
        for i in range(4)
    ]
    outcomes = _boot_all(server, None, groups=groups)
    assert outcomes == Counter({(201, None): CLIENTS}), outcomes
    for group in groups:
        members = ServerGroupMember.objects.filter(group=group)
        assert members.count() == CLIENTS // len(groups)
        assert len(set(members.values_list("server__host_id", flat=True))) == 1, group.name


def test_a_boot_waits_for_the_group_lock_and_sees_the_member_placed_under_it(server):
    """A member placed (not yet committed) under the group's lock by another transaction: a
    boot into the group waits for it, then follows it to its host, though any of ten hosts
    would otherwise do."""
    group = _cloud("affinity")
    chosen = ResourceProvider.objects.get(name="h7")
    held, release = threading.Event(), threading.Event()

    def hold():
        try:
            with transaction.atomic():
                ServerGroup.objects.select_for_update().get(pk=group.pk)
                first = Server.objects.create(
                    name="first",
                    flavor=Flavor.objects.get(name="f"),
                    project_id="p",
                    user_id="u",
                    host=chosen,
                )
                ServerGroupMember.objects.create(group=group, server=first)
                held.set()
                release.wait(30)
        finally:
            connection.close()

    holder = threading.Thread(target=hold)
    holder.start()
    assert held.wait(30)
    answers = []
    body = {
        "name": "second",
        "flavor": "f",
        "project_id": "p",
        "user_id": "u",
        "scheduler_hints": {"group": str(group.uuid)},
    }
    booting = threading.Thread(
        target=lambda: answers.append(Client(server).call("POST", "/api/servers/", body))
    )
    booting.start()
    booting.join(2)
    assert booting.is_alive() and not answers  # waiting on the group's lock
    release.set()
    holder.join()
    booting.join(60)
    ((status, payload),) = answers
    assert status == 201, payload
    assert payload["servers"][0]["host"] == "h7"
