"""A real Celery worker on Redis syncs resource pools: at once when a pool's report changes
(no beat running), and a pool whose member host gets its provider later joins it when that
host's sync runs."""

import pytest
import requests

from providers.models import Inventory, ResourcePool, ResourceProviderAggregate
from tests.gunicorn_server import running_gunicorn

pytestmark = [pytest.mark.postgresql, pytest.mark.live, pytest.mark.redis]

PLUGINS = "vcpu,memory,disk"


def disk_total(name):
    row = Inventory.objects.filter(
        resource_provider__name=name, resource_class__name="DISK_GB"
    ).first()
    return row.total if row else None


def in_pool(hostname):
    pool = ResourcePool.objects.filter(name="ceph1").first()
    return (
        pool is not None
        and ResourceProviderAggregate.objects.filter(
            aggregate__uuid=pool.aggregate_uuid, resource_provider__name=hostname
        ).exists()
    )


def test_reports_are_synced_by_a_worker_with_no_beat_running(celery_worker, settings):
    worker = celery_worker(env={"PLACEMENT_RESOURCE_PLUGINS": PLUGINS})
    settings.PLACEMENT_RESOURCE_PLUGINS = PLUGINS.split(",")
    env = {
        "PLACEMENT_RESOURCE_PLUGINS": PLUGINS,
        "PLACEMENT_SYNC_ON_REPORT": "1",
        "CELERY_BROKER_URL": worker.broker_url,
        "CELERY_TASK_DEFAULT_QUEUE": worker.queue,
    }
    headers = {"X-Auth-Token": "admin"}
    with running_gunicorn(workers=1, env=env) as base:
        for total in (1000, 1500):
            response = requests.put(
                f"{base}/api/resource-pools/ceph1/",
                json={"kind": "shared_storage", "inventories": {"DISK_GB": {"total": total}}},
                headers=headers,
                timeout=30,
            )
            assert response.status_code in (200, 201), response.text
            worker.wait_for(lambda total=total: disk_total("ceph1") == total)
        response = requests.put(
            f"{base}/api/compute-nodes/s1/",
            json={"vcpus": 8, "memory_mb": 8192, "local_gb": 100, "disk_pool": "ceph1"},
            headers=headers,
            timeout=30,
        )
        assert response.status_code == 201, response.text
        worker.wait_for(lambda: in_pool("s1"))
    assert disk_total("s1") is None
    assert ResourcePool.objects.get().sync_status == "ok"
