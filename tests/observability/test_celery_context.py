"""Request ids travel with the Celery tasks a request enqueues, into the worker's log lines."""

import time

import pytest
from celery import Celery

from placementsite.api import request_id
from placementsite.models import Heartbeat
from placementsite.tasks import HEARTBEAT_TASK
from tests.test_celery import TEST_BROKER_URL, celery_worker_queue  # noqa: F401 (a fixture)


@pytest.mark.postgresql
@pytest.mark.redis
def test_task_log_lines_carry_the_request_id_of_the_sender(celery_worker_queue):  # noqa: F811
    queue, log_path = celery_worker_queue
    rid = request_id.new_request_id()
    caller = "req-12345678-1234-1234-1234-123456789abc"
    tokens = (
        request_id.current_request_id.set(rid),
        request_id.current_global_request_id.set(caller),
    )
    try:
        sender = Celery("test-sender")
        with sender.connection_for_write(TEST_BROKER_URL) as conn:
            sender.send_task(HEARTBEAT_TASK, queue=queue, connection=conn)
    finally:
        request_id.current_request_id.reset(tokens[0])
        request_id.current_global_request_id.reset(tokens[1])

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not Heartbeat.objects.exists():
        time.sleep(0.5)
    time.sleep(1)  # the log line follows the write
    log = log_path.read_text()
    lines = [line for line in log.splitlines() if "heartbeat recorded" in line]
    assert lines, "no task log line; worker log:\n" + log
    assert f"[{rid} {caller}]" in lines[0]
