"""The request log: one line per API request, as text or JSON (PLACEMENT_LOG_FORMAT)."""

import io
import json
import logging

import pytest

from placementsite.observability import logs

pytestmark = pytest.mark.django_db


@pytest.fixture
def log_output():
    """What the ``placement`` logger writes, in a format chosen by the test."""
    stream = io.StringIO()
    logger = logging.getLogger("placement")
    handlers = []

    def attach(kind):
        handler = logs.use_service_format(logging.StreamHandler(stream), kind)
        logger.addHandler(handler)
        handlers.append(handler)
        return stream

    previous = logger.level
    logger.setLevel(logging.INFO)
    yield attach
    logger.setLevel(previous)
    for handler in handlers:
        logger.removeHandler(handler)


def test_text_line_names_request_method_path_status_version_duration_user_project(api, log_output):
    stream = log_output("text")
    response = api.get(
        "/resource_classes?name=VCPU",
        token="alice:proj-1",
        version="1.20",
        headers={"X-Roles": "admin"},
    )
    line = stream.getvalue().strip().splitlines()[-1]
    assert response.headers["openstack-request-id"] in line
    assert '"GET /resource_classes?name=VCPU" status: 200' in line
    assert "microversion: 1.20" in line
    assert "user: alice project: proj-1" in line
    assert " time: 0." in line


def test_json_line_has_every_field(api, log_output):
    stream = log_output("json")
    caller = "req-12345678-1234-1234-1234-123456789abc"
    response = api.get(
        "/resource_providers",
        token="bob:proj-2",
        version="1.14",
        headers={"X-OpenStack-Request-Id": caller, "X-Roles": "admin"},
    )
    record = json.loads(stream.getvalue().strip().splitlines()[-1])
    assert record["request_id"] == response.headers["openstack-request-id"]
    assert record["global_request_id"] == caller
    assert record["method"] == "GET"
    assert record["path"] == "/resource_providers"
    assert record["status"] == 200
    assert record["microversion"] == "1.14"
    assert record["user_id"] == "bob"
    assert record["project_id"] == "proj-2"
    assert record["duration_ms"] >= 0
    assert record["level"] == "INFO"
    assert record["logger"] == "placement.api"
    assert "time" in record


def test_refused_request_is_logged_without_user(api, log_output):
    stream = log_output("json")
    response = api.get("/resource_providers", token=None)
    assert response.status == 401
    record = json.loads(stream.getvalue().strip().splitlines()[-1])
    assert record["status"] == 401
    assert record["user_id"] is None


def test_log_format_setting_picks_the_console_formatter(settings):
    assert settings.LOGGING["handlers"]["console"]["formatter"] == settings.PLACEMENT_LOG_FORMAT
    assert "JsonFormatter" in settings.LOGGING["formatters"]["json"]["()"]
