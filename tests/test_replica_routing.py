"""Which database each request reads from, through the whole HTTP stack.

A replica alias here is a second connection to the test database (a server not in recovery
is always current), so these tests run wherever PostgreSQL does; ``test_replica_streaming.py``
does the same against a real streaming replica, lagging and stopped. The tests commit (a
transaction would hide the rows from the second connection).
"""

import pytest
from django.contrib.auth.models import User
from django.db import connections
from django.test import Client
from django.test.utils import CaptureQueriesContext

from allocations.models import Allocation
from placementsite.core import replicas
from tests.gunicorn_server import free_port
from tests.replica import configured_replica
from tests.scheduling.scheduler_helpers import boot, make_flavor, make_host

pytestmark = [
    pytest.mark.postgresql,
    pytest.mark.django_db(transaction=True, databases="__all__"),
]

FLAVOR_BODY = {"name": "vm", "flavor": "small", "project_id": "p1", "user_id": "u1"}


@pytest.fixture
def cloud(api):
    host = make_host(api, "cn1", {"VCPU": 8, "MEMORY_MB": 8192, "DISK_GB": 100})
    make_flavor(api, "small", vcpus=2, ram=1024, disk=10)
    assert boot(api, "small").status == 201
    return host


@pytest.fixture
def replica():
    with configured_replica("replica1") as alias:
        yield alias


def _queries(alias, call):
    """``(result, SQL run on alias)``."""
    with CaptureQueriesContext(connections[alias]) as captured:
        result = call()
    return result, [query["sql"] for query in captured.captured_queries]


def _reads_served(database):
    return replicas.READS_ROUTED.labels(database=database, reason="replica current")._value.get()


@pytest.mark.parametrize(
    "path",
    [
        "/allocation_candidates?resources=VCPU:1,MEMORY_MB:512",
        "/resource_providers?resources=VCPU:1",
        "/usages?project_id=p1",
        "/api/capacity/?flavor=small",
        "/metrics",
    ],
)
def test_lag_tolerant_reads_go_to_the_replica(api, cloud, replica, path):
    before = _reads_served(replica)
    response, on_replica = _queries(replica, lambda: api.get(path))
    assert response.status == 200, response
    assert on_replica, "nothing was read from the replica"
    assert _reads_served(replica) == before + 1


def test_provider_usages_come_from_the_replica_and_are_right(api, cloud, replica):
    response, on_replica = _queries(replica, lambda: api.get(f"/resource_providers/{cloud}/usages"))
    assert response.json["usages"] == {"VCPU": 2, "MEMORY_MB": 1024, "DISK_GB": 10}
    assert any("allocation" in sql for sql in on_replica)


def test_explain_reads_from_the_replica(api, cloud, replica):
    response, on_replica = _queries(
        replica, lambda: api.post("/api/scheduler/explain/", FLAVOR_BODY)
    )
    assert response.status == 200, response
    assert on_replica


def test_dashboard_pages_read_from_the_replica(cloud, replica):
    user = User.objects.create_superuser("op", "op@example.com", "a long pass phrase 42")
    browser = Client()
    browser.force_login(user)
    for page in ("/dashboard/", "/dashboard/providers/", f"/dashboard/providers/{cloud}/"):
        response, on_replica = _queries(replica, lambda page=page: browser.get(page))
        assert response.status_code == 200, page
        assert on_replica, page


@pytest.mark.parametrize(
    "method, path, body",
    [
        ("GET", "/resource_providers/{host}", None),  # not a listing: the primary's
        ("GET", "/allocations/{consumer}", None),
        ("PUT", "/resource_providers/{host}/traits", "traits"),
        ("POST", "/api/servers/", FLAVOR_BODY),  # a boot reads candidates, then claims
    ],
)
def test_other_requests_never_touch_the_replica(api, cloud, replica, method, path, body):
    consumer = str(Allocation.objects.values_list("consumer__uuid", flat=True).first())
    path = path.format(host=cloud, consumer=consumer)
    if body == "traits":
        generation = api.get(f"/resource_providers/{cloud}").json["generation"]
        body = {"resource_provider_generation": generation, "traits": ["HW_CPU_X86_AVX"]}
    response, on_replica = _queries(replica, lambda: api.request(method, path, body))
    assert response.status < 300, response
    assert on_replica == []


def test_a_read_after_a_write_in_the_same_block_goes_to_the_primary(cloud, replica):
    from providers.models import ResourceProvider

    with replicas.lag_tolerant_reads():
        provider = ResourceProvider.objects.get(uuid=cloud)
        assert replicas.current_read_database() == replica
        provider.save(update_fields=["name"])  # a write: the primary from here on
        _, on_replica = _queries(replica, lambda: ResourceProvider.objects.get(uuid=cloud))
    assert on_replica == []


def test_reads_inside_a_transaction_on_the_primary_stay_there(cloud, replica):
    from django.db import transaction

    from providers.models import ResourceProvider

    with replicas.lag_tolerant_reads(), transaction.atomic():
        _, on_replica = _queries(replica, lambda: ResourceProvider.objects.get(uuid=cloud))
    assert on_replica == []


def test_without_a_replica_everything_reads_from_the_primary(api, cloud):
    response = api.get("/allocation_candidates?resources=VCPU:1")
    assert response.status == 200
    assert len(response.json["allocation_requests"]) == 1


def test_a_replica_that_is_down_is_skipped(api, cloud):
    # Nothing listens on that port: the replica cannot be reached.
    with configured_replica("replica1", HOST="127.0.0.1", PORT=free_port()):
        response = api.get("/allocation_candidates?resources=VCPU:1")
        assert response.status == 200, response
        assert len(response.json["allocation_requests"]) == 1
        assert replicas.current_read_database() is None  # the request is over
        health = api.get("/healthcheck?detailed", headers={"X-Roles": "admin"})
        replica_check = health.json["checks"]["replicas"]
        assert replica_check["ok"] is True
        assert replica_check["replicas"]["replica1"]["status"] == "down"
        assert "replica1 down, skipped" in replica_check["detail"]
        assert health.json["checks"]["database"]["ok"] is True


def test_a_down_replica_is_skipped_without_being_asked_again(api, cloud):
    with configured_replica("replica1", HOST="127.0.0.1", PORT=free_port()) as alias:
        api.get("/resource_providers")
        assert replicas._is_down(alias)
        before = replicas.READS_ROUTED.labels(database="default", reason="replicas down")
        count = before._value.get()
        api.get("/resource_providers")
        assert before._value.get() == count + 1


def test_healthcheck_reports_each_replica_and_its_lag(api, cloud):
    with configured_replica("replica1"), configured_replica("replica2"):
        response = api.get("/healthcheck?detailed")
    check = response.json["checks"]["replicas"]
    assert set(check["replicas"]) == {"replica1", "replica2"}
    for state in check["replicas"].values():
        assert state["status"] == "up"
        assert state["lag_ms"] == 0


def test_a_replica_over_the_lag_limit_is_not_read_from(api, cloud, replica, settings):
    settings.PLACEMENT_REPLICA_MAX_LAG_MS = -1  # every replica is too far behind
    response, on_replica = _queries(replica, lambda: api.get("/resource_providers"))
    assert response.status == 200
    assert [sql for sql in on_replica if "pg_is_in_recovery" not in sql] == []  # asked, not used
    check = api.get("/healthcheck?detailed").json["checks"]["replicas"]
    assert check["replicas"]["replica1"]["status"] == "lagging"
    assert check["ok"] is True
