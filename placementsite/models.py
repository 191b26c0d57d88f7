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
