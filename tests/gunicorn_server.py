"""A gunicorn serving the test database, for tests that drive the service over real HTTP."""

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

from tests.conftest import test_database_url

ROOT = Path(__file__).resolve().parent.parent


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running_gunicorn(*, workers, env=None):
    """A gunicorn (``workers`` processes, noauth2) on the test database until the block ends;
    yields its base URL. ``env``: more environment variables (a report asks for no sync unless
    ``PLACEMENT_SYNC_ON_REPORT`` says so)."""
    port = free_port()
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "placementsite.settings",
        "DATABASE_URL": test_database_url(),
        "DATABASE_CONN_MAX_AGE": "0",
        "PLACEMENT_AUTH_STRATEGY": "noauth2",
        "PLACEMENT_POLICY_DEFAULTS": "legacy",
        "PLACEMENT_LOG_LEVEL": "WARNING",
        "PLACEMENT_SYNC_ON_REPORT": "0",
        **(env or {}),
    }
    gunicorn = Path(sys.executable).parent / "gunicorn"
    # Its log in a file (a pipe nobody reads would fill and stall it), shown if it fails.
    log = tempfile.TemporaryFile()
    process = subprocess.Popen(
        [
            str(gunicorn),
            "placementsite.wsgi:application",
            "--workers",
            str(workers),
            "--bind",
            f"127.0.0.1:{port}",
            "--log-level",
            "warning",
            "--timeout",
            "120",
        ],
        cwd=ROOT,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if requests.get(base + "/", timeout=10).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                raise RuntimeError(f"gunicorn did not start: {log.read()[-4000:]!r}")
            time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
