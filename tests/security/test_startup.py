"""A configuration every request would fail on stops the service at startup, clearly."""

import logging
import os
import subprocess
import sys

import pytest
from django.conf import settings as django_settings
from django.core.exceptions import ImproperlyConfigured

from placementsite.core.api.configuration import check_configuration

REFUSED = [
    ({"PLACEMENT_AUTH_STRATEGY": "bogus"}, "Unknown PLACEMENT_AUTH_STRATEGY 'bogus'"),
    ({"PLACEMENT_POLICY_DEFAULTS": "strict"}, "Unknown PLACEMENT_POLICY_DEFAULTS 'strict'"),
    ({"PLACEMENT_POLICY_FILE": "/nonexistent/policy.yaml"}, "cannot be read"),
]


@pytest.mark.parametrize(("overrides", "message"), REFUSED, ids=lambda v: str(v)[:40])
def test_bad_configuration_is_refused(settings, overrides, message):
    for name, value in overrides.items():
        setattr(settings, name, value)
    with pytest.raises(ImproperlyConfigured, match=message):
        check_configuration()


def test_unparsable_policy_file_is_refused(settings, tmp_path):
    path = tmp_path / "policy.yaml"
    path.write_text('"placement:usages": [unclosed\n')
    settings.PLACEMENT_POLICY_FILE = str(path)
    with pytest.raises(ImproperlyConfigured, match="not valid YAML"):
        check_configuration()


def test_policy_file_not_a_mapping_is_refused(settings, tmp_path):
    path = tmp_path / "policy.yaml"
    path.write_text("- role:admin\n")
    settings.PLACEMENT_POLICY_FILE = str(path)
    with pytest.raises(ImproperlyConfigured, match="must map rule names"):
        check_configuration()


def test_good_configuration_starts_quietly(settings, tmp_path, caplog):
    path = tmp_path / "policy.yaml"
    path.write_text('"placement:usages": "role:admin"\n')
    settings.PLACEMENT_AUTH_STRATEGY = "token"
    settings.PLACEMENT_POLICY_DEFAULTS = "secure"
    settings.PLACEMENT_POLICY_FILE = str(path)
    with caplog.at_level(logging.WARNING, logger="placement"):
        check_configuration()
    assert not caplog.records


def test_noauth2_warns_at_startup(settings, caplog):
    settings.PLACEMENT_AUTH_STRATEGY = "noauth2"
    with caplog.at_level(logging.WARNING, logger="placement"):
        check_configuration()
    (record,) = caplog.records
    assert "noauth2" in record.getMessage()
    assert record.levelno == logging.WARNING


def _start(argv, overrides):
    env = {**os.environ, **overrides}
    env.pop("PYTEST_XDIST_WORKER", None)
    return subprocess.run(
        [sys.executable, *argv],
        cwd=django_settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(("overrides", "message"), REFUSED, ids=lambda v: str(v)[:40])
def test_wsgi_application_refuses_to_load(overrides, message):
    # What gunicorn does first: import the WSGI application (which sets Django up).
    result = _start(["-c", "import placementsite.wsgi"], overrides)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert message in result.stderr


def test_manage_py_refuses_to_run_and_starts_with_a_good_configuration():
    refused = _start(["manage.py", "check"], {"PLACEMENT_AUTH_STRATEGY": "bogus"})
    assert refused.returncode != 0
    assert "Unknown PLACEMENT_AUTH_STRATEGY 'bogus'" in refused.stderr
    started = _start(["manage.py", "check"], {"PLACEMENT_AUTH_STRATEGY": "token"})
    assert started.returncode == 0, started.stderr


KEYSTONE = {
    "PLACEMENT_AUTH_STRATEGY": "keystone",
    "PLACEMENT_KEYSTONE_AUTH_URL": "http://keystone.example.test/identity",
    "PLACEMENT_KEYSTONE_WWW_AUTHENTICATE_URI": "http://keystone.example.test/identity",
    "PLACEMENT_KEYSTONE_USERNAME": "placement",
    "PLACEMENT_KEYSTONE_PASSWORD": "secret",
    "PLACEMENT_KEYSTONE_PROJECT_NAME": "service",
}


def test_keystone_strategy_starts_when_configured():
    # Building keystonemiddleware's auth_token needs no Keystone server yet.
    result = _start(["-c", "import placementsite.wsgi as w; print(type(w.application))"], KEYSTONE)
    assert result.returncode == 0, result.stderr
    assert "AuthProtocol" in result.stdout


def test_keystone_strategy_without_a_service_user_is_refused():
    result = _start(["manage.py", "check"], {"PLACEMENT_AUTH_STRATEGY": "keystone"})
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert "keystone auth_token" in result.stderr


def test_keystone_option_typo_is_refused():
    result = _start(["manage.py", "check"], {**KEYSTONE, "PLACEMENT_KEYSTONE_PASWORD": "x"})
    assert result.returncode != 0
    assert "PLACEMENT_KEYSTONE_PASWORD: keystonemiddleware has no option 'pasword'" in (
        result.stderr
    )
