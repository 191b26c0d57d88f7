"""Fixtures shared by every test: an API client speaking Placement's dialect, policy files,
a real Celery worker, and the test database's URL for other processes."""

import contextlib
import json
import os
import shutil
import socket
import uuid

import pytest
from django.db import connection
from django.test import Client

from tests.celery_worker import broker_address, running_worker


class PlacementClient:
    """A Django test client that sends Placement's headers.

    Every call goes through the whole stack: middleware (request id, auth,
    microversion), URL routing, DRF and the database. ``version`` sets
    ``OpenStack-API-Version``; ``token`` sets ``X-Auth-Token`` (None: none); ``roles``
    (noauth2's ``X-Roles``) is sent with every request.
    """

    def __init__(self, token="admin", version=None, roles=None):
        self.client = Client()
        self.token = token
        self.version = version
        self.roles = roles

    def request(
        self,
        method,
        url,
        body=None,
        *,
        version=None,
        token=...,
        headers=None,
        content_type="application/json",
        raw=None,
    ):
        token = self.token if token is ... else token
        version = version if version is not None else self.version
        extra = {}
        if token is not None:
            extra["HTTP_X_AUTH_TOKEN"] = token
        if version is not None:
            extra["HTTP_OPENSTACK_API_VERSION"] = f"placement {version}"
        if self.roles is not None:
            extra["HTTP_X_ROLES"] = self.roles
        for name, value in (headers or {}).items():
            extra["HTTP_" + name.upper().replace("-", "_")] = value
        data = raw if raw is not None else (json.dumps(body) if body is not None else "")
        kwargs = {"content_type": content_type} if (body is not None or raw is not None) else {}
        response = (
            getattr(self.client, method.lower())(url, data=data, **kwargs, **extra)
            if (method.upper() not in ("GET", "HEAD"))
            else getattr(self.client, method.lower())(url, **extra)
        )
        return Response(response)

    def get(self, url, **kw):
        return self.request("GET", url, **kw)

    def put(self, url, body=None, **kw):
        return self.request("PUT", url, body, **kw)

    def post(self, url, body=None, **kw):
        return self.request("POST", url, body, **kw)

    def delete(self, url, **kw):
        return self.request("DELETE", url, **kw)


class Response:
    """The Django response plus ``.json`` and helpers for Placement errors."""

    def __init__(self, response):
        self.raw = response
        self.status = response.status_code
        self.headers = response.headers
        self.content = response.content

    @property
    def json(self):
        return json.loads(self.content)

    @property
    def error(self):
        return self.json["errors"][0]

    @property
    def error_code(self):
        return self.error.get("code")

    def __repr__(self):
        return f"<Response {self.status} {self.content[:300]!r}>"


def _redis_reachable():
    try:
        with socket.create_connection(broker_address(), timeout=1):
            return True
    except OSError:
        return False


def pytest_configure(config):
    from django.conf import settings

    from tests.replica import define_test_aliases

    if settings.DATABASES["default"]["ENGINE"].endswith("postgresql"):
        define_test_aliases(settings.DATABASES)


_DATABASE_FIXTURES = {
    "db",
    "transactional_db",
    "live_server",
    "django_db_reset_sequences",
    "django_db_serialized_rollback",
}


def _allow_every_database(items):
    """Every database test may read through the replica aliases (which the router uses only
    when a replica is configured)."""
    for item in items:
        marker = item.get_closest_marker("django_db")
        if marker is None and not _DATABASE_FIXTURES & set(getattr(item, "fixturenames", ())):
            continue
        kwargs = {**(marker.kwargs if marker else {}), "databases": "__all__"}
        item.add_marker(pytest.mark.django_db(*(marker.args if marker else ()), **kwargs), False)


def pytest_collection_modifyitems(config, items):
    """Tests that need a tool this machine lacks skip, saying what to install.

    ``postgresql``: SQLite, the embedded default, has no row locks and serialises writers by
    locking the whole file, and its test database lives in memory, out of reach of another
    process (a Celery worker). ``redis``: a real Celery worker's broker. ``browser``: Debian's
    chromium and chromium-driver (``./scripts/test`` installs them when it can).
    """
    from django.conf import settings

    if _replica_for_the_run_wanted() or os.environ.get("DATABASE_REPLICA_URLS"):
        _allow_every_database(items)
    missing = {}
    if not settings.DATABASES["default"]["ENGINE"].endswith("postgresql"):
        missing["postgresql"] = (
            "needs PostgreSQL: set DATABASE_URL (apt-get install postgresql; .ci/run sets it up)"
        )
    if not _redis_reachable():
        host, port = broker_address()
        missing["redis"] = f"needs Redis on {host}:{port} (apt-get install redis-server)"
    absent = [name for name in ("chromium", "chromedriver") if shutil.which(name) is None]
    if absent:
        missing["browser"] = (
            f"needs {' and '.join(absent)} (apt-get install chromium chromium-driver)"
        )
    for item in items:
        for marker, reason in missing.items():
            if item.get_closest_marker(marker):
                item.add_marker(pytest.mark.skip(reason=reason))
                break


