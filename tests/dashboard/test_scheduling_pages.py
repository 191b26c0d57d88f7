"""The scheduler's dashboard pages: flavors, Schedule (explain and create) and "fits N more"
on the overview."""

import re

import pytest
from django.contrib.auth.models import Permission

from scheduling.models import Flavor, Server
from tests.factories import make_provider

pytestmark = pytest.mark.django_db


@pytest.fixture
def cloud(db):
    for name in ("cn1", "cn2"):
        make_provider(name, inventories={"VCPU": 8, "MEMORY_MB": 16384, "DISK_GB": 100})
    return Flavor.objects.create(name="bar.small", vcpus=2, ram=2048, disk=10)


@pytest.fixture
def scheduler_operator(staff_user):
    staff_user.user_permissions.add(
        *Permission.objects.filter(
            content_type__app_label="scheduling", codename__in=["view_flavor", "view_server"]
        )
    )
    return staff_user


def _client(client, user):
    client.force_login(user)
    return client


def _schedule(c, query):
    """The Schedule page for ``query`` followed by the funnel its script loads after it, as
    the text of both."""
    text = c.get("/dashboard/schedule/", query).content.decode()
    found = re.search(r'data-funnel-url="([^"]+)"', text)
    if found:
        funnel = c.get(found.group(1).replace("&amp;", "&"))
        assert funnel.status_code == 200, funnel
        assert "no-store" in funnel["Cache-Control"]
        text += funnel.content.decode()
    return text


def _fits_urls(page):
    return re.findall(r'data-fits-url="([^"]+)"', page)


def test_overview_counts_how_many_more_fit_per_flavor_after_the_page(
    client, scheduler_operator, cloud
):
    c = _client(client, scheduler_operator)
    page = c.get("/dashboard/").content.decode()
    assert 'id="flavor-fits"' in page and 'id="fits-progress"' in page
    assert "dashboard/fits.js" in page
    (url,) = _fits_urls(page)
    # 2 hosts of 8 VCPU, 16 GiB, 100 GB: 4 + 4 of bar.small (2 VCPU, 2 GiB, 10 GB).
    assert c.get(url).json() == {"flavor": "bar.small", "fits": 8, "complete": True}


