"""API tokens are stored hashed, expire, rotate, and the admin shows only their first characters."""

import os
import re
import stat
import subprocess
import sys
from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.apps import apps
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.utils import timezone
from knox.models import AuthToken

from placementsite.core.api.tokens import token_create
from tests.conftest import PlacementClient

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def token_strategy(settings):
    settings.PLACEMENT_AUTH_STRATEGY = "token"


def admin_user(name="root"):
    return get_user_model().objects.create_superuser(name, "", "Pass-word-" + name)


def status_with(token):
    return PlacementClient(token=token, version="1.39").get("/resource_providers").status


def test_token_is_stored_as_a_digest_only():
    row, token = token_create(user=admin_user())
    assert status_with(token) == 200
    stored = AuthToken.objects.values_list("digest", "token_key").get()
    assert token not in stored
    assert row.digest != token and len(row.digest) == 128  # SHA-512, hex
    assert token.startswith(row.token_key) and len(row.token_key) < len(token) // 2


def test_unknown_empty_and_near_miss_tokens_are_refused():
    _row, token = token_create(user=admin_user())
    near_miss = token[:-1] + ("0" if token[-1] != "0" else "1")
    for wrong in ("", "nonsense", near_miss, token.upper() if token.upper() != token else "x"):
        assert status_with(wrong) == 401


def test_token_expires_after_the_configured_days(settings):
    settings.PLACEMENT_TOKEN_TTL_DAYS = 7
    row, token = token_create(user=admin_user())
    assert row.expiry - timezone.now() > timedelta(days=6, hours=23)
    assert row.expiry - timezone.now() <= timedelta(days=7)


def test_expired_token_is_refused_and_forgotten():
    row, token = token_create(user=admin_user())
    AuthToken.objects.filter(pk=row.pk).update(expiry=timezone.now() - timedelta(seconds=1))
    assert status_with(token) == 401
    assert not AuthToken.objects.filter(pk=row.pk).exists()


def test_token_of_an_inactive_user_is_refused():
    user = admin_user()
    _row, token = token_create(user=user)
    user.is_active = False
    user.save()
    assert status_with(token) == 401


def test_rotation_keeps_only_the_new_token():
    user = admin_user()
    _row, old = token_create(user=user)
    _row, kept = token_create(user=user)
    assert status_with(old) == status_with(kept) == 200
    _row, new = token_create(user=user, rotate=True)
    assert status_with(old) == status_with(kept) == 401
    assert status_with(new) == 200


def test_create_api_token_command_prints_a_working_token(capsys):
    admin_user("ops")
    call_command("create_api_token", "ops", "--days", "3")
    token = capsys.readouterr().out.strip()
    assert status_with(token) == 200
    assert AuthToken.objects.get().expiry - timezone.now() <= timedelta(days=3)


def test_admin_token_list_shows_only_a_prefix():
    owner = admin_user("owner")
    row, token = token_create(user=owner)
    # A staff user allowed to view tokens, and nothing more.
    viewer = get_user_model().objects.create_user("viewer", "", "Pass-word-v", is_staff=True)
    viewer.user_permissions.add(
        *apps.get_model("auth", "Permission").objects.filter(codename="view_authtoken")
    )
    client = Client()
    client.force_login(viewer)
    listing = client.get("/admin/knox/authtoken/")
    assert listing.status_code == 200
    page = listing.content.decode()
    assert token[:8] in page
    assert token not in page and token[:20] not in page
    # The digest names the row in the admin's URLs: it is worthless as a token.
    assert status_with(row.digest) == 401


def test_admin_creates_a_token_and_shows_it_once():
    owner = admin_user("owner")
    client = Client()
    client.force_login(owner)
    response = client.post("/admin/knox/authtoken/add/", {"user": owner.pk, "days": 2}, follow=True)
    assert response.status_code == 200
    (token,) = re.findall(r"API token for owner: ([0-9a-f]{64})", response.content.decode())
    assert status_with(token) == 200
    assert client.get("/admin/knox/authtoken/").content.decode().count(token) == 0


