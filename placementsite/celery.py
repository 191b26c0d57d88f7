"""The Celery app. Broker from CELERY_BROKER_URL; beat schedule in the database."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "placementsite.settings")

app = Celery("placement")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def _connect_signals():
    from placementsite.observability import celery_signals

    celery_signals.connect()


_connect_signals()
