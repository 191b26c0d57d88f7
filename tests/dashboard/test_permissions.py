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


def _with(user, *codenames):
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    return user


USAGE_PERMISSIONS = ("view_resourceprovider", "view_inventory", "view_allocation")


def test_overview_hides_project_shares_without_the_project_view_permission(cloud):
    user, client = _client(is_staff=True)
    _with(user, *USAGE_PERMISSIONS)
    page = client.get("/dashboard/").content.decode()
    assert 'id="project-shares"' not in page
    for project in ("p1", "p2"):
        assert f"?project={project}" not in page
    _with(user, "view_project")
    assert 'id="project-shares"' in client.get("/dashboard/").content.decode()


def test_flavor_page_hides_free_capacity_without_the_usage_permissions(cloud, flavor):
    user, client = _client(is_staff=True)
    _with(user, "view_flavor")
    page = client.get("/dashboard/flavors/").content.decode()
    assert flavor.name in page
    assert ">Fits<" not in page
    _with(user, *USAGE_PERMISSIONS)
    assert ">Fits<" in client.get("/dashboard/flavors/").content.decode()


def test_schedule_needs_the_usage_permissions(cloud, flavor):
    user, client = _client(is_staff=True)
    _with(user, "view_flavor", "view_server", "view_resourceprovider")
    assert client.get(f"/dashboard/schedule/?flavor={flavor.name}").status_code == 403
    _with(user, "view_inventory", "view_allocation")
    assert client.get(f"/dashboard/schedule/?flavor={flavor.name}").status_code == 200


@pytest.fixture
def flavor(db):
    from scheduling.models import Flavor

    return Flavor.objects.create(name="perm.small", vcpus=1, ram=512, disk=1)
