"""/healthcheck: 200/503 without a token for load balancers; ?detailed for operators."""

import pytest
from django.db import OperationalError

from placementsite.celery import app as celery_app
from placementsite.observability import health
from placementsite.observability.processes import process_seen
from placementsite.tasks import heartbeat_record


def use_broker(monkeypatch, url):
    # Celery reads CELERY_BROKER_URL from the environment before its configuration.
    monkeypatch.setenv("CELERY_BROKER_URL", url)
    monkeypatch.setattr(celery_app.conf, "broker_url", url)


@pytest.fixture
def memory_broker(monkeypatch):
    use_broker(monkeypatch, "memory://")


@pytest.fixture
def workers_answer(monkeypatch):
    """``workers_answer(*names)``: those workers answer the health check's ping (and are
    recorded alive, as a running worker records itself)."""

    def answer(*names):
        for name in names:
            process_seen(kind="worker", name=name, started=True)
        monkeypatch.setattr(health, "ping_workers", lambda expected: set(names))

    return answer


class BrokenCursor:
    def __enter__(self):
        raise OperationalError("could not connect to server: Connection refused")

    def __exit__(self, *exc):
        return False


class DatabaseDown:
    vendor = "postgresql"

    def cursor(self):
        return BrokenCursor()


def test_healthcheck_answers_ok_without_a_token(api):
    response = api.get("/healthcheck", token=None)
    assert response.status == 200
    assert response.content == b"OK"
    assert response.headers["Content-Type"].startswith("text/plain")


def test_healthcheck_head(api):
    assert api.request("HEAD", "/healthcheck", token=None).status == 200


def test_healthcheck_is_503_and_says_only_database_unreachable(api, monkeypatch, caplog):
    monkeypatch.setattr(health, "connection", DatabaseDown())
    response = api.get("/healthcheck", token=None)
    assert response.status == 503
    assert response.content == b"database unreachable"
    # The driver's text (host, port, role) is for the log and ?detailed only.
    assert any("Connection refused" in r.getMessage() for r in caplog.records)


def test_detailed_healthcheck_gives_the_database_error_to_operators(api, monkeypatch):
    monkeypatch.setattr(health, "connection", DatabaseDown())
    response = api.get("/healthcheck?detailed")
    assert response.status == 503
    assert "Connection refused" in response.json["checks"]["database"]["detail"]


def test_healthcheck_refuses_other_methods_in_placement_format(api):
    response = api.post("/healthcheck", {}, token=None)
    assert response.status == 405
    assert response.error["title"] == "Method Not Allowed"
    assert response.headers["Allow"] == "GET, HEAD"


def test_detailed_healthcheck_needs_a_token(api):
    response = api.get("/healthcheck?detailed", token=None)
    assert response.status == 401
    assert response.error["status"] == 401


@pytest.mark.parametrize("roles", ["x", "reader", "member", "service"])
def test_detailed_healthcheck_needs_admin_or_monitoring(api, roles):
    response = api.get("/healthcheck?detailed", token="someone:p1", headers={"X-Roles": roles})
    assert response.status == 403
    assert "placement:healthcheck:detailed" in response.error["detail"]


def test_detailed_healthcheck_refuses_a_system_scoped_admin(api):
    response = api.get("/healthcheck?detailed", headers={"OpenStack-System-Scope": "all"})
    assert response.status == 403


def test_detailed_healthcheck_all_good(api, memory_broker, workers_answer):
    workers_answer("celery@worker-1")
    process_seen(kind="beat", name="host-1:42")
    heartbeat_record(name="heartbeat", hostname="worker-1")
    response = api.get("/healthcheck?detailed=1", token="op:p1", headers={"X-Roles": "monitoring"})
    assert response.status == 200, response
    body = response.json
    assert body["status"] == "OK"
    assert set(body["checks"]) == {
        "database",
        "migrations",
        "broker",
        "workers",
        "beat",
        "task_runs",
        "replicas",
    }
    assert all(check["ok"] for check in body["checks"].values())
    assert body["checks"]["replicas"]["detail"] == "no replica configured"
    assert "celery@worker-1" in body["checks"]["workers"]["detail"]
    assert "host-1:42" in body["checks"]["beat"]["detail"]
    assert body["checks"]["migrations"]["detail"] == "all migrations applied"


def test_detailed_healthcheck_reports_beat_never_ran(api, memory_broker, workers_answer):
    workers_answer("celery@worker-1")
    response = api.get("/healthcheck?detailed")
    assert response.status == 503
    beat = response.json["checks"]["beat"]
    assert beat["ok"] is False
    assert "never run" in beat["detail"]
    assert response.json["checks"]["database"]["ok"] is True


def test_detailed_healthcheck_reports_an_unreachable_broker(api, monkeypatch):
    # Nothing listens on port 1 of the loopback address: the connection is refused at once.
    use_broker(monkeypatch, "redis://127.0.0.1:1/0")
    heartbeat_record(name="heartbeat", hostname="worker-1")
    response = api.get("/healthcheck?detailed")
    assert response.status == 503
    broker = response.json["checks"]["broker"]
    assert broker["ok"] is False
    assert broker["detail"].startswith("unreachable")


def test_detailed_healthcheck_reports_unapplied_migrations(api, memory_broker, monkeypatch):
    class Plan:
        app_label, name = "providers", "9999_future"

    monkeypatch.setattr(
        health.MigrationExecutor, "migration_plan", lambda self, targets: [(Plan(), False)]
    )
    heartbeat_record(name="heartbeat", hostname="worker-1")
    response = api.get("/healthcheck?detailed")
    assert response.status == 503
    assert response.json["checks"]["migrations"]["detail"] == (
        "1 unapplied migration(s): providers.9999_future"
    )


def test_healthcheck_is_not_redirected_to_https(api, settings):
    """A load balancer probes each server directly, over plain HTTP."""
    settings.SECURE_SSL_REDIRECT = True
    assert api.get("/healthcheck", token=None).status == 200
    assert api.get("/resource_providers").status == 301