@pytest.fixture(autouse=True)
def placement_settings(settings):
    settings.PLACEMENT_AUTH_STRATEGY = "noauth2"
    settings.PLACEMENT_POLICY_DEFAULTS = "legacy"
    settings.PLACEMENT_POLICY_FILE = ""
    # A report asks a worker for its sync only in the tests about that (no broker otherwise).
    settings.PLACEMENT_SYNC_ON_REPORT = False
    return settings


@pytest.fixture
def policy_file(settings, tmp_path):
    """``policy_file({rule: check})``: an operator's policy file overriding those rules."""

    def write(rules):
        path = tmp_path / "policy.yaml"
        path.write_text("".join(f'"{name}": "{check}"\n' for name, check in rules.items()))
        settings.PLACEMENT_POLICY_FILE = str(path)

    return write


@pytest.fixture
def api(db):
    """An admin client at the latest microversion."""
    return PlacementClient(version="latest")


@pytest.fixture
def api_at(db):
    """``api_at("1.14")``: an admin client pinned to a microversion."""
    return lambda version, token="admin": PlacementClient(token=token, version=version)


def new_uuid():
    return str(uuid.uuid4())


def test_database_url():
    """The URL of the test database, for a process outside this one."""
    db = connection.settings_dict
    if connection.vendor != "postgresql":
        pytest.fail("a test with another process needs PostgreSQL (set DATABASE_URL)")
    user = db["USER"] or "postgres"
    password = f":{db['PASSWORD']}" if db["PASSWORD"] else ""
    host = db["HOST"] or "127.0.0.1"
    port = db["PORT"] or 5432
    return f"postgres://{user}{password}@{host}:{port}/{db['NAME']}"


test_database_url.__test__ = False  # a helper, not a test, in the modules that import it


@pytest.fixture
def celery_worker(transactional_db, tmp_path):
    """``celery_worker(beat_task=None, env=None)``: a real Celery worker on the test database
    and Redis, ready when returned (a :class:`tests.celery_worker.Worker`), stopped after the
    test; ``beat_task``: with beat running that periodic task alone, every second."""
    with contextlib.ExitStack() as workers:
        yield lambda **options: workers.enter_context(
            running_worker(database_url=test_database_url(), log_dir=tmp_path, **options)
        )
    connection.close()  # the flush after this test must not wait on our session


def _primary_address():
    db = connection.settings_dict
    return {
        "host": db["HOST"] or "127.0.0.1",
        "port": int(db["PORT"] or 5432),
        "user": db["USER"] or "postgres",
    }


@pytest.fixture(scope="session")
def streaming_replica(django_db_setup, django_db_blocker):
    """A PostgreSQL streaming replica of the test database's cluster (``tests/replica.py``),
    made once per run after the test database exists; the tests skip, saying why, where it
    cannot be made. With ``PLACEMENT_TEST_REPLICA=1`` every test of the run reads through it
    (see ``_replica_for_the_run``)."""
    from tests import replica

    with django_db_blocker.unblock():
        if connection.vendor != "postgresql":
            pytest.skip("a streaming replica needs PostgreSQL (set DATABASE_URL)")
        primary = _primary_address()
    reason = replica.unavailable_reason(primary)
    if reason:
        pytest.skip(f"no streaming replica: {reason}")
    standby = replica.StreamingReplica(primary).create()
    try:
        standby.wait_caught_up()
        yield standby
    finally:
        standby.destroy()


def _replica_for_the_run_wanted():
    return os.environ.get("PLACEMENT_TEST_REPLICA", "") not in ("", "0")


@pytest.fixture(scope="session", autouse=True)
def _replica_for_the_run(request):
    """``PLACEMENT_TEST_REPLICA=1``: the run's requests read through a real streaming replica
    (alias ``replica1``) wherever the router allows, so any test file runs with routing on
    (every database test then allows every alias: see ``pytest_collection_modifyitems``)."""
    if not _replica_for_the_run_wanted():
        yield None
        return
    from tests import replica

    standby = request.getfixturevalue("streaming_replica")
    # The servers and workers tests start read through it too.
    saved = os.environ.get("DATABASE_REPLICA_URLS")
    os.environ["DATABASE_REPLICA_URLS"] = standby.url(connection.settings_dict["NAME"])
    try:
        with replica.configured_replica("replica1", HOST="127.0.0.1", PORT=standby.port):
            yield standby
    finally:
        if saved is None:
            os.environ.pop("DATABASE_REPLICA_URLS", None)
        else:
            os.environ["DATABASE_REPLICA_URLS"] = saved
