"""The dashboard asks for the view permissions of what it shows, not only ``is_staff``."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.test import Client

from tests.dashboard.conftest import AGG_A
from tests.dashboard.test_access import PAGES

pytestmark = pytest.mark.django_db


def _client(**fields):
    user = get_user_model().objects.create_user("staffer", password="x-pass-1", **fields)
    client = Client()
    client.force_login(user)
    return user, client


def _url(page, cloud):
    return page.format(cn1=cloud["cn1"].uuid, vm1=cloud["vm1"].uuid, agg=AGG_A)


@pytest.mark.parametrize("page", PAGES)
def test_staff_user_without_permissions_sees_nothing(cloud, page):
    _user, client = _client(is_staff=True)
    response = client.get(_url(page, cloud))
    assert response.status_code == 403
    assert str(cloud["cn1"].uuid).encode() not in response.content


def test_permission_to_view_traits_opens_the_traits_page_only(cloud):
    user, client = _client(is_staff=True)
    user.user_permissions.add(Permission.objects.get(codename="view_trait"))
    assert client.get("/dashboard/traits/").status_code == 200
    assert client.get("/dashboard/providers/").status_code == 403
    assert client.get("/dashboard/consumers/").status_code == 403


def test_provider_pages_need_provider_inventory_and_allocation_view_permissions(cloud):
    user, client = _client(is_staff=True)
    for codename in ("view_resourceprovider", "view_inventory"):
        user.user_permissions.add(Permission.objects.get(codename=codename))
    assert client.get("/dashboard/providers/").status_code == 403  # allocations still hidden
    user.user_permissions.add(Permission.objects.get(codename="view_allocation"))
    assert client.get("/dashboard/providers/").status_code == 200


def test_superuser_needs_no_explicit_permission(cloud):
    _user, client = _client(is_staff=True, is_superuser=True)
    for page in PAGES:
        assert client.get(_url(page, cloud)).status_code == 200
