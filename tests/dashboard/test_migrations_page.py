"""The dashboard's Migrations page: moves in flight, what migration consumers hold per host,
and the cleanup and audit history, in a fixed number of queries."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client
from django.urls import reverse

from scheduling.models import LifecycleRecord, Migration
from scheduling.services.cleanup import migrations_cleanup
from tests.scheduling.move_helpers import boot_one, setup_hosts

URL = reverse("dashboard:migrations")


@pytest.fixture
def operator(db):
    user = get_user_model().objects.create_user("mover", is_staff=True)
    user.user_permissions.set(
        Permission.objects.filter(
            codename__in=["view_migration", "view_lifecyclerecord", "view_allocation"]
        )
    )
    client = Client()
    client.force_login(user)
    return client


def _moves(api, count):
    """``count`` servers each migrating; returns the migration uuids."""
    uuids = []
    for index in range(count):
        server = boot_one(api, name=f"vm{index}")
        response = api.post(f"/api/servers/{server['id']}/migrate/", {})
        assert response.status == 201, response
        uuids.append(response.json["migration"]["id"])
    return uuids


def test_moves_in_flight_and_what_they_hold(api, operator):
    setup_hosts(api)
    (uuid,) = _moves(api, 1)
    migration = Migration.objects.select_related("source").get()
    page = operator.get(URL)
    assert page.status_code == 200
    html = page.content.decode()
    assert uuid in html
    assert "1 move in flight" in html
    assert migration.source.name in html
    assert "<b>VCPU</b> 2" in html


def test_expired_moves_and_the_history(api, operator, settings):
    setup_hosts(api)
    (uuid,) = _moves(api, 1)
    Migration.objects.update(lease_started_at="2000-01-01T00:00:00Z")
    settings.PLACEMENT_MIGRATION_EXPIRED_ACTION = "revert"
    migrations_cleanup()
    html = operator.get(URL).content.decode()
    assert "0 moves in flight" in html
    assert "<td>lease expired, reverted</td>" in html
    assert "Migration consumers hold nothing." in html
    only = operator.get(URL + "?action=audit_run").content.decode()
    assert "<td>lease expired, reverted</td>" not in only
    assert operator.get(URL + "?action=bogus").status_code == 404
    assert LifecycleRecord.objects.filter(consumer_uuid=uuid).exists()


def test_expired_move_is_flagged(api, operator):
    setup_hosts(api)
    _moves(api, 1)
    Migration.objects.update(lease_started_at="2000-01-01T00:00:00Z")
    html = operator.get(URL).content.decode()
    assert "1 past its lease" in html
    assert 'class="chip warn">expired' in html


def test_queries_do_not_grow_with_moves(api, operator, django_assert_max_num_queries):
    setup_hosts(api, names=("cn1", "cn2", "cn3"))
    _moves(api, 1)
    # login (2), permissions (2), the layout (1), in flight, counts, expired, held, leftovers,
    # history
    with django_assert_max_num_queries(11):
        assert operator.get(URL).status_code == 200
    _moves(api, 5)
    migrations_cleanup()
    with django_assert_max_num_queries(11):
        assert operator.get(URL).status_code == 200


def test_staff_without_the_view_permissions_get_a_403(staff):
    assert staff.get(URL).status_code == 403
