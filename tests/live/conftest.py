"""Fixtures that drive real client processes against pytest-django's live server.

``osc(*args)`` runs the real ``openstack`` CLI (python-openstackclient with
osc-placement, from the same virtualenv) against ``live_server`` with an
``admin_token`` (the server runs the ``noauth2`` strategy, where ``admin`` is
an admin) and returns its ``-f json`` output parsed. Commands that print
nothing take ``fmt=None`` and return the stripped stdout. A failing command
raises ``OscError`` carrying the exit status and stderr; ``osc.fails(*args)``
returns that error instead, for tests of refusals.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

OPENSTACK = str(Path(sys.executable).with_name("openstack"))
DEFAULT_VERSION = "1.39"
TIMEOUT = 120


class OscError(AssertionError):
    def __init__(self, args, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr
        super().__init__(f"openstack {' '.join(args)} exited {returncode}:\n{stderr}{stdout}")


class Osc:
    def __init__(self, url, token="admin", version=DEFAULT_VERSION):
        self.url, self.token, self.version = url, token, version
        # The client must see only this server: no clouds.yaml, no OS_* variables.
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
        self.env["OS_CLIENT_CONFIG_FILE"] = os.devnull

    def command(self, args, version=None, fmt="json"):
        cmd = [
            OPENSTACK,
            "--os-auth-type",
            "admin_token",
            "--os-endpoint",
            self.url,
            "--os-token",
            self.token,
            "--os-placement-api-version",
            version or self.version,
            *args,
        ]
        if fmt:
            cmd += ["-f", fmt]
        return cmd

    def run(self, *args, version=None, fmt="json"):
        done = subprocess.run(
            self.command(args, version, fmt),
            capture_output=True,
            text=True,
            env=self.env,
            timeout=TIMEOUT,
            stdin=subprocess.DEVNULL,
        )
        if done.returncode != 0:
            raise OscError(args, done.returncode, done.stdout, done.stderr)
        out = done.stdout.strip()
        if fmt == "json":
            return json.loads(out) if out else None
        return out

    __call__ = run

    def fails(self, *args, version=None, fmt=None):
        try:
            self.run(*args, version=version, fmt=fmt)
        except OscError as exc:
            return exc
        raise AssertionError(f"openstack {' '.join(args)} succeeded; a failure was expected")


@pytest.fixture
def osc(live_server, settings):
    """The ``openstack`` CLI against the live server, as a noauth2 admin."""
    settings.PLACEMENT_AUTH_STRATEGY = "noauth2"
    return Osc(live_server.url)
