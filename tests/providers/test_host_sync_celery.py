"""A real Celery worker on Redis runs the host sync: on beat's schedule, and at once when a
report changes."""

import pytest
import requests

from providers.models import ComputeNode, Inventory
from providers.services.compute_nodes import compute_node_report
from providers.tasks import SYNC_TASK
from tests.gunicorn_server import running_gunicorn
from tests.providers.hosts import report

pytestmark = pytest.mark.postgresql

PLUGINS = "vcpu,memory,disk"


def vcpu_total(hostname):
    row = Inventory.objects.filter(
        resource_provider__name=hostname, resource_class__name="VCPU"
    ).first()
    return row.total if row else None


@pytest.mark.redis
def test_beat_schedules_the_sync_and_the_worker_runs_it(celery_worker, settings):
    worker = celery_worker(beat_task=SYNC_TASK, env={"PLACEMENT_RESOURCE_PLUGINS": PLUGINS})
    settings.PLACEMENT_RESOURCE_PLUGINS = PLUGINS.split(",")
    compute_node_report(hostname="beat-host", report=report(vcpus=12))

    worker.wait_for(lambda: vcpu_total("beat-host") == 12)
    assert ComputeNode.objects.get().sync_status == "ok"

    # A later report is picked up by a later beat tick, with no one asking.
    compute_node_report(hostname="beat-host", report=report(vcpus=20))
    worker.wait_for(lambda: vcpu_total("beat-host") == 20)


@pytest.mark.live
@pytest.mark.redis
def test_a_changed_report_is_synced_by_a_worker_with_no_beat_running(celery_worker, settings):
    """The report's commit asks the worker for that host's sync: no periodic run is needed."""
    worker = celery_worker(env={"PLACEMENT_RESOURCE_PLUGINS": PLUGINS})
    settings.PLACEMENT_RESOURCE_PLUGINS = PLUGINS.split(",")
    env = {
        "PLACEMENT_RESOURCE_PLUGINS": PLUGINS,
        "PLACEMENT_SYNC_ON_REPORT": "1",
        "CELERY_BROKER_URL": worker.broker_url,
        "CELERY_TASK_DEFAULT_QUEUE": worker.queue,
    }
    with running_gunicorn(workers=1, env=env) as base:
        for vcpus in (12, 20):
            response = requests.put(
                f"{base}/api/compute-nodes/on-report/",
                json=report(vcpus=vcpus),
                headers={"X-Auth-Token": "admin"},
                timeout=30,
            )
            assert response.status_code in (200, 201), response.text
            worker.wait_for(lambda vcpus=vcpus: vcpu_total("on-report") == vcpus)
    assert ComputeNode.objects.get().sync_status == "ok"


@pytest.mark.live
def test_a_report_is_stored_at_once_when_the_broker_is_down(transactional_db):
    """The sync asked for at commit cannot be sent: the report still answers (within the
    client's timeout: the enqueue is not retried) and beat's periodic sync is left to take
    the host."""
    env = {
        "PLACEMENT_RESOURCE_PLUGINS": PLUGINS,
        "PLACEMENT_SYNC_ON_REPORT": "1",
        "CELERY_BROKER_URL": "redis://127.0.0.1:1/0",  # nothing listens there
    }
    with running_gunicorn(workers=1, env=env) as base:
        response = requests.put(
            f"{base}/api/compute-nodes/lonely/",
            json=report(vcpus=4),
            headers={"X-Auth-Token": "admin"},
            timeout=30,
        )
    assert response.status_code == 201, response.text
    assert ComputeNode.objects.get().sync_status == "pending"
