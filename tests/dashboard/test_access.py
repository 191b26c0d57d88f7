"""Every dashboard page needs a logged-in staff user."""

import pytest
from django.test import Client

from tests.dashboard.conftest import AGG_A

pytestmark = pytest.mark.django_db

PAGES = [
    "/dashboard/",
    "/dashboard/providers/",
    "/dashboard/providers/{cn1}/",
    "/dashboard/consumers/",
    "/dashboard/consumers/{vm1}/",
    "/dashboard/projects/",
    "/dashboard/traits/",
    "/dashboard/resource-classes/",
    "/dashboard/aggregates/",
    "/dashboard/aggregates/{agg}/",
    "/dashboard/try/",
]


def _url(template, cloud):
    return template.format(cn1=cloud["cn1"].uuid, vm1=cloud["vm1"].uuid, agg=AGG_A)


@pytest.mark.parametrize("page", PAGES)
def test_anonymous_visitor_is_sent_to_the_admin_login(cloud, page):
    url = _url(page, cloud)
    r = Client().get(url)
    assert r.status_code == 302
    assert r["Location"].startswith("/admin/login/?next=")
    assert "/dashboard/" in r["Location"]


@pytest.mark.parametrize("page", PAGES)
def test_logged_in_user_who_is_not_staff_is_forbidden(cloud, non_staff, page):
    assert non_staff.get(_url(page, cloud)).status_code == 403


@pytest.mark.parametrize("page", PAGES)
def test_staff_user_sees_the_page(cloud, staff, page):
    r = staff.get(_url(page, cloud))
    assert r.status_code == 200
    assert r["Content-Type"].startswith("text/html")
    assert b"dashboard/dashboard.css" in r.content


def test_inactive_staff_user_cannot_log_in_to_the_dashboard(cloud, staff_user):
    staff_user.is_active = False
    staff_user.save()
    client = Client()
    client.force_login(staff_user)
    r = client.get("/dashboard/")
    assert r.status_code in (302, 403)


def test_staff_user_logs_in_through_the_admin_login_form(cloud, staff_user):
    client = Client()
    r = client.post(
        "/admin/login/?next=/dashboard/",
        {"username": "operator", "password": "operator-password-1", "next": "/dashboard/"},
    )
    assert r.status_code == 302
    assert r["Location"] == "/dashboard/"
    assert client.get("/dashboard/").status_code == 200


def test_dashboard_pages_are_not_answered_by_the_placement_api_plumbing(cloud, staff):
    r = staff.get("/dashboard/")
    assert "openstack-api-version" not in {k.lower() for k in r.headers}


@pytest.mark.parametrize(
    "url",
    [
        "/dashboard/providers/00000000-0000-4000-8000-000000000000/",
        "/dashboard/consumers/00000000-0000-4000-8000-000000000000/",
        "/dashboard/aggregates/00000000-0000-4000-8000-000000000000/",
        "/dashboard/providers/not-a-uuid/",
    ],
)
def test_unknown_object_is_404(staff, url):
    assert staff.get(url).status_code == 404


# What the pages' scripts load after them: the same doors as their page.
FRAGMENTS = ["/dashboard/try/candidates/?submit=1&resources=VCPU:1"]


@pytest.mark.parametrize("fragment", FRAGMENTS)
def test_fragments_are_for_staff_with_the_permissions_only(cloud, non_staff, fragment):
    from django.contrib.auth import get_user_model

    r = Client().get(fragment)
    assert r.status_code == 302 and r["Location"].startswith("/admin/login/?next=")
    assert non_staff.get(fragment).status_code == 403
    bare = get_user_model().objects.create_user("bare", password="bare-pass-1", is_staff=True)
    client = Client()
    client.force_login(bare)
    r = client.get(fragment)
    assert r.status_code == 403 and b"cn1" not in r.content
