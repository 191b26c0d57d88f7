"""Explain groups each filter's refusals by reason, with a count and the hosts."""

import pytest

from tests.scheduling.scheduler_helpers import make_flavor, make_host

pytestmark = pytest.mark.django_db


def test_explain_counts_each_filters_refusals_by_reason(api):
    make_flavor(api, "f", vcpus=1, ram=512, disk=1)
    for name in ("a1", "a2", "a3", "b1"):
        make_host(api, name)
    body = {
        "name": "x",
        "flavor": "f",
        "project_id": "p",
        "user_id": "u",
        "scheduler_hints": {"ignore_hosts": ["a1", "a2", "a3"]},
    }
    response = api.post("/api/scheduler/explain/", body)
    assert response.status == 200, response
    step = next(s for s in response.json["filters"] if s["name"] == "ignore_hosts")
    assert step["dropped_by_reason"] == [
        {"reason": "is in ignore_hosts", "count": 3, "hosts": ["a1", "a2", "a3"]}
    ]
