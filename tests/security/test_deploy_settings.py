"""Settings for a real deployment: environment-driven, clean under ``check --deploy``."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.test import Client

README = Path(django_settings.BASE_DIR) / "README.md"


def documented_production_environment():
    """The variables of README's production example (the block that sets the HTTPS ones)."""
    blocks = re.findall(r"```sh\n(.*?)```", README.read_text(), flags=re.S)
    (block,) = [b for b in blocks if "DJANGO_SECURE_SSL_REDIRECT" in b]
    found = dict(re.findall(r"^export (\w+)=(\S+)$", block, flags=re.M))
    # The example generates the key with a command; any long random key stands for it.
    found["DJANGO_SECRET_KEY"] = "k" * 10 + os.urandom(32).hex()
    return found


def manage(*argv, env, unset=()):
    environment = {**os.environ, **env}
    for name in unset:
        environment.pop(name, None)
    return subprocess.run(
        [sys.executable, "manage.py", *argv],
        cwd=django_settings.BASE_DIR,
        env=environment,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_check_deploy_is_clean_with_the_documented_production_variables():
    env = documented_production_environment()
    assert {"DJANGO_ALLOWED_HOSTS", "DJANGO_SECURE_HSTS_SECONDS", "DJANGO_SECURE_COOKIES"} <= set(
        env
    )
    result = manage("check", "--deploy", "--fail-level", "WARNING", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_warns_without_them():
    # The same command without the variables: the test above passes because of them.
    unset = list(documented_production_environment())
    result = manage("check", "--deploy", "--fail-level", "WARNING", env={}, unset=unset)
    assert result.returncode != 0
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert warning in result.stderr


def test_default_allowed_hosts_are_the_loopback_names_only():
    # pytest-django adds "testserver" for the test client; nothing matches every host.
    assert "*" not in django_settings.ALLOWED_HOSTS
    assert {"127.0.0.1", "localhost"} <= set(django_settings.ALLOWED_HOSTS)


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/", "/resource_providers", "/admin/login/"])
def test_request_for_another_host_is_refused(path):
    response = Client().get(path, HTTP_HOST="evil.example", HTTP_X_AUTH_TOKEN="admin")
    assert response.status_code == 400


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/resource_providers", "/api/capacity/"])
def test_refused_host_is_named_in_the_api_error(path):
    # An operator who forgot DJANGO_ALLOWED_HOSTS learns it from the client's error.
    response = Client().get(path, HTTP_HOST="evil.example", HTTP_X_AUTH_TOKEN="admin")
    assert response.status_code == 400
    (error,) = response.json()["errors"]
    assert "'evil.example'" in error["detail"]
    assert "DJANGO_ALLOWED_HOSTS" in error["detail"]


@pytest.mark.django_db
def test_refused_host_is_named_on_the_html_error_page():
    response = Client().get("/dashboard/", HTTP_HOST="evil.example")
    assert response.status_code == 400
    assert b"DJANGO_ALLOWED_HOSTS" in response.content


@pytest.mark.django_db
def test_request_for_the_loopback_address_is_served():
    assert Client().get("/", HTTP_HOST="127.0.0.1:8000").status_code == 200


@pytest.mark.parametrize(
    "password",
    ["short1", "12345678901234", "password123", "operator-example"],
    ids=["too-short", "numeric", "common", "like-the-username"],
)
def test_weak_passwords_are_refused(password):
    user = get_user_model()(username="operator", email="operator@example.com")
    with pytest.raises(ValidationError):
        validate_password(password, user)


def test_a_strong_password_is_accepted():
    user = get_user_model()(username="operator")
    validate_password("vivid-Tangerine-orbit-42", user)


@pytest.mark.django_db
def test_admin_login_is_locked_after_repeated_failures(settings):
    get_user_model().objects.create_superuser("root", password="right-Password-77")
    client = Client()

    def login(password):
        return client.post("/admin/login/?next=/admin/", {"username": "root", "password": password})

    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert login("wrong").status_code == 200  # the form again, with an error
    assert login("wrong").status_code == 429  # the last failure allowed locks out
    locked = login("right-Password-77")
    assert locked.status_code == 429
    assert "_auth_user_id" not in client.session


@pytest.mark.django_db
def test_a_successful_login_before_the_limit_resets_the_count(settings):
    get_user_model().objects.create_superuser("root", password="right-Password-77")
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        client.post("/admin/login/", {"username": "root", "password": "wrong"})
    response = client.post(
        "/admin/login/?next=/admin/", {"username": "root", "password": "right-Password-77"}
    )
    assert response.status_code == 302
    assert client.session["_auth_user_id"]