def test_every_flavor_gets_its_count_even_the_largest(client, scheduler_operator, cloud):
    for index in range(12):
        Flavor.objects.create(name=f"size-{index:02d}", vcpus=1 + index // 2, ram=1024, disk=1)
    Flavor.objects.create(name="huge", vcpus=8, ram=16384, disk=100)
    c = _client(client, scheduler_operator)
    for path in ("/dashboard/", "/dashboard/flavors/"):
        urls = _fits_urls(c.get(path).content.decode())
        assert len(urls) == 14, path  # every enabled flavor, not the 8 smallest
    fits = {body["flavor"]: body["fits"] for body in (c.get(u).json() for u in urls)}
    assert fits["huge"] == 2 and fits["size-00"] == 16


def test_fits_needs_the_usage_permissions(client, staff_user, cloud):
    from django.contrib.auth.models import Permission

    staff_user.user_permissions.add(Permission.objects.get(codename="view_flavor"))
    c = _client(client, staff_user)
    staff_user.groups.clear()  # no provider, inventory or allocation view permission
    assert c.get(f"/dashboard/flavors/{cloud.pk}/fits/").status_code == 403
    assert "data-fits-url" not in c.get("/dashboard/flavors/").content.decode()


def test_overview_counts_every_flavor_with_the_capacity_simulation(
    client, scheduler_operator, cloud
):
    # More flavors than the overview used to count (8); a NUMA one, which the simulation
    # counts as boots would place (no NUMA host here: 0, not an upper bound).
    for index in range(10):
        Flavor.objects.create(name=f"z.f{index}", vcpus=1, ram=1024 + index, disk=1)
    Flavor.objects.create(
        name="z.numa", vcpus=2, ram=2048, disk=1, extra_specs={"hw:numa_nodes": "2"}
    )
    c = _client(client, scheduler_operator)
    # The overview counts after the page: each flavor's count is its own address.
    urls = _fits_urls(c.get("/dashboard/").content.decode())
    fits = {body["flavor"]: body["fits"] for body in (c.get(u).json() for u in urls)}
    assert [fits[f"z.f{index}"] for index in range(10)] == [16] * 10  # 8 on each host
    assert fits["z.numa"] == 0


def test_overview_leaves_flavors_out_for_who_may_not_see_them(client, staff_user, cloud):
    page = _client(client, staff_user).get("/dashboard/").content.decode()
    assert 'id="flavor-fits"' not in page


def test_flavor_page_lists_flavors_with_fits_and_servers(client, scheduler_operator, cloud):
    Flavor.objects.create(
        name="huge", vcpus=64, ram=1024, disk=1, extra_specs={"resources:VCPU": 64}
    )
    page = _client(client, scheduler_operator).get("/dashboard/flavors/").content.decode()
    assert "bar.small" in page and "resources:VCPU=64" in page
    assert page.index("bar.small") < page.index("huge")


def test_flavor_page_needs_the_view_permission(client, staff_user, cloud):
    assert _client(client, staff_user).get("/dashboard/flavors/").status_code == 403


def test_schedule_explains_without_claiming(client, scheduler_operator, cloud):
    c = _client(client, scheduler_operator)
    page = c.get("/dashboard/schedule/", {"flavor": "bar.small", "name": "vm"})
    assert page.status_code == 200
    assert 'id="funnel-pending"' in page.content.decode()  # loaded after the page
    assert 'id="funnel"' not in page.content.decode()
    text = _schedule(
        c,
        {
            "flavor": "bar.small",
            "name": "vm",
            "count": "1",
            "project_id": "p",
            "user_id": "u",
            "ignore_hosts": "cn1",
        },
    )
    assert 'id="funnel"' in text and "is in ignore_hosts" in text
    assert "chosen" in text and "cn2" in text
    assert 'id="create-button"' not in text  # no add_server permission
    assert not Server.objects.exists()


def test_schedule_shows_no_valid_host_with_its_funnel(client, scheduler_operator, cloud):
    Flavor.objects.create(name="big", vcpus=16, ram=2048, disk=10)
    text = _schedule(_client(client, scheduler_operator), {"flavor": "big", "explain": "1"})
    assert "No valid host" in text
    assert "capacity" in text


def test_schedule_creates_servers_with_the_add_permission(client, scheduler_operator, cloud):
    scheduler_operator.user_permissions.add(Permission.objects.get(codename="add_server"))
    response = _client(client, scheduler_operator).post(
        "/dashboard/schedule/",
        {"flavor": "bar.small", "name": "web", "count": 2, "project_id": "p", "user_id": "u"},
    )
    text = response.content.decode()
    assert response.status_code == 200
    assert 'id="created"' in text and "web-1" in text and "web-2" in text
    assert Server.objects.count() == 2


def test_schedule_create_is_refused_without_the_permission(client, scheduler_operator, cloud):
    response = _client(client, scheduler_operator).post(
        "/dashboard/schedule/",
        {"flavor": "bar.small", "name": "web", "count": 1, "project_id": "p", "user_id": "u"},
    )
    assert response.status_code == 403
    assert "You may not create servers." in response.content.decode()
    assert not Server.objects.exists()


def test_a_flavor_link_prefills_the_defaults_and_explains(client, scheduler_operator, cloud):
    """The Flavors page's "schedule" link names the flavor alone: the rest are the defaults."""
    text = _schedule(_client(client, scheduler_operator), {"flavor": "bar.small"})
    assert "This field is required" not in text
    assert 'name="name" value="server"' in text and 'name="count" value="1"' in text
    assert '<option value="bar.small" selected>' in text
    assert 'id="funnel"' in text


def test_a_link_with_bad_values_prefills_without_errors_until_submitted(
    client, scheduler_operator, cloud
):
    c = _client(client, scheduler_operator)
    text = c.get("/dashboard/schedule/", {"flavor": "bar.small", "count": "0"}).content.decode()
    assert 'class="error"' not in text and 'id="funnel"' not in text
    assert 'name="count" value="0"' in text
    text = c.get(
        "/dashboard/schedule/", {"flavor": "bar.small", "count": "0", "explain": "1"}
    ).content.decode()
    assert "greater than or equal to 1" in text


def test_schedule_page_without_a_query_shows_no_errors(client, scheduler_operator, cloud):
    text = _client(client, scheduler_operator).get("/dashboard/schedule/").content.decode()
    assert "This field is required" not in text and 'id="funnel"' not in text


def test_explain_form_carries_no_csrf_token_and_create_is_a_post_of_its_own(
    client, scheduler_operator, cloud
):
    scheduler_operator.user_permissions.add(Permission.objects.get(codename="add_server"))
    text = _schedule(_client(client, scheduler_operator), {"flavor": "bar.small", "explain": "1"})
    explain_form = text[
        text.index('id="schedule-form"') : text.index("</form>", text.index('id="schedule-form"'))
    ]
    assert "csrfmiddlewaretoken" not in explain_form
    create_form = re.search(
        r'<form method="post" action="/dashboard/schedule/" class="card" id="create-form">'
        r"(.*?)</form>",
        text,
        re.S,
    ).group(1)
    assert "csrfmiddlewaretoken" in create_form and 'id="create-button"' in create_form
    assert 'name="flavor" value="bar.small"' in create_form


def test_explain_groups_dropped_hosts_by_reason_with_counts(client, scheduler_operator, cloud):
    for index in range(3, 8):
        make_provider(f"cn{index}", inventories={"VCPU": 8, "MEMORY_MB": 16384, "DISK_GB": 100})
    text = _schedule(
        _client(client, scheduler_operator),
        {"flavor": "bar.small", "ignore_hosts": "cn1,cn2,cn3,cn4,cn5", "explain": "1"},
    )
    groups = re.findall(
        r'<details class="dropped-group"><summary><span class="reason-text">([^<]+)</span> '
        r'<span class="chip chip-bad"><b>(\d+)</b> hosts?</span></summary>',
        text,
    )
    assert groups == [("is in ignore_hosts", "5")]  # one line for five hosts
    listed = text.split('class="dropped-hosts">')[1].split("</p>")[0]
    assert all(f">cn{i}<" in listed for i in range(1, 6))


def test_the_funnel_of_a_bad_request_says_why(client, scheduler_operator, cloud):
    r = _client(client, scheduler_operator).get(
        "/dashboard/schedule/funnel/", {"flavor": "no-such", "count": "0"}
    )
    assert r.status_code == 400
    body = r.content.decode()
    assert 'id="schedule-errors"' in body and "count:" in body and "flavor:" in body
