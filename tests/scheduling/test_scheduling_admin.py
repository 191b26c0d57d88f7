"""The admin of flavors and servers goes through the scheduler's own rules and services."""

import pytest
from django.contrib.auth.models import User as DjangoUser

from allocations.models import Allocation
from scheduling.models import Flavor, Server
from tests.scheduling.scheduler_helpers import boot, make_flavor, make_host


@pytest.fixture
def admin_client(client, db):
    user = DjangoUser.objects.create_superuser("root", "root@example.com", "pw")
    client.force_login(user)
    return client


def _flavor_form(*access, **fields):
    """The admin's flavor form, with its flavor access inline (the projects in ``access``)."""
    data = {"name": "f", "vcpus": 2, "ram": 1024, "disk": 10, "ephemeral": 0, "swap": 0}
    data.update(
        {
            "access-TOTAL_FORMS": len(access),
            "access-INITIAL_FORMS": 0,
            **{f"access-{i}-project_id": project for i, project in enumerate(access)},
        }
    )
    data.update(fields)
    return data


def test_admin_gives_a_private_flavor_to_projects(admin_client):
    response = admin_client.post(
        "/admin/scheduling/flavor/add/",
        _flavor_form("projA", "projB", name="private", is_public=""),
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    flavor = Flavor.objects.get(name="private")
    assert not flavor.is_public
    assert sorted(flavor.access.values_list("project_id", flat=True)) == ["projA", "projB"]


def test_admin_refuses_a_bad_extra_spec_naming_it(admin_client):
    response = admin_client.post(
        "/admin/scheduling/flavor/add/",
        _flavor_form(extra_specs='{"trait:HW_CPU_X86_AVX2": "sometimes"}'),
    )
    assert response.status_code == 200
    assert "trait:HW_CPU_X86_AVX2" in response.content.decode()
    assert not Flavor.objects.exists()
    response = admin_client.post(
        "/admin/scheduling/flavor/add/", _flavor_form(extra_specs='{"resources:VCPU": 4}')
    )
    assert response.status_code == 302
    assert Flavor.objects.get().extra_specs == {"resources:VCPU": 4}


def test_admin_delete_of_a_server_frees_its_allocations(admin_client, api):
    make_host(api, "cn1")
    make_flavor(api, "f")
    server_id = boot(api, "f").json["servers"][0]["id"]
    server = Server.objects.get(uuid=server_id)
    response = admin_client.post(f"/admin/scheduling/server/{server.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not Server.objects.exists()
    assert not Allocation.objects.exists()


def test_admin_refuses_to_change_a_flavors_sizes_but_edits_its_extra_specs(admin_client, api):
    flavor = make_flavor(api, "f", vcpus=2, ram=1024, disk=10)
    url = f"/admin/scheduling/flavor/{flavor['id']}/change/"
    response = admin_client.post(url, _flavor_form(vcpus=8, extra_specs="{}", is_public="on"))
    assert response.status_code == 200
    assert "sizes cannot change" in response.content.decode()
    assert Flavor.objects.get().vcpus == 2
    response = admin_client.post(
        url, _flavor_form(extra_specs='{"hw:mem_page_size": "large"}', is_public="on")
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    assert Flavor.objects.get().extra_specs == {"hw:mem_page_size": "large"}


def test_admin_shows_server_groups_and_their_members(admin_client, api):
    make_host(api, "cn1")
    make_flavor(api, "f")
    group = api.post("/api/server-groups/", {"name": "web", "policy": "affinity"}).json
    server = boot(api, "f", scheduler_hints={"group": group["id"]}).json["servers"][0]
    listing = admin_client.get("/admin/scheduling/servergroup/").content.decode()
    assert "web" in listing
    page = admin_client.get(f"/admin/scheduling/servergroup/{_group_pk(group)}/change/")
    assert page.status_code == 200
    assert server["id"] in page.content.decode() or server["name"] in page.content.decode()


def _group_pk(group):
    from scheduling.models import ServerGroup

    return ServerGroup.objects.get(uuid=group["id"]).pk
