"""The operator's pages carry a Content-Security-Policy; the filesystem broker's directory is
the service user's alone."""

import os
import stat
import subprocess
import sys

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from placementsite.core.private_files import make_private_dir

pytestmark = pytest.mark.django_db


@pytest.fixture
def operator():
    user = get_user_model().objects.create_superuser("ops", "", "Pass-word-ops")
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.parametrize(
    "path",
    ["/dashboard/", "/dashboard/providers/", "/dashboard/flavors/", "/admin/", "/admin/login/"],
)
def test_operator_pages_carry_a_content_security_policy(operator, path):
    response = operator.get(path)
    assert response.status_code in (200, 302), path
    policy = response["Content-Security-Policy"]
    assert "default-src 'self'" in policy
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy.split("style-src")[0]
    assert "frame-ancestors 'none'" in policy
    assert "object-src 'none'" in policy


def test_api_answers_carry_no_page_policy(api):
    assert "Content-Security-Policy" not in api.get("/resource_providers").headers


def test_private_dir_is_created_0700(tmp_path):
    path = tmp_path / "broker" / "out"
    make_private_dir(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o700


def test_private_dir_of_an_older_installation_is_narrowed(tmp_path):
    path = tmp_path / "broker"
    path.mkdir(mode=0o755)
    path.chmod(0o755)
    make_private_dir(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o700


def test_filesystem_broker_directories_are_0700(tmp_path):
    env = {
        **os.environ,
        "PLACEMENT_VAR_DIR": str(tmp_path),
        "CELERY_BROKER_URL": "filesystem://",
        "DJANGO_SETTINGS_MODULE": "placementsite.settings",
    }
    code = "import django; django.setup()"
    subprocess.run([sys.executable, "-c", code], env=env, check=True, timeout=60)
    broker = tmp_path / "celery-broker"
    for folder in (broker, broker / "out", broker / "processed", broker / "control"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
