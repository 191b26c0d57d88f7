"""A real Celery worker (and beat) for the tests that need one, on Redis.

Each worker consumes a queue of its own, and with beat every periodic task is sent to that
queue, so two test runs sharing one Redis (two checkouts on one machine) never take each
other's tasks. The worker runs in a process group of its own, stopped whole however the test
ends.
"""

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from celery import Celery

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_BROKER_URL = "redis://127.0.0.1:6379/15"


def broker_url():
    """``CELERY_BROKER_URL`` when it names Redis (a checkout's own database), else database 15."""
    url = os.environ.get("CELERY_BROKER_URL", "")
    return url if urlsplit(url).scheme in ("redis", "rediss") else DEFAULT_BROKER_URL


def broker_address():
    parts = urlsplit(broker_url())
    return parts.hostname or "127.0.0.1", parts.port or 6379


@dataclass
class Worker:
    queue: str
    broker_url: str
    log_path: Path
    process: subprocess.Popen | None = None

    def terminate_main_process(self):
        """SIGTERM to the worker's main process alone, as systemd's KillMode=mixed stops it."""
        self.process.send_signal(signal.SIGTERM)

    def kill(self):
        """SIGKILL the worker whole (and its beat): nothing of it can say it stopped."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def log(self, tail=4000):
        return self.log_path.read_text()[-tail:]

    def send(self, task_name):
        """Send ``task_name`` to this worker's queue."""
        self.send_with(task_name)

    def send_with(self, task_name, **options):
        """Send ``task_name`` to this worker's queue, with ``kwargs=`` and the like."""
        # An explicit URL: Celery prefers a CELERY_BROKER_URL environment variable to broker=.
        sender = Celery("test-sender")
        with sender.connection_for_write(self.broker_url) as conn:
            sender.send_task(task_name, queue=self.queue, connection=conn, **options)

    def wait_for(self, condition, seconds=90):
        """Poll ``condition`` until it holds; fail with the worker's log if it never does."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if condition():
                return
            time.sleep(0.5)
        pytest.fail("condition not met; worker log:\n" + self.log())


def _command(queue, beat, log_dir, include=(), pool="solo"):
    command = [sys.executable, "-m", "celery", "-A", "placementsite", "worker"]
    if beat:
        command += ["--beat", "--schedule", str(log_dir / f"{queue}.beat-schedule")]
    if include:
        command += ["--include", ",".join(include)]
    return command + [
        "--pool",
        pool,
        "--queues",
        queue,
        "--hostname",
        f"{queue}@%h",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
        "--loglevel",
        "INFO",
    ]


def _wait_until_ready(process, worker, beat, seconds=60):
    """The worker logs "ready." once it consumes; beat logs "beat: Starting..."."""
    signs = ["ready."] + (["beat: Starting"] if beat else [])
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        log = worker.log_path.read_text()
        if all(sign in log for sign in signs):
            return
        if process.poll() is not None:
            pytest.fail(f"the Celery worker exited ({process.returncode}):\n{worker.log()}")
        time.sleep(0.2)
    pytest.fail("the Celery worker did not start; its log:\n" + worker.log())


def _stop(process):
    """SIGTERM to the whole group (worker and beat), then SIGKILL to whatever is left."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=5)


def _schedule_only(task, queue):
    """Beat's entries as the code declares them, all paused but ``task``, which runs every
    second; each sent to ``queue``."""
    from django_celery_beat.models import IntervalSchedule, PeriodicTask

    from placementsite.tasks import beat_schedule_sync

    beat_schedule_sync()
    every_second, _ = IntervalSchedule.objects.get_or_create(
        every=1, period=IntervalSchedule.SECONDS
    )
    PeriodicTask.objects.update(queue=queue)
    PeriodicTask.objects.exclude(task=task).update(enabled=False)
    PeriodicTask.objects.filter(task=task).update(interval=every_second, enabled=True)


@contextlib.contextmanager
def running_worker(
    *,
    database_url,
    log_dir,
    beat_task=None,
    env=None,
    include=(),
    queue=None,
    broker=None,
    pool="solo",
):
    """A worker on ``database_url`` until the block ends. ``beat_task``: with an embedded beat
    running that periodic task alone, every second. ``env``: more environment variables.
    ``include``: more task modules to import. ``queue``: its queue, hence its node name
    (``queue@host``), to start a worker again as the same node. ``broker``: another broker
    than the tests' own. ``pool``: ``solo`` (one process) or ``prefork`` (two children)."""
    queue = queue or f"placement-test-{uuid.uuid4().hex[:12]}"
    worker = Worker(
        queue=queue,
        broker_url=broker or broker_url(),
        log_path=log_dir / f"{queue}-{uuid.uuid4().hex[:6]}.log",
    )
    beat = beat_task is not None
    if beat:
        _schedule_only(beat_task, worker.queue)
    environment = {
        **os.environ,
        "DATABASE_URL": database_url,
        "CELERY_BROKER_URL": worker.broker_url,
        "CELERY_TASK_ALWAYS_EAGER": "0",
        "DJANGO_SETTINGS_MODULE": "placementsite.settings",
        **(env or {}),
    }
    with open(worker.log_path, "w") as log:
        process = subprocess.Popen(
            _command(worker.queue, beat, log_dir, include, pool),
            cwd=ROOT,
            env=environment,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: beat's process is stopped too
        )
    worker.process = process
    try:
        _wait_until_ready(process, worker, beat)
        yield worker
    finally:
        _stop(process)
        _delete_queue(worker)


def _delete_queue(worker):
    """The worker's queue, whatever is left in it, and its binding. Redis's transport deletes
    only what its channel declared, so declare the queue as Celery does, then delete it."""
    app = Celery("test-purge")
    with app.connection_for_write(worker.broker_url) as conn:
        queue = app.amqp.queues[worker.queue].bind(conn.default_channel)
        queue.declare()
        queue.delete()
