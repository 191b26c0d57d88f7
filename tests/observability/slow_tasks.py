"""A task a test worker imports (``--include``) to be killed while it runs."""

import time

from celery import shared_task

SLEEPS = "tests.observability.sleeps"


@shared_task(name=SLEEPS)
def sleeps(seconds=60):
    time.sleep(seconds)
    return seconds
