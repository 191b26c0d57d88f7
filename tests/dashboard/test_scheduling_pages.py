"""The scheduler's dashboard pages: flavors, Schedule (explain and create) and "fits N more"
on the overview."""

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


def test_overview_shows_how_many_more_fit_per_flavor(client, scheduler_operator, cloud):
    page = _client(client, scheduler_operator).get("/dashboard/").content.decode()
    assert 'id="flavor-fits"' in page
    assert "fits 8 more" in page


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
    page = _client(client, scheduler_operator).get("/dashboard/").content.decode()
    assert page.count("fits 16 more") == 10  # 1 vCPU each: 8 on each of the two hosts
    assert "z.numa" in page and "fits 0 more" in page


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
    page = _client(client, scheduler_operator).get(
        "/dashboard/schedule/?flavor=bar.small&name=vm&count=1&project_id=p&user_id=u"
        "&ignore_hosts=cn1"
    )
    text = page.content.decode()
    assert page.status_code == 200
    assert 'id="funnel"' in text and "is in ignore_hosts" in text
    assert "chosen" in text and "cn2" in text
    assert 'id="create-button"' not in text  # no add_server permission
    assert not Server.objects.exists()


def test_schedule_shows_no_valid_host_with_its_funnel(client, scheduler_operator, cloud):
    Flavor.objects.create(name="big", vcpus=16, ram=2048, disk=10)
    text = (
        _client(client, scheduler_operator)
        .get("/dashboard/schedule/?flavor=big&name=vm&count=1&project_id=p&user_id=u")
        .content.decode()
    )
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
    assert response.status_code == 302
    assert not Server.objects.exists()
