"""Oversized requests get Placement's JSON errors: 413 for a body, 400 for query parameters."""

import json

import pytest
from django.core.exceptions import RequestDataTooBig

from placementsite.core.api.errors import exception_handler

pytestmark = pytest.mark.django_db

FIFTY_MB = 50 * 1024 * 1024


def _assert_placement_error(response, status):
    assert response.status == status, response
    assert response.headers["Content-Type"].startswith("application/json")
    (error,) = response.json["errors"]
    assert error["status"] == status
    assert error["request_id"].startswith("req-")
    return error


def test_fifty_megabyte_body_is_413(api):
    body = json.dumps({"name": "x" * FIFTY_MB})
    response = api.post("/resource_providers", raw=body)
    error = _assert_placement_error(response, 413)
    assert error["title"] == "Request Entity Too Large"


def test_django_refusing_a_body_in_a_view_is_413_not_500(rf):
    # The middleware refuses a declared length up front; Django's own refusal, raised where a
    # view reads the body, maps to the same error instead of a 500.
    request = rf.post("/resource_providers")
    request.request_id = "req-test"
    response = exception_handler(RequestDataTooBig("too big"), {"request": request})
    assert response.status_code == 413
    assert json.loads(response.content)["errors"][0]["title"] == "Request Entity Too Large"


def test_body_under_the_limit_is_served(api):
    response = api.post("/resource_providers", {"name": "n" * 200})
    assert response.status == 200


def test_fifteen_hundred_query_parameters_are_a_json_400(api):
    query = "&".join(f"p{n}=1" for n in range(1500))
    response = api.get(f"/resource_providers?{query}")
    error = _assert_placement_error(response, 400)
    assert "query parameters" in error["detail"]


def test_oversized_requests_are_refused_before_authentication(api):
    query = "&".join(f"p{n}=1" for n in range(1500))
    assert api.get(f"/resource_providers?{query}", token=None).status == 400
    response = api.post("/resource_providers", raw="x" * FIFTY_MB, token=None)
    assert response.status == 413


def test_project_api_answers_oversized_requests_in_its_json_format(api):
    query = "&".join(f"p{n}=1" for n in range(1500))
    response = api.get(f"/api/schema/?{query}", token=None)
    assert response.status == 400
    assert response.json["errors"][0]["status"] == 400
    response = api.post("/api/schema/", raw="x" * FIFTY_MB, token=None)
    assert response.status == 413
    assert response.json["errors"][0]["status"] == 413


def test_limits_come_from_the_environment():
    import os
    import subprocess
    import sys

    from django.conf import settings

    probe = (
        "from django.conf import settings; "
        "print(settings.DATA_UPLOAD_MAX_MEMORY_SIZE, settings.DATA_UPLOAD_MAX_NUMBER_FIELDS)"
    )
    env = {
        **os.environ,
        "PLACEMENT_MAX_REQUEST_BODY_BYTES": "10485760",
        "PLACEMENT_MAX_QUERY_PARAMETERS": "2000",
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", probe],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert result.stdout.strip().splitlines()[-1] == "10485760 2000", result.stderr
