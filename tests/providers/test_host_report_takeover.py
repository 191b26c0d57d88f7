"""A host report never takes over a provider the host sync did not create: the report naming
one is refused at ``PUT`` (409), unless an admin adopts that provider explicitly."""

import pytest

from providers.models import ComputeNode, ResourceProvider
from tests.providers.hosts import report, sync, tree

pytestmark = pytest.mark.django_db

SERVICE = {"token": "svc:service-project", "headers": {"X-Roles": "service"}}


@pytest.fixture
def admin_host(api):
    """``adm-host``, made by an admin through the Placement API, with DISK_GB 1000."""
    made = api.post("/resource_providers", {"name": "adm-host"}).json
    response = api.put(
        f"/resource_providers/{made['uuid']}/inventories",
        {
            "resource_provider_generation": made["generation"],
            "inventories": {"DISK_GB": {"total": 1000}},
        },
    )
    assert response.status == 200, response
    return made["uuid"]


@pytest.mark.parametrize("defaults", ["legacy", "secure", "admin-only"])
def test_a_service_report_naming_an_admin_made_provider_is_refused(
    api, admin_host, settings, defaults
):
    settings.PLACEMENT_POLICY_DEFAULTS = defaults
    response = api.put("/api/compute-nodes/adm-host/", report(local_gb=999999), **SERVICE)
    assert response.status == 409, response
    assert response.error_code == "compute_node.provider_not_synced"
    assert "adm-host" in response.error["detail"] and admin_host in response.error["detail"]
    assert not ComputeNode.objects.filter(hostname="adm-host").exists()
    sync()
    inventories = tree(api, "adm-host")["adm-host"]["inventories"]
    assert inventories == {"DISK_GB": inventories["DISK_GB"]}
    assert inventories["DISK_GB"]["total"] == 1000


def test_an_admin_report_without_adopt_is_refused_too(api, admin_host):
    response = api.put("/api/compute-nodes/adm-host/", report())
    assert response.status == 409, response


def test_an_admin_adopts_the_provider_explicitly(api, admin_host):
    response = api.put("/api/compute-nodes/adm-host/?adopt=true", report(local_gb=500))
    assert response.status == 201, response
    assert response.json["provider"] == admin_host
    sync()
    host = tree(api, "adm-host")
    assert host["adm-host"]["uuid"] == admin_host
    assert host["adm-host"]["inventories"]["DISK_GB"]["total"] == 500
    assert ResourceProvider.objects.count() == 1
    # Adopted, the provider is the sync's: the host's own later reports are accepted.
    assert api.put("/api/compute-nodes/adm-host/", report(local_gb=600), **SERVICE).status == 200


def test_a_service_may_not_adopt(api, admin_host):
    response = api.put("/api/compute-nodes/adm-host/?adopt=true", report(), **SERVICE)
    assert response.status == 403, response
    assert "placement:api:compute_nodes:adopt" in response.error["detail"]


def test_adopt_takes_true_or_false(api, admin_host):
    assert api.put("/api/compute-nodes/adm-host/?adopt=yes", report()).status == 400


def test_a_provider_named_after_a_hosts_child_elsewhere_is_not_taken(api, settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = ["vcpu", "memory", "disk", "numa"]
    stranger = api.post("/resource_providers", {"name": "host-1_NUMA0"}).json
    cells = [{"id": 0, "cpus": [0, 1], "memory_mb": 4096}]
    body = report(numa_topology={"cells": cells})
    assert api.put("/api/compute-nodes/host-1/", body, **SERVICE).status == 201
    sync()
    refreshed = api.get(f"/resource_providers/{stranger['uuid']}").json
    assert refreshed["parent_provider_uuid"] is None
    assert refreshed["generation"] == stranger["generation"]
    assert api.get(f"/resource_providers/{stranger['uuid']}/inventories").json["inventories"] == {}


def test_the_hosts_own_provider_is_kept_across_reports(api):
    assert api.put("/api/compute-nodes/host-1/", report(), **SERVICE).status == 201
    sync()
    first = tree(api, "host-1")["host-1"]["uuid"]
    assert api.put("/api/compute-nodes/host-1/", report(vcpus=4), **SERVICE).status == 200
    sync()
    assert tree(api, "host-1")["host-1"]["uuid"] == first


def test_a_provider_made_after_the_report_is_not_taken_over_by_the_sync(api):
    """The report was accepted (no provider of that name yet); a provider of the host's name
    made through the Placement API before the first sync stays its maker's: the host fails
    with a reason naming it, and the provider's inventory is untouched."""
    assert api.put("/api/compute-nodes/late-host/", report(local_gb=500), **SERVICE).status == 201
    made = api.post("/resource_providers", {"name": "late-host"}).json
    sync()
    node = ComputeNode.objects.get(hostname="late-host")
    assert node.sync_status == ComputeNode.SyncStatus.FAILED
    assert made["uuid"] in node.sync_error and "adopt" in node.sync_error
    assert api.get(f"/resource_providers/{made['uuid']}/inventories").json["inventories"] == {}


def test_new_hosts_synced_together_lose_nothing_to_one_whose_name_is_taken(api):
    """New hosts' trees are written together; one of them whose name a provider made after
    its report holds fails alone, with its reason, and the others get their trees."""
    for hostname in ("new-a", "taken-b", "new-c"):
        assert api.put(f"/api/compute-nodes/{hostname}/", report(), **SERVICE).status == 201
    made = api.post("/resource_providers", {"name": "taken-b"}).json
    sync()
    hosts = {h: api.get(f"/api/compute-nodes/{h}/").json for h in ("new-a", "taken-b", "new-c")}
    assert {h: body["sync_status"] for h, body in hosts.items()} == {
        "new-a": "ok",
        "taken-b": "failed",
        "new-c": "ok",
    }
    assert made["uuid"] in hosts["taken-b"]["sync_error"]
    assert api.get(f"/resource_providers/{made['uuid']}/inventories").json["inventories"] == {}
    for hostname in ("new-a", "new-c"):
        assert tree(api, hostname)[hostname]["inventories"]["VCPU"]["total"] == 16
