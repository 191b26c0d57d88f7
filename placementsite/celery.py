"""The Celery app. Broker from CELERY_BROKER_URL; beat schedule in the database."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "placementsite.settings")

app = Celery("placement")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
