"""The periodic tasks: host sync, usage samples and history retention (task code, no broker)."""

from datetime import timedelta

import pytest
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from allocations.tasks import SAMPLE_TASK, sample_usage
from providers.models import ComputeNode, InventoryChange, UsageSample
from providers.services.compute_nodes import compute_node_report
from providers.services.history import history_prune
from providers.tasks import SYNC_TASK, sync_compute_nodes
from tests.factories import make_allocation, make_consumer, make_provider
from tests.providers.hosts import report

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def plugins(settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = ["vcpu", "memory", "disk"]


def test_both_tasks_are_in_the_beat_schedule():
    tasks = set(PeriodicTask.objects.values_list("task", flat=True))
    assert {SYNC_TASK, SAMPLE_TASK} <= tasks


def test_sync_task_syncs_changed_hosts_only():
    compute_node_report(hostname="h1", report=report())
    compute_node_report(hostname="h2", report=report())
    assert sync_compute_nodes.apply().get() == 2
    assert sync_compute_nodes.apply().get() == 0
    compute_node_report(hostname="h2", report=report(vcpus=4))
    assert sync_compute_nodes.apply().get() == 1
    assert set(ComputeNode.objects.values_list("sync_status", flat=True)) == {"ok"}


def test_usage_samples_record_capacity_and_usage_per_provider_and_class():
    provider = make_provider(
        "p1", inventories={"VCPU": {"total": 8, "allocation_ratio": 2.0}, "MEMORY_MB": 1024}
    )
    make_allocation(provider, make_consumer(), {"VCPU": 3})

    assert sample_usage.apply().get() == 2

    vcpu = UsageSample.objects.get(provider=provider, resource_class__name="VCPU")
    assert (vcpu.total, vcpu.capacity, vcpu.used) == (8, 16, 3)
    memory = UsageSample.objects.get(provider=provider, resource_class__name="MEMORY_MB")
    assert (memory.capacity, memory.used) == (1024, 0)


def test_history_older_than_the_retention_is_pruned(settings):
    settings.PLACEMENT_HISTORY_RETENTION_DAYS = 30
    provider = make_provider("p1", inventories={"VCPU": 8})
    vcpu = provider.inventories.get().resource_class
    now = timezone.now()
    sample_usage.apply()
    UsageSample.objects.update(sampled_at=now - timedelta(days=31))
    for age in (40, 2):
        InventoryChange.objects.create(
            provider=provider,
            resource_class=vcpu,
            changed_at=now - timedelta(days=age),
            new_total=8,
        )

    assert history_prune(now=now) == 2

    assert not UsageSample.objects.exists()
    assert InventoryChange.objects.get().changed_at == now - timedelta(days=2)


def test_sample_task_prunes_as_it_samples(settings):
    make_provider("p1", inventories={"VCPU": 8})
    sample_usage.apply()
    UsageSample.objects.update(sampled_at=timezone.now() - timedelta(days=365))
    sample_usage.apply()
    assert UsageSample.objects.count() == 1
