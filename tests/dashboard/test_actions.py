"""Dashboard actions: POST with CSRF, calling the owning app's services, refused (403 page,
nothing done) without the permission the admin needs for the same change."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client

from providers.models import ComputeNode, ResourceProvider
from providers.services.compute_nodes import compute_node_report
from providers.services.host_sync import compute_nodes_sync
from scheduling.models import Migration
from tests.providers.hosts import report
from tests.scheduling.move_helpers import boot_one, resources_of, setup_hosts

pytestmark = pytest.mark.django_db

VIEW_MOVES = ["view_migration", "view_lifecyclerecord", "view_allocation"]
VIEW_HOSTS = ["view_computenode", "view_resourceprovider", "view_inventory", "view_allocation"]
VIEW_HOSTS += ["view_consumer"]


def _user(name, codenames):
    user = get_user_model().objects.create_user(name, is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


def _post(client, url, data=None, *, page=None):
    """A POST as the browser sends it: with the CSRF token of ``page`` (a GET first)."""
    client.get(page or "/dashboard/")
    token = client.cookies["csrftoken"].value
    return client.post(url, {**(data or {}), "csrfmiddlewaretoken": token})


@pytest.fixture
def moving(api):
    setup_hosts(api)
    server = boot_one(api, name="web-1")
    migration = api.post(f"/api/servers/{server['id']}/migrate/", {}).json["migration"]
    return server, migration


@pytest.fixture
def mover(db):
    return _user("mover", [*VIEW_MOVES, "change_migration"])


@pytest.fixture
def watcher(db):
    return _user("watcher", VIEW_MOVES)


@pytest.mark.parametrize("verb,status", [("confirm", "confirmed"), ("revert", "reverted")])
def test_a_move_is_confirmed_or_reverted_from_the_migrations_page(api, moving, mover, verb, status):
    server, migration = moving
    page = mover.get("/dashboard/migrations/").content.decode()
    assert f'action="/dashboard/migrations/{migration["id"]}/{verb}/"' in page
    r = _post(mover, f"/dashboard/migrations/{migration['id']}/{verb}/")
    assert r.status_code == 302 and r["Location"] == "/dashboard/migrations/"
    assert Migration.objects.get(uuid=migration["id"]).status == status
    assert resources_of(api, migration["id"]) == {}  # the service did the whole settle
    shown = mover.get("/dashboard/migrations/").content.decode()
    assert f"The migrate of web-1 is {status}." in shown and 'id="messages"' in shown


def test_a_move_is_finished_then_confirmed(api, moving, mover):
    _server, migration = moving
    _post(mover, f"/dashboard/migrations/{migration['id']}/finish/")
    assert Migration.objects.get(uuid=migration["id"]).status == "finished"
    _post(mover, f"/dashboard/migrations/{migration['id']}/confirm/")
    assert Migration.objects.get(uuid=migration["id"]).status == "confirmed"


def test_settling_twice_says_why_and_changes_nothing(api, moving, mover):
    _server, migration = moving
    _post(mover, f"/dashboard/migrations/{migration['id']}/confirm/")
    r = _post(mover, f"/dashboard/migrations/{migration['id']}/revert/")
    assert r.status_code == 302
    page = mover.get("/dashboard/migrations/").content.decode()
    assert "Could not revert the migrate of web-1" in page
    assert Migration.objects.get(uuid=migration["id"]).status == "confirmed"


def _buttons(client, migration_id):
    """The steps the Migrations page offers for one move, in order."""
    page = client.get("/dashboard/migrations/").content.decode()
    return [
        verb
        for verb in ("finish", "confirm", "revert")
        if f'action="/dashboard/migrations/{migration_id}/{verb}/"' in page
    ]


def test_the_page_offers_only_the_steps_valid_for_the_kind_and_status(api, mover):
    setup_hosts(api)
    cold = boot_one(api, name="cold")
    live = boot_one(api, name="live")
    moved = api.post(f"/api/servers/{cold['id']}/migrate/", {}).json["migration"]["id"]
    lived = api.post(f"/api/servers/{live['id']}/live-migrate/", {}).json["migration"]["id"]
    assert _buttons(mover, moved) == ["finish", "confirm", "revert"]
    # A live migration is finished (it completes) or reverted, never confirmed: as the API.
    assert _buttons(mover, lived) == ["finish", "revert"]
    _post(mover, f"/dashboard/migrations/{moved}/finish/")
    assert _buttons(mover, moved) == ["confirm", "revert"]
    _post(mover, f"/dashboard/migrations/{lived}/finish/")
    assert Migration.objects.get(uuid=lived).status == "completed"
    assert _buttons(mover, lived) == []  # no longer in flight


def test_confirming_a_live_migration_is_refused_as_by_the_api(api, mover):
    setup_hosts(api)
    live = boot_one(api, name="live")
    lived = api.post(f"/api/servers/{live['id']}/live-migrate/", {}).json["migration"]["id"]
    r = _post(mover, f"/dashboard/migrations/{lived}/confirm/")
    assert r.status_code == 302
    page = mover.get("/dashboard/migrations/").content.decode()
    assert "Could not confirm the live-migrate of live" in page
    assert Migration.objects.get(uuid=lived).status == "migrating"
    assert resources_of(api, lived)  # the source is still held


def test_settling_needs_the_change_permission(api, moving, watcher):
    server, migration = moving
    page = watcher.get("/dashboard/migrations/").content.decode()
    assert "/confirm/" not in page  # no buttons
    r = _post(watcher, f"/dashboard/migrations/{migration['id']}/confirm/")
    assert r.status_code == 403
    assert "You may not settle migrations" in r.content.decode()
    assert Migration.objects.get(uuid=migration["id"]).status == "migrating"
    assert resources_of(api, migration["id"])  # still held


def test_actions_need_the_csrf_token_and_a_post(api, moving, mover):
    _server, migration = moving
    url = f"/dashboard/migrations/{migration['id']}/confirm/"
    assert mover.post(url).status_code == 403  # no token
    assert mover.get(url).status_code == 405
    assert Migration.objects.get(uuid=migration["id"]).status == "migrating"


def test_an_unknown_migration_is_a_404(mover):
    r = _post(mover, "/dashboard/migrations/00000000-0000-4000-8000-000000000000/confirm/")
    assert r.status_code == 404


def test_the_next_address_must_be_this_site(api, moving, mover):
    _server, migration = moving
    r = _post(
        mover,
        f"/dashboard/migrations/{migration['id']}/finish/",
        {"next": "https://evil.example/"},
    )
    assert r["Location"] == "/dashboard/migrations/"


# --- hosts -----------------------------------------------------------------------------------


@pytest.fixture
def host(settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = ["vcpu", "memory", "disk"]
    compute_node_report(hostname="cn-7", report=report())
    compute_nodes_sync()
    return ComputeNode.objects.get(hostname="cn-7")


@pytest.fixture
def host_admin(db):
    return _user("host-admin", [*VIEW_HOSTS, "change_computenode"])


def _page(node):
    return f"/dashboard/providers/{ResourceProvider.objects.get(pk=node.provider_id).uuid}/"


def test_a_host_is_disabled_with_a_reason_and_enabled_again(host, host_admin):
    page = _page(host)
    html = host_admin.get(page).content.decode()
    assert 'id="host-disable"' in html
    r = _post(host_admin, "/dashboard/hosts/cn-7/disable/", {"reason": "DIMM swap", "next": page})
    assert r.status_code == 302 and r["Location"] == page
    host.refresh_from_db()
    assert (host.enabled, host.disabled_reason) == (False, "DIMM swap")
    html = host_admin.get(page).content.decode()
    assert "cn-7 is disabled: DIMM swap" in html and 'id="host-enable"' in html
    _post(host_admin, "/dashboard/hosts/cn-7/enable/", {"next": page})
    host.refresh_from_db()
    assert (host.enabled, host.disabled_reason) == (True, "")


def test_disabling_without_a_reason_is_refused(host, host_admin):
    _post(host_admin, "/dashboard/hosts/cn-7/disable/", {"reason": "  "})
    host.refresh_from_db()
    assert host.enabled
    assert "Say why cn-7 is disabled" in host_admin.get("/dashboard/hosts/").content.decode()


def test_an_unknown_host_says_so(host_admin, db):
    _post(host_admin, "/dashboard/hosts/nowhere/enable/")
    assert "No compute host nowhere" in host_admin.get("/dashboard/hosts/").content.decode()


def test_a_host_is_resynced(host, host_admin):
    ComputeNode.objects.filter(pk=host.pk).update(synced_at=None)
    r = _post(host_admin, "/dashboard/hosts/cn-7/resync/", {"next": _page(host)})
    assert r.status_code == 302
    host.refresh_from_db()
    assert host.synced_at is not None
    assert "cn-7 resynced: ok" in host_admin.get(_page(host)).content.decode()


def test_host_actions_need_the_change_permission(host, db):
    viewer = _user("viewer", VIEW_HOSTS)
    assert 'id="host-disable"' not in viewer.get(_page(host)).content.decode()
    for verb in ("disable", "enable", "resync"):
        r = _post(viewer, f"/dashboard/hosts/cn-7/{verb}/", {"reason": "x"})
        assert r.status_code == 403, verb
        assert "You may not change hosts" in r.content.decode()
    host.refresh_from_db()
    assert host.enabled and host.disabled_reason == ""
