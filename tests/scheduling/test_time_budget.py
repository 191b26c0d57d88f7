"""PLACEMENT_SCHEDULER_TIME_BUDGET: a scheduling request (boot, explain, capacity, move) past
its budget stops, releases what it claimed and answers a clear 503, not a worker timeout."""

import time

import pytest

from allocations.models import Allocation
from scheduling.models import Migration, Server
from scheduling.plugins import BaseFilter
from tests.scheduling.move_helpers import boot_one, resources_of, setup_hosts
from tests.scheduling.scheduler_helpers import boot

BODY = {"name": "x", "flavor": "m1.small", "project_id": "p1", "user_id": "u1"}


class SlowFilter(BaseFilter):
    """Takes 20 ms a host (a plugin calling out to something slow)."""

    def check(self, host, spec):
        time.sleep(0.02)
        return None


@pytest.fixture
def slow(settings):
    def make_slow():
        settings.PLACEMENT_SCHEDULER_FILTERS = f"{__name__}.SlowFilter"
        settings.PLACEMENT_SCHEDULER_TIME_BUDGET = 0.05

    return make_slow


def assert_budget_exceeded(response):
    assert response.status == 503, response
    assert response.error_code == "scheduler.time_budget_exceeded"
    assert "0.05 s" in response.error["detail"]


@pytest.fixture
def cloud(api):
    setup_hosts(api, names=[f"cn{i}" for i in range(8)])
    return api


def test_a_boot_past_its_budget_claims_nothing(cloud, slow):
    slow()
    assert_budget_exceeded(boot(cloud, "m1.small", count=3))
    assert Server.objects.count() == 0 and Allocation.objects.count() == 0


def test_explain_and_capacity_past_their_budget(cloud, slow):
    slow()
    assert_budget_exceeded(cloud.post("/api/scheduler/explain/", {**BODY, "count": 3}))
    assert_budget_exceeded(cloud.get("/api/capacity/?flavor=m1.small"))


def test_a_move_past_its_budget_keeps_the_server_where_it_was(cloud, slow):
    server = boot_one(cloud)
    before = resources_of(cloud, server["id"])
    slow()
    assert_budget_exceeded(cloud.post(f"/api/servers/{server['id']}/migrate/", {}))
    assert resources_of(cloud, server["id"]) == before
    assert Migration.objects.get().status == Migration.Status.ERROR


def test_within_the_budget_nothing_changes(cloud, settings):
    settings.PLACEMENT_SCHEDULER_FILTERS = f"{__name__}.SlowFilter"
    settings.PLACEMENT_SCHEDULER_TIME_BUDGET = 10
    assert boot(cloud, "m1.small", count=2).status == 201


def test_hint_lists_are_bounded(cloud):
    hints = {"ignore_hosts": [f"h{i}" for i in range(101)]}
    response = boot(cloud, "m1.small", scheduler_hints=hints)
    assert response.status == 400
    assert boot(cloud, "m1.small", scheduler_hints={"ignore_hosts": ["cn0"] * 100}).status == 201
