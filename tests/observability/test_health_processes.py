"""/healthcheck?detailed tells the Celery side apart: a worker alive but cut off from its
broker, every worker down (beat not blamed), two beats, a lost task run, and a service that
has just started (not yet due is not down)."""

import datetime as dt

import pytest
from django.utils import timezone

from placementsite.models import Heartbeat, ServiceProcess, TaskRun
from placementsite.observability import health
from placementsite.observability.processes import process_seen, task_run_started, task_runs_lost
from placementsite.tasks import heartbeat_record

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def quiet_broker(settings, monkeypatch):
    """The broker's own check passes; which workers answer a ping is each test's."""
    monkeypatch.setattr(health, "check_broker", lambda: (True, "reachable (test)"))
    monkeypatch.setitem(health.DETAILED_CHECKS, "broker", health.check_broker)
    settings.PLACEMENT_HEARTBEAT_MAX_AGE = 180


def answering(monkeypatch, *names):
    monkeypatch.setattr(health, "ping_workers", lambda expected: set(names))


def ago(seconds):
    return timezone.now() - dt.timedelta(seconds=seconds)


def checks(api):
    response = api.get("/healthcheck?detailed")
    return response.status, response.json["checks"]


def long_running(minutes=30):
    """A worker and a beat up for a while, the heartbeat fresh."""
    process_seen(kind="worker", name="celery@w1", started=True, now=ago(minutes * 60))
    process_seen(kind="worker", name="celery@w1")
    process_seen(kind="beat", name="h1:10", started=True, now=ago(minutes * 60))
    process_seen(kind="beat", name="h1:10")
    heartbeat_record(name="heartbeat", hostname="w1")


def test_all_good_after_a_while(api, monkeypatch):
    long_running()
    answering(monkeypatch, "celery@w1")
    status, found = checks(api)
    assert status == 200, found
    assert "last heartbeat" in found["workers"]["detail"]


def test_a_worker_alive_but_cut_off_from_its_broker_is_seen(api, monkeypatch):
    long_running()
    process_seen(kind="worker", name="celery@w2", started=True)
    answering(monkeypatch, "celery@w1")  # w2 records itself alive but does not answer
    status, found = checks(api)
    assert status == 503
    assert found["workers"]["ok"] is False
    assert "celery@w2 alive but not answering over the broker" in found["workers"]["detail"]


def test_all_workers_down_is_said_and_beat_is_not_blamed(api, monkeypatch):
    long_running()
    ServiceProcess.objects.filter(kind="worker").update(last_seen=ago(600))
    Heartbeat.objects.update(last_run=ago(600))
    answering(monkeypatch)  # nobody answers
    status, found = checks(api)
    assert status == 503
    assert found["workers"]["detail"] == "no worker answered a ping: every worker is down"
    assert found["beat"]["ok"] is True, found["beat"]


def test_two_beats_are_seen(api, monkeypatch):
    long_running()
    process_seen(kind="beat", name="h2:20", started=True)
    answering(monkeypatch, "celery@w1")
    status, found = checks(api)
    assert status == 503
    assert found["beat"]["ok"] is False
    assert "2 beats are running (h1:10, h2:20)" in found["beat"]["detail"]


def test_a_beat_that_stopped_long_ago_does_not_count_as_a_second(api, monkeypatch):
    long_running()
    process_seen(kind="beat", name="old:1", started=True, now=ago(3600))
    ServiceProcess.objects.filter(name="old:1").update(last_seen=ago(3600))
    answering(monkeypatch, "celery@w1")
    assert checks(api)[0] == 200


def test_a_beat_down_is_blamed(api, monkeypatch):
    long_running()
    ServiceProcess.objects.filter(kind="beat").update(last_seen=ago(900))
    answering(monkeypatch, "celery@w1")
    status, found = checks(api)
    assert status == 503
    assert found["beat"]["detail"] == "beat last seen 900 s ago (h1:10)"


def test_a_fresh_start_is_not_yet_due_rather_than_down(api, monkeypatch):
    # Worker and beat started seconds ago; the heartbeat has never run yet.
    process_seen(kind="worker", name="celery@w1", started=True, now=ago(5))
    process_seen(kind="beat", name="h1:10", started=True, now=ago(5))
    answering(monkeypatch, "celery@w1")
    status, found = checks(api)
    assert status == 200, found
    assert "not due yet" in found["workers"]["detail"]


def test_a_restart_after_a_long_stop_is_not_yet_due(api, monkeypatch):
    heartbeat_record(name="heartbeat", hostname="w1")
    Heartbeat.objects.update(last_run=ago(7200))
    process_seen(kind="worker", name="celery@w1", started=True, now=ago(10))
    process_seen(kind="beat", name="h1:11", started=True, now=ago(10))
    answering(monkeypatch, "celery@w1")
    assert checks(api)[0] == 200


def test_workers_that_never_run_the_heartbeat_are_reported(api, monkeypatch):
    long_running()
    Heartbeat.objects.update(last_run=ago(900))
    answering(monkeypatch, "celery@w1")
    status, found = checks(api)
    assert status == 503
    assert "the heartbeat beat sends last ran 900 s ago" in found["workers"]["detail"]


def test_a_lost_task_run_is_reported(api, monkeypatch):
    long_running()
    answering(monkeypatch, "celery@w1")
    task_run_started(task_id="t-1", task="providers.tasks.sync_compute_nodes", worker="celery@w1")
    (lost,) = task_runs_lost(worker="celery@w1")
    assert lost.task_id == "t-1"
    assert TaskRun.objects.get(task_id="t-1").state == TaskRun.State.LOST
    status, found = checks(api)
    assert status == 503
    assert "providers.tasks.sync_compute_nodes" in found["task_runs"]["detail"]
