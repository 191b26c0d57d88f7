"""No dead ends: admin <-> dashboard links, error pages with navigation, favicon, search."""

import uuid

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

pytestmark = pytest.mark.django_db


@pytest.fixture
def superuser_client(db):
    user = get_user_model().objects.create_superuser("root", password="root-password-1")
    client = Client()
    client.force_login(user)
    return client


def test_admin_index_links_to_the_dashboard(superuser_client):
    body = superuser_client.get("/admin/").content.decode()
    assert 'id="open-dashboard" href="/dashboard/"' in body
    # "View site" leads to the dashboard too, not to the API's version document at /.
    assert '<a href="/dashboard/">View site</a>' in body


def test_admin_uses_proper_plural_names(superuser_client):
    body = superuser_client.get("/admin/").content.decode()
    assert "Inventorys" not in body and "Resource classs" not in body
    assert "Inventories" in body and "Resource classes" in body


def test_dashboard_links_to_the_admin(staff):
    body = staff.get("/dashboard/").content.decode()
    assert 'href="/admin/" id="admin-link"' in body


def test_unknown_provider_is_a_404_with_the_dashboard_navigation(staff):
    r = staff.get(f"/dashboard/providers/{uuid.uuid4()}/")
    assert r.status_code == 404
    body = r.content.decode()
    assert 'aria-label="Dashboard"' in body  # the navigation
    assert 'href="/dashboard/providers/"' in body
    assert "No such resource provider." in body


def test_unknown_dashboard_address_is_a_404_with_the_navigation(staff):
    r = staff.get("/dashboard/no-such-page/")
    assert r.status_code == 404
    assert 'aria-label="Dashboard"' in r.content.decode()


def test_forbidden_page_offers_to_log_in_as_someone_else_without_navigation(non_staff):
    r = non_staff.get("/dashboard/")
    assert r.status_code == 403
    body = r.content.decode()
    assert "The dashboard is for staff users." in body
    assert "Log in as another user" in body
    assert 'aria-label="Dashboard"' not in body


def test_placement_api_errors_stay_json(staff):
    r = Client().get("/no_such_thing", HTTP_X_AUTH_TOKEN="admin")
    assert r["Content-Type"].startswith("application/json")
    assert r.status_code in (401, 404)


def test_favicon_is_served_without_a_token():
    r = Client().get("/favicon.ico")
    assert r.status_code == 200
    assert r["Content-Type"] == "image/x-icon"
    body = b"".join(r.streaming_content)
    assert body[:4] == b"\x00\x00\x01\x00"  # an ICO header


def test_search_lists_providers_consumers_and_projects(staff, cloud):
    r = staff.get("/dashboard/search/", {"q": "p"})
    body = r.content.decode()
    assert r.status_code == 200
    assert 'id="search-projects"' in body
    assert ">p1<" in body and ">p2<" in body


def test_search_with_a_single_match_goes_to_it(staff, cloud):
    r = staff.get("/dashboard/search/", {"q": "cn2"})
    assert r.status_code == 302
    assert r["Location"] == f"/dashboard/providers/{cloud['cn2'].uuid}/"
    r = staff.get("/dashboard/search/", {"q": str(cloud["vm3"].uuid)[:13]})
    assert r["Location"] == f"/dashboard/consumers/{cloud['vm3'].uuid}/"


def test_search_finds_providers_by_name_with_several_matches(staff, cloud):
    body = staff.get("/dashboard/search/", {"q": "cn1"}).content.decode()
    assert ">cn1<" in body and ">cn1-numa0<" in body
    assert "in cn1" in body  # the child says which host it is in


def test_auto_refresh_is_kept_in_the_url_and_bounded(staff, cloud):
    body = staff.get("/dashboard/providers/").content.decode()
    assert 'http-equiv="refresh"' not in body
    assert "Last updated" in body
    body = staff.get("/dashboard/providers/", {"refresh": "60"}).content.decode()
    assert '<meta http-equiv="refresh" content="60">' in body
    body = staff.get("/dashboard/providers/", {"refresh": "1"}).content.decode()
    assert 'http-equiv="refresh"' not in body


def test_admin_trait_filter_is_a_search_box(superuser_client, cloud):
    r = superuser_client.get("/admin/providers/resourceprovider/", {"trait": "hw_cpu_x86_avx2"})
    body = r.content.decode()
    assert r.status_code == 200
    assert 'name="trait" value="hw_cpu_x86_avx2"' in body
    assert "CUSTOM_MAINT" not in body  # no list of every trait
    assert ">cn1<" in body and ">cn2<" not in body


def test_admin_parent_field_is_an_autocomplete(superuser_client, cloud):
    body = superuser_client.get(
        f"/admin/providers/resourceprovider/{cloud['numa'].pk}/change/"
    ).content.decode()
    assert "admin-autocomplete" in body
    r = superuser_client.get(
        "/admin/autocomplete/",
        {
            "term": "cn",
            "app_label": "providers",
            "model_name": "resourceprovider",
            "field_name": "parent",
        },
    )
    assert r.status_code == 200
    names = {item["text"] for item in r.json()["results"]}
    assert {"cn1", "cn2"} <= names
