"""Request ids travel with the Celery tasks a request enqueues, into the worker's log lines."""

import time

import pytest

from placementsite.core.api import request_id
from placementsite.models import Heartbeat
from placementsite.tasks import HEARTBEAT_TASK


@pytest.mark.postgresql
@pytest.mark.redis
def test_task_log_lines_carry_the_request_id_of_the_sender(celery_worker):
    worker = celery_worker()
    rid = request_id.new_request_id()
    caller = "req-12345678-1234-1234-1234-123456789abc"
    tokens = (
        request_id.current_request_id.set(rid),
        request_id.current_global_request_id.set(caller),
    )
    try:
        worker.send(HEARTBEAT_TASK)
    finally:
        request_id.current_request_id.reset(tokens[0])
        request_id.current_global_request_id.reset(tokens[1])

    worker.wait_for(Heartbeat.objects.exists, seconds=60)
    time.sleep(1)  # the log line follows the write
    log = worker.log_path.read_text()
    lines = [line for line in log.splitlines() if "heartbeat recorded" in line]
    assert lines, "no task log line; worker log:\n" + log
    assert f"[{rid} {caller}]" in lines[0]


@pytest.mark.postgresql
@pytest.mark.redis
def test_each_service_log_line_of_a_task_is_written_once(celery_worker):
    worker = celery_worker()
    worker.send(HEARTBEAT_TASK)
    worker.wait_for(Heartbeat.objects.exists, seconds=60)
    time.sleep(1)  # the log line follows the write
    log = worker.log_path.read_text()
    lines = [line for line in log.splitlines() if "heartbeat recorded (run 1)" in line]
    assert len(lines) == 1, "worker log:\n" + log
