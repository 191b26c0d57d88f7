"""Service bookkeeping: the heartbeat the periodic task records."""

from django.db import models


class Heartbeat(models.Model):
    """When a named periodic task last ran, shown in the admin."""

    name = models.CharField(max_length=100, unique=True)
    last_run = models.DateTimeField()
    runs = models.PositiveIntegerField(default=0)
    hostname = models.CharField(max_length=255, blank=True)

    def __str__(self):
        return f"{self.name} at {self.last_run:%Y-%m-%d %H:%M:%S}"


class TaskRun(models.Model):
    """One run of a Celery task, recorded when it starts and again when it ends: a run whose
    worker was killed whole stays ``started`` until the worker (same node name) starts again
    and marks it ``lost``, so that a lost run is visible (admin, dashboard, health check)."""

    class State(models.TextChoices):
        STARTED = "started"
        SUCCEEDED = "succeeded"
        FAILED = "failed"
        RETRIED = "retried"
        LOST = "lost"

    task_id = models.CharField(max_length=255, unique=True)
    task = models.CharField(max_length=200, db_index=True)
    worker = models.CharField(max_length=255, db_index=True)  # the worker's node name
    state = models.CharField(max_length=20, choices=State.choices, default=State.STARTED)
    started_at = models.DateTimeField(db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    detail = models.TextField(blank=True, default="")

    class Meta:
        ordering = ["-started_at", "-id"]
        indexes = [models.Index(fields=["state", "started_at"])]

    def __str__(self):
        return f"{self.task} {self.state} at {self.started_at:%Y-%m-%d %H:%M:%S}"


class ServiceProcess(models.Model):
    """A Celery worker or beat seen alive: each records itself when it starts and again while
    it runs (a worker from a thread of its own, so that one cut off from its broker still
    shows; beat whenever it sends tasks). The detailed health check compares them with the
    workers that answer a ping, and counts the beats."""

    class Kind(models.TextChoices):
        WORKER = "worker"
        BEAT = "beat"

    kind = models.CharField(max_length=10, choices=Kind.choices)
    name = models.CharField(max_length=255)  # a worker's node name, a beat's host:pid
    started_at = models.DateTimeField()
    last_seen = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["kind", "name"]
        constraints = [
            models.UniqueConstraint(fields=["kind", "name"], name="service_process_once")
        ]

    def __str__(self):
        return f"{self.kind} {self.name}"
