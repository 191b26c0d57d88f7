"""The Hosts, Pools and Server groups pages filter with the filter sets of /api/ (as NetBox
shares one FilterSet between its UI and its API): the same query string lists the same rows
on the page and in the API, the pages' own parameters (``q``, ``state``) included."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from providers.models import ComputeNode
from providers.services.compute_nodes import compute_node_report
from providers.services.host_sync import compute_nodes_sync
from scheduling.services.server_groups import server_group_create
from tests.providers.hosts import report
from tests.providers.pools import ceph, put_pool

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def plugins(settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = ["vcpu", "memory", "disk"]
    settings.PLACEMENT_HOST_STALE_SECONDS = 600


def _on_page(staff, path, attribute):
    html = staff.get(path).content.decode()
    return sorted(set(re.findall(rf'{attribute}="([^"]+)"', html)))


def _in_api(api, path, field):
    response = api.get(path)
    assert response.status == 200, response
    return sorted(row[field] for row in response.json["results"])


@pytest.fixture
def hosts():
    for name in ("web-good", "web-quiet", "db-off", "db-errors"):
        compute_node_report(hostname=name, report=report())
    compute_nodes_sync()
    compute_node_report(hostname="web-new", report=report())  # waiting for a sync
    ComputeNode.objects.filter(hostname="web-quiet").update(
        reported_at=timezone.now() - timedelta(minutes=30)
    )
    ComputeNode.objects.filter(hostname="db-off").update(enabled=False)
    ComputeNode.objects.filter(hostname="db-errors").update(sync_status="blocked")


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("", ["db-errors", "db-off", "web-good", "web-new", "web-quiet"]),
        ("q=WEB", ["web-good", "web-new", "web-quiet"]),
        ("state=stale", ["web-quiet"]),
        ("state=disabled", ["db-off"]),
        ("state=errors", ["db-errors"]),
        ("state=pending", ["db-errors", "web-new"]),  # a blocked host is retried too
        ("q=db&state=disabled", ["db-off"]),
        ("enabled=false", ["db-off"]),  # an API filter the page now takes too
    ],
)
def test_hosts_page_and_api_list_the_same_hosts(staff, api, hosts, query, expected):
    assert _on_page(staff, f"/dashboard/hosts/?{query}", "data-host") == expected
    assert _in_api(api, f"/api/compute-nodes/?{query}", "hostname") == expected


def test_an_unknown_state_lists_every_host_on_the_page_and_is_a_400_in_the_api(staff, api, hosts):
    assert len(_on_page(staff, "/dashboard/hosts/?state=bogus", "data-host")) == 5
    assert api.get("/api/compute-nodes/?state=bogus").status == 400


@pytest.mark.parametrize(
    ("query", "expected"),
    [("", ["ceph-a", "ceph-b", "nfs"]), ("q=CEPH", ["ceph-a", "ceph-b"]), ("q=zzz", [])],
)
def test_pools_page_and_api_list_the_same_pools(staff, api, query, expected):
    for name in ("ceph-a", "ceph-b", "nfs"):
        put_pool(api, name, ceph(members=[]))
    assert _on_page(staff, f"/dashboard/pools/?{query}", "data-pool") == expected
    assert _in_api(api, f"/api/resource-pools/?{query}", "name") == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [("", ["db", "web"]), ("q=WE", ["web"]), ("q=project-b", ["db"])],
)
def test_server_groups_page_and_api_list_the_same_groups(admin_client, api, query, expected):
    server_group_create(name="web", policy="affinity", rules=None, project_id="project-a")
    server_group_create(name="db", policy="affinity", rules=None, project_id="project-b")
    page = _on_page(admin_client, f"/dashboard/server-groups/?{query}", "data-group")
    assert page == expected
    separator = "&" if query else ""
    path = f"/api/server-groups/?all_projects=true{separator}{query}"
    assert _in_api(api, path, "name") == expected


def test_the_pages_filters_are_documented_in_the_openapi_schema(api):
    schema = api.get("/api/schema/?format=json").json

    def parameters(path):
        return {p["name"] for p in schema["paths"][path]["get"]["parameters"]}

    assert {"q", "state", "hostname", "stale"} <= parameters("/api/compute-nodes/")
    assert {"q", "name", "stale"} <= parameters("/api/resource-pools/")
    assert "q" in parameters("/api/server-groups/")