def test_plain_drf_tokens_of_an_older_installation_are_hashed_and_keep_working():
    from importlib import import_module

    migration = import_module("placementsite.migrations.0002_hash_drf_tokens")
    user = admin_user()
    key = "0123456789abcdef0123456789abcdef01234567"  # a DRF token: 40 hex characters
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TABLE authtoken_token (key varchar(40) PRIMARY KEY, user_id bigint NOT NULL)"
        )
        cursor.execute("INSERT INTO authtoken_token VALUES (%s, %s)", [key, user.pk])
    editor = SimpleNamespace(connection=connection, quote_name=connection.ops.quote_name)
    migration.hash_drf_tokens(apps, editor)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM authtoken_token")
        assert cursor.fetchone() == (0,)  # no plain-text copy left
    assert status_with(key) == 200
    assert AuthToken.objects.get().expiry is not None


def _run(argv, env):
    return subprocess.run(
        [sys.executable, *argv],
        cwd=django_settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_first_start_writes_credentials_to_a_private_file_and_not_to_the_output(tmp_path):
    database = tmp_path / "placement.sqlite3"
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{database}",
        "PLACEMENT_VAR_DIR": str(tmp_path / "var"),
    }
    env.pop("DJANGO_SECRET_KEY", None)
    migrated = _run(["manage.py", "migrate", "--noinput", "-v", "0"], env)
    assert migrated.returncode == 0, migrated.stderr
    assert stat.S_IMODE(database.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "var" / "secret_key").stat().st_mode) == 0o600

    started = _run(["scripts/bootstrap_admin.py"], env)
    assert started.returncode == 0, started.stderr
    credentials = tmp_path / "var" / "initial-admin-credentials.txt"
    assert str(credentials) in started.stdout
    assert stat.S_IMODE(credentials.stat().st_mode) == 0o600
    text = credentials.read_text()
    password = re.search(r"^password:\s+(\S+)$", text, flags=re.M).group(1)
    token = re.search(r"^API token:\s+(\S+)", text, flags=re.M).group(1)
    output = started.stdout + started.stderr
    assert password not in output and token not in output

    check = (
        "from placementsite.core.api.tokens import token_identity; "
        f"print(token_identity({token!r})[0])"
    )
    found = _run(["manage.py", "shell", "-c", check], env)
    assert found.stdout.strip().splitlines()[-1] == "admin", found.stderr


def staff_who_may_add_tokens(name="minter"):
    staff = get_user_model().objects.create_user(name, "", "Pass-word-m", is_staff=True)
    staff.user_permissions.add(
        *apps.get_model("auth", "Permission").objects.filter(
            codename__in=["add_authtoken", "view_authtoken"]
        )
    )
    client = Client()
    client.force_login(staff)
    return staff, client


def test_staff_cannot_mint_a_token_for_the_superuser():
    root = admin_user("root")
    _staff, client = staff_who_may_add_tokens()
    response = client.post("/admin/knox/authtoken/add/", {"user": root.pk, "days": 2})
    assert response.status_code == 200  # the form again, with the error
    assert "Select a valid choice" in response.content.decode()
    assert not AuthToken.objects.filter(user=root).exists()


def test_staff_cannot_mint_a_token_for_another_staff_user():
    other = get_user_model().objects.create_user("other", "", "Pass-word-o", is_staff=True)
    _staff, client = staff_who_may_add_tokens()
    client.post("/admin/knox/authtoken/add/", {"user": other.pk, "days": 2})
    assert not AuthToken.objects.exists()


def test_staff_mints_their_own_token():
    staff, client = staff_who_may_add_tokens()
    response = client.post("/admin/knox/authtoken/add/", {"user": staff.pk, "days": 2}, follow=True)
    assert response.status_code == 200
    (token,) = re.findall(r"API token for minter: ([0-9a-f]{64})", response.content.decode())
    assert AuthToken.objects.get().user == staff
    assert token


def test_superuser_mints_a_token_for_another_user():
    root = admin_user("root")
    other = get_user_model().objects.create_user("other", "", "Pass-word-o")
    client = Client()
    client.force_login(root)
    response = client.post("/admin/knox/authtoken/add/", {"user": other.pk, "days": 2}, follow=True)
    assert response.status_code == 200
    assert AuthToken.objects.get().user == other
