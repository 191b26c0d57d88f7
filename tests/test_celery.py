"""Celery: the heartbeat task run by a real worker, and the beat schedule in the DB."""

import pytest
from django.core.exceptions import ImproperlyConfigured
from django_celery_beat.models import PeriodicTask

from placementsite.models import Heartbeat
from placementsite.tasks import (
    BEAT_SCHEDULE,
    HEARTBEAT_TASK,
    beat_schedule_collect,
    beat_schedule_sync,
)


@pytest.mark.postgresql
@pytest.mark.redis
def test_worker_runs_heartbeat_and_records_it(celery_worker):
    worker = celery_worker()
    worker.send(HEARTBEAT_TASK)
    worker.wait_for(lambda: Heartbeat.objects.filter(name="heartbeat").exists(), seconds=60)
    heartbeat = Heartbeat.objects.get(name="heartbeat")
    assert heartbeat.runs == 1
    assert heartbeat.hostname


def test_beat_schedule_is_in_the_database(db):
    for name, entry in BEAT_SCHEDULE.items():
        task = PeriodicTask.objects.select_related("interval").get(name=name)
        assert task.task == entry["task"]
        assert task.enabled
        assert task.interval.every == entry["every_seconds"]


def test_beat_schedule_sync_keeps_operator_changes(db):
    name = next(iter(BEAT_SCHEDULE))
    PeriodicTask.objects.filter(name=name).update(enabled=False)
    assert beat_schedule_sync() == []
    assert PeriodicTask.objects.get(name=name).enabled is False


def test_beat_schedule_sync_recreates_a_deleted_entry(db):
    PeriodicTask.objects.all().delete()
    assert beat_schedule_sync() == list(BEAT_SCHEDULE)
    assert PeriodicTask.objects.filter(name__in=list(BEAT_SCHEDULE)).count() == len(BEAT_SCHEDULE)


def test_heartbeat_task_counts_runs(db):
    from placementsite.tasks import heartbeat

    heartbeat.apply()
    heartbeat.apply()
    assert Heartbeat.objects.get(name="heartbeat").runs == 2


def test_the_schedule_collects_what_each_app_declares_next_to_its_tasks():
    import allocations.tasks
    import providers.tasks
    import scheduling.tasks

    for app_tasks in (providers.tasks, allocations.tasks, scheduling.tasks):
        assert app_tasks.BEAT_SCHEDULE
        assert app_tasks.BEAT_SCHEDULE.items() <= BEAT_SCHEDULE.items()


def test_a_beat_entry_declared_twice_is_refused():
    entry = {"task": HEARTBEAT_TASK, "every_seconds": 60}
    with pytest.raises(ImproperlyConfigured, match="'twice' is declared twice"):
        beat_schedule_collect({"twice": entry}, {"twice": entry})
