"""With real Celery workers: a run whose worker is killed whole is recorded lost when the
worker starts again; the detailed health check sees a worker on another (dead) broker, and a
fresh worker with beat is healthy at once."""

import os
import signal

import pytest

from placementsite.models import ServiceProcess, TaskRun
from placementsite.observability import health
from placementsite.tasks import HEARTBEAT_TASK
from tests.celery_worker import ROOT
from tests.observability.slow_tasks import SLEEPS

pytestmark = [pytest.mark.postgresql, pytest.mark.redis]


def test_a_run_whose_worker_is_killed_is_recorded_lost(celery_worker):
    worker = celery_worker(include=["tests.observability.slow_tasks"])
    worker.send(SLEEPS)
    worker.wait_for(lambda: TaskRun.objects.filter(task=SLEEPS, state="started").exists())
    worker.kill()
    run = TaskRun.objects.get(task=SLEEPS)
    assert run.state == TaskRun.State.STARTED and run.finished_at is None
    # The same node started again (systemd restarts it): the run it left is lost, and said.
    again = celery_worker(include=["tests.observability.slow_tasks"], queue=worker.queue)
    run.refresh_from_db()
    assert run.state == TaskRun.State.LOST
    assert run.finished_at is not None
    assert f"Task {SLEEPS} ({run.task_id})" in again.log()
    ok, detail = health.check_task_runs()
    assert not ok and SLEEPS in detail


def test_a_finished_run_is_recorded(celery_worker):
    worker = celery_worker()
    worker.send(HEARTBEAT_TASK)
    worker.wait_for(lambda: TaskRun.objects.filter(task=HEARTBEAT_TASK, state="succeeded").exists())
    run = TaskRun.objects.get(task=HEARTBEAT_TASK)
    assert run.worker == f"{worker.queue}@" + run.worker.split("@", 1)[1]
    assert run.finished_at >= run.started_at


def test_a_worker_on_another_broker_is_alive_but_silent(celery_worker):
    # Its broker is not the service's: as one whose broker died, it never answers a ping.
    worker = celery_worker(broker="redis://127.0.0.1:6379/13")
    name = ServiceProcess.objects.get(kind="worker").name
    assert name.startswith(worker.queue)
    ok, detail = health.check_workers()
    assert not ok
    assert f"{name} alive but not answering over the broker" in detail


def test_a_fresh_worker_and_beat_are_healthy_at_once(celery_worker):
    worker = celery_worker(beat_task=HEARTBEAT_TASK)
    worker.wait_for(lambda: ServiceProcess.objects.filter(kind="beat").exists())
    ok, detail = health.check_workers()
    assert ok, detail
    ok, detail = health.check_beat()
    assert ok, detail
    worker_name = ServiceProcess.objects.get(kind="worker").name
    assert worker_name in health.check_workers()[1]


def test_a_warm_shutdown_takes_the_worker_off_the_list(celery_worker, tmp_path):
    from tests.celery_worker import running_worker
    from tests.conftest import test_database_url

    with running_worker(database_url=test_database_url(), log_dir=tmp_path):
        assert ServiceProcess.objects.filter(kind="worker").count() == 1
    assert not ServiceProcess.objects.filter(kind="worker").exists()


def _worker_unit():
    text = (ROOT / "docs" / "deploy.md").read_text()
    start = text.index("# /etc/systemd/system/placement-worker.service")
    return text[start : text.index("```", start)]


def _unit_setting(unit, name):
    (value,) = [line.split("=", 1)[1] for line in unit.splitlines() if line.startswith(name + "=")]
    return value


def test_the_documented_worker_unit_stops_with_a_warm_shutdown():
    unit = _worker_unit()
    assert _unit_setting(unit, "KillMode") == "mixed"
    assert _unit_setting(unit, "KillSignal") == "SIGTERM"
    assert int(_unit_setting(unit, "TimeoutStopSec")) >= 600


def test_sigterm_to_the_main_process_lets_the_running_task_finish(celery_worker):
    """What KillMode=mixed does: the worker stops taking tasks and waits for the running one."""
    worker = celery_worker(include=["tests.observability.slow_tasks"], pool="prefork")
    worker.send_with(SLEEPS, kwargs={"seconds": 4})
    worker.wait_for(lambda: TaskRun.objects.filter(task=SLEEPS).exists())
    worker.terminate_main_process()
    worker.process.wait(timeout=60)
    run = TaskRun.objects.get(task=SLEEPS)
    assert run.state == TaskRun.State.SUCCEEDED, worker.log()


def test_sigterm_to_every_process_kills_the_running_task(celery_worker):
    """What the default KillMode=control-group does: the pool's child dies with its task."""
    worker = celery_worker(include=["tests.observability.slow_tasks"], pool="prefork")
    worker.send_with(SLEEPS, kwargs={"seconds": 20})
    worker.wait_for(lambda: TaskRun.objects.filter(task=SLEEPS).exists())
    os.killpg(worker.process.pid, signal.SIGTERM)
    worker.process.wait(timeout=60)
    assert TaskRun.objects.get(task=SLEEPS).state != TaskRun.State.SUCCEEDED
