"""The Pools page (capacity, usage, members, staleness, history of changes) and pools on the
pages of their member hosts, with pools reported and synced through HTTP."""

import uuid

import pytest

from tests.conftest import PlacementClient
from tests.providers.pools import ceph, provider, put_host, put_pool, sync_all

pytestmark = [pytest.mark.django_db]


@pytest.fixture
def pooled(db, settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = ["vcpu", "memory", "disk"]
    settings.PLACEMENT_SYNC_ON_REPORT = False
    api = PlacementClient(version="1.39")
    put_host(api, "s1", disk_pool="ceph1")
    put_host(api, "s2", disk_pool="ceph1")
    put_host(api, "s3")
    put_pool(api, "ceph1", ceph(total=1000))
    sync_all()
    put_pool(api, "ceph1", ceph(total=1200))
    sync_all()
    pool = provider(api, "ceph1")["uuid"]
    body = {
        "allocations": {pool: {"resources": {"DISK_GB": 300}}},
        "project_id": "p",
        "user_id": "u",
        "consumer_generation": None,
        "consumer_type": "INSTANCE",
    }
    assert api.put(f"/allocations/{uuid.uuid4()}", body).status == 204
    put_pool(
        api,
        "net1",
        {"kind": "ip_pool", "inventories": {"IPV4_ADDRESS": {"total": 254}}, "members": []},
    )
    return api


def section(response, name):
    html = response.content.decode()
    return html.split(f'data-pool="{name}"', 1)[1].split("</section>", 1)[0]


def test_the_pools_page_shows_capacity_usage_members_and_changes(pooled, staff):
    response = staff.get("/dashboard/pools/")
    assert response.status_code == 200
    ceph1 = section(response, "ceph1")
    assert (
        "DISK_GB" in ceph1 and ">1.2 TB<" in ceph1 and ">300 GB<" in ceph1 and ">900 GB<" in ceph1
    )
    assert ">s1<" in ceph1 and ">s2<" in ceph1 and ">s3<" not in ceph1
    assert "1000 → 1200" in ceph1
    assert "tag-ok" in ceph1
    net1 = section(response, "net1")
    assert "Not synced yet." in net1 and "No host yet." in net1


def test_a_stale_or_disabled_pool_is_flagged(pooled, staff, settings):
    pooled.request("PATCH", "/api/resource-pools/net1/", {"enabled": False})
    settings.PLACEMENT_POOL_STALE_SECONDS = 0
    response = staff.get("/dashboard/pools/")
    assert "stale" in section(response, "ceph1")
    assert "disabled" in section(response, "net1")


def test_hosts_show_their_pools(pooled, staff):
    response = staff.get("/dashboard/hosts/")
    html = response.content.decode()
    row = html.split('data-host="s1"', 1)[1].split("</tr>", 1)[0]
    assert "#pool-ceph1" in row
    row = html.split('data-host="s3"', 1)[1].split("</tr>", 1)[0]
    assert "ceph1" not in row
    s1 = provider(pooled, "s1")["uuid"]
    page = staff.get(f"/dashboard/providers/{s1}/").content.decode()
    assert 'id="host-pools"' in page and "#pool-ceph1" in page


def test_the_pools_page_needs_the_pool_view_permission(pooled, staff_user, staff):
    staff_user.groups.first().permissions.remove(
        *staff_user.groups.first().permissions.filter(codename="view_resourcepool")
    )
    assert staff.get("/dashboard/pools/").status_code == 403
