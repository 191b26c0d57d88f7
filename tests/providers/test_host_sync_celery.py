"""A real Celery worker with an embedded beat on Redis runs the host sync on its schedule."""

import pytest

from providers.models import ComputeNode, Inventory
from providers.services.compute_nodes import compute_node_report
from providers.tasks import SYNC_TASK
from tests.providers.hosts import report

pytestmark = [pytest.mark.postgresql, pytest.mark.redis]

PLUGINS = "vcpu,memory,disk"


def test_beat_schedules_the_sync_and_the_worker_runs_it(celery_worker, settings):
    worker = celery_worker(beat_task=SYNC_TASK, env={"PLACEMENT_RESOURCE_PLUGINS": PLUGINS})
    settings.PLACEMENT_RESOURCE_PLUGINS = PLUGINS.split(",")
    compute_node_report(hostname="beat-host", report=report(vcpus=12))

    def vcpu_total():
        row = Inventory.objects.filter(
            resource_provider__name="beat-host", resource_class__name="VCPU"
        ).first()
        return row.total if row else None

    worker.wait_for(lambda: vcpu_total() == 12)
    assert ComputeNode.objects.get().sync_status == "ok"

    # A later report is picked up by a later beat tick, with no one asking.
    compute_node_report(hostname="beat-host", report=report(vcpus=20))
    worker.wait_for(lambda: vcpu_total() == 20)
