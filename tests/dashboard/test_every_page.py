"""Every dashboard address renders through the one rendering path: the navigation, search
and logout are on each page, and no answer is kept by a cache."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import URLPattern, reverse

from placementsite.dashboard import urls as dashboard_urls

from .conftest import AGG_A

pytestmark = pytest.mark.django_db

# Actions answer POST only (a GET is a 405 and changes nothing).
POST_ONLY = set(getattr(dashboard_urls, "ACTIONS", ()))
# Data the pages' scripts read (JSON, no navigation): checked on their own below.
DATA = {"flavor_fits", "schedule_funnel", "try_candidates"}


def _examples(cloud):
    """An existing object for each kind of id a dashboard address takes, by URL name."""
    return {
        "provider": {"uuid": cloud["cn1"].uuid},
        "consumer": {"uuid": cloud["vm1"].uuid},
        "aggregate": {"uuid": AGG_A},
    }


def _pages(cloud):
    examples = _examples(cloud)
    for pattern in dashboard_urls.urlpatterns:
        assert isinstance(pattern, URLPattern)
        if pattern.name in POST_ONLY or pattern.name in DATA:
            continue
        kwargs = {}
        if pattern.pattern.converters:
            assert pattern.name in examples, f"give {pattern.name} an example in this test"
            kwargs = examples[pattern.name]
        yield pattern.name, reverse(f"dashboard:{pattern.name}", kwargs=kwargs)


@pytest.fixture
def root(db):
    user = get_user_model().objects.create_superuser("root", password="root-password-1")
    client = Client()
    client.force_login(user)
    return client


def test_every_dashboard_page_has_the_navigation_and_is_not_cached(root, cloud):
    seen = []
    for name, url in _pages(cloud):
        r = root.get(url)
        assert r.status_code == 200, (name, r.status_code)
        body = r.content.decode()
        assert 'aria-label="Dashboard"' in body, name  # the navigation
        assert 'role="search"' in body, name
        assert "Log out" in body, name
        assert 'id="last-updated"' in body, name  # the footer of the shared context
        assert "no-store" in r["Cache-Control"], name
        seen.append(name)
    assert {"hosts", "overview", "migrations", "flavors", "schedule"} <= set(seen)


def test_the_hosts_page_marks_its_navigation_entry(root, cloud):
    body = root.get("/dashboard/hosts/").content.decode()
    assert 'href="/dashboard/hosts/" class="active" aria-current="page"' in body


def test_login_redirects_and_error_pages_are_not_cached(cloud, non_staff):
    assert "no-store" in Client().get("/dashboard/")["Cache-Control"]
    assert "no-store" in non_staff.get("/dashboard/")["Cache-Control"]


GET_FORM = re.compile(r'<form method="get".*?</form>', re.S)


def test_no_read_only_form_carries_a_csrf_token(root, cloud):
    """A GET form's fields land in the URL (access logs, history): never the CSRF token."""
    for name, url in _pages(cloud):
        body = root.get(url).content.decode()
        for form in GET_FORM.findall(body):
            assert "csrfmiddlewaretoken" not in form, name


def test_the_pages_data_is_not_cached_either(root, cloud):
    from scheduling.models import Flavor

    flavor = Flavor.objects.create(name="f", vcpus=1, ram=512, disk=0)
    r = root.get(reverse("dashboard:flavor_fits", kwargs={"pk": flavor.pk}))
    assert r.status_code == 200 and "no-store" in r["Cache-Control"]
    assert r.json() == {"flavor": "f", "fits": 5, "complete": True}
    r = root.get(reverse("dashboard:try_candidates"), {"submit": "1", "resources": "VCPU:1"})
    assert r.status_code == 200 and "no-store" in r["Cache-Control"]
    assert b'id="candidates"' in r.content
