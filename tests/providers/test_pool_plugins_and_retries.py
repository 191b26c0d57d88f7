"""Pool plugins from an installed package's entry point (group ``placement.pool_plugins``),
and a blocked pool retried by beat's periodic sync until a grown report unblocks it, through
HTTP on PostgreSQL."""

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from providers.models import ResourcePool
from providers.plugins.pools import POOL_PLUGINS
from providers.tasks import sync_resource_pools
from tests.providers.pools import ceph, inventories, provider, put_pool, sync_all, traits

pytestmark = [pytest.mark.django_db, pytest.mark.postgresql]

PLUGIN_MODULE = '''
from providers.plugins import InventorySpec
from providers.plugins.pools import PoolPlugin


class NfsExportPlugin(PoolPlugin):
    """An NFS export reporting its size in bytes; its pools get a trait of their own."""

    resource_classes = ("DISK_GB",)

    def contribute(self, report, tree):
        tree.root.inventories["DISK_GB"] = InventorySpec(report.stats["size_bytes"] // 1024**3)
        tree.root.traits.add("CUSTOM_NFS")
'''


@pytest.fixture(autouse=True)
def host_settings(settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = ["vcpu", "memory", "disk", "numa", "pci"]
    settings.PLACEMENT_SYNC_ON_REPORT = False
    return settings


@pytest.fixture
def nfs_package(tmp_path, monkeypatch):
    """An installed distribution (as pip leaves one) registering ``acme_nfs`` as a pool
    plugin's entry point."""
    (tmp_path / "acme_nfs.py").write_text(PLUGIN_MODULE)
    dist = tmp_path / "acme_nfs-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-nfs\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[placement.pool_plugins]\nacme_nfs = acme_nfs:NfsExportPlugin\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_a_pool_plugin_from_an_entry_point_is_a_pool_kind(api, nfs_package):
    assert "acme_nfs" in POOL_PLUGINS.available()
    response = put_pool(
        api, "nfs1", {"kind": "acme_nfs", "stats": {"size_bytes": 200 * 1024**3}, "members": []}
    )
    assert response.status == 201, response
    assert "ok" in sync_all()["nfs1"]
    pool = provider(api, "nfs1")
    assert inventories(api, pool["uuid"])["DISK_GB"]["total"] == 200
    assert {"CUSTOM_NFS", "MISC_SHARES_VIA_AGGREGATE"} <= traits(api, pool["uuid"])
    refused = api.put(
        "/api/resource-pools/nfs1/",
        {"kind": "acme_nfs", "inventories": {"VCPU": {"total": 4}}},
    )
    assert refused.status == 400 and "inventories.VCPU" in str(refused.json), refused


def test_a_kind_naming_no_plugin_lists_the_entry_points_too(api, nfs_package):
    refused = api.put("/api/resource-pools/nfs1/", {"kind": "acme_nfz", "members": []})
    assert refused.status == 400, refused
    detail = refused.json["errors"][0]["detail"]
    assert "kind" in detail and "acme_nfs" in detail and "ip_pool" in detail, detail


def test_a_blocked_pool_is_retried_by_beat_and_unblocks_when_its_report_grows(api):
    put_pool(api, "ceph1", ceph(members=[]))
    sync_all()
    pool = provider(api, "ceph1")
    body = {
        "allocations": {pool["uuid"]: {"resources": {"DISK_GB": 600}}},
        "project_id": "p",
        "user_id": "u",
        "consumer_generation": None,
        "consumer_type": "INSTANCE",
    }
    assert api.put(f"/allocations/{uuid.uuid4()}", body).status == 204
    put_pool(api, "ceph1", ceph(total=500, members=[]))

    assert sync_resource_pools() == 1  # beat's periodic sync: the changed report
    record = ResourcePool.objects.get(name="ceph1")
    assert (record.sync_status, record.sync_attempts) == ("blocked", 1)
    assert "DISK_GB" in record.sync_error

    # Each retry that is due tries again, and stays blocked while the usage is above it.
    for attempts in (2, 3):
        ResourcePool.objects.filter(pk=record.pk).update(
            next_sync_at=timezone.now() - timedelta(seconds=1)
        )
        assert sync_resource_pools() == 1
        record.refresh_from_db()
        assert (record.sync_status, record.sync_attempts) == ("blocked", attempts)
        assert record.next_sync_at > timezone.now()
    assert sync_resource_pools() == 0  # the next retry is not due yet
    assert inventories(api, pool["uuid"])["DISK_GB"]["total"] == 1000

    put_pool(api, "ceph1", ceph(total=800, members=[]))
    assert sync_resource_pools() == 1  # a new report is tried at once, retry due or not
    record.refresh_from_db()
    assert (record.sync_status, record.sync_attempts, record.sync_error) == ("ok", 0, "")
    assert inventories(api, pool["uuid"])["DISK_GB"]["total"] == 800
    listed = api.get("/api/resource-pools/?sync_status=blocked").json
    assert listed["count"] == 0
