"""PLACEMENT_SCHEDULER_MAX_PLACEMENT_RESULTS through HTTP: a boot's and a move's pass judge
the first candidates only (the first hosts by id, as Nova's max_placement_results), plan
again over every host rather than answer a false no valid host, and capacity and explain
keep judging every host."""

import pytest
from django.test import override_settings

from scheduling.selectors import scheduler
from tests.scheduling.move_helpers import boot_one
from tests.scheduling.scheduler_helpers import boot, make_flavor, make_host

pytestmark = pytest.mark.django_db

UNBOUNDED = override_settings(PLACEMENT_SCHEDULER_MAX_PLACEMENT_RESULTS=0)


def _bound(n):
    return override_settings(PLACEMENT_SCHEDULER_MAX_PLACEMENT_RESULTS=n)


@pytest.fixture
def five_hosts(api):
    """h5..h1 made in that order: the first hosts by id sort last by name, so a pass over
    every host picks h1 on a tie and one over the first two picks h4."""
    hosts = {name: make_host(api, name) for name in ("h5", "h4", "h3", "h2", "h1")}
    make_flavor(api, "m1.small", vcpus=2, ram=1024, disk=10)
    return hosts


@pytest.fixture
def reads(monkeypatch):
    """``[(hosts the engine answered, whether its bound cut the read)]`` of each pass."""
    seen = []
    original = scheduler.candidates_for

    def spy(**kwargs):
        found = original(**kwargs)
        seen.append((len(found.roots()), found.limited))
        return found

    monkeypatch.setattr(scheduler, "candidates_for", spy)
    return seen


def _hosts(response):
    assert response.status == 201, response
    return [server["host"] for server in response.json["servers"]]


def test_a_boot_judges_the_first_hosts_only(api, five_hosts, reads):
    with _bound(2):
        response = boot(api)
    assert _hosts(response) == ["h4"]
    alternates = response.json["servers"][0]["alternates"]
    assert [a["host"] for a in alternates] == ["h5"]
    assert reads == [(2, True)]
    with UNBOUNDED:
        assert _hosts(boot(api)) == ["h1"]
    assert reads[-1] == (5, False)


def test_the_default_bound_is_novas(settings):
    assert settings.PLACEMENT_SCHEDULER_MAX_PLACEMENT_RESULTS == 1000


def test_a_filter_refusing_the_first_hosts_plans_again_over_every_host(api, five_hosts, reads):
    group = api.post("/api/server-groups/", {"name": "g", "policy": "anti-affinity"}).json
    hint = {"scheduler_hints": {"group": group["id"]}}
    with _bound(1):
        assert _hosts(boot(api, name="a", **hint)) == ["h5"]
        # h5 is the only host of the bounded pass and holds a member: every other host
        # is judged before answering.
        assert _hosts(boot(api, name="b", **hint)) == ["h1"]
        assert reads[-2:] == [(1, True), (5, False)]
        second = _hosts(boot(api, name="c", count=3, **hint))
    assert sorted(second) == ["h2", "h3", "h4"]


def test_no_valid_host_explains_every_host(api, five_hosts):
    with _bound(1):
        response = boot(api, scheduler_hints={"ignore_hosts": list(five_hosts)})
    assert response.status == 409, response
    assert response.error_code == "scheduler.no_valid_host"
    assert response.error["explain"]["candidate_hosts"] == 5


def test_more_instances_than_the_bound(api, five_hosts, reads):
    with _bound(2):
        # Each host takes four: the two hosts of the bounded pass take eight.
        assert sorted(_hosts(boot(api, name="few", count=3))) == ["h4", "h4", "h5"]
        assert reads[-1] == (2, True)
        placed = _hosts(boot(api, name="many", count=10))
    assert len(placed) == 10
    assert reads[-2:] == [(2, True), (5, False)]
    # The bounded pass had room for five: the plan made again spreads over every host.
    assert {"h1", "h2", "h3"} <= set(placed)


def test_a_move_off_the_only_host_of_the_bounded_pass(api, five_hosts):
    with _bound(1):
        server = boot_one(api)
        assert server["host"] == "h5"
        response = api.post(f"/api/servers/{server['id']}/migrate/", {})
    assert response.status == 201, response
    assert response.json["migration"]["dest_host"] == "h1"


def _capacity_and_explain(api):
    capacity = api.get("/api/capacity/?flavor=m1.small")
    body = {"name": "x", "flavor": "m1.small", "project_id": "p", "user_id": "u", "count": 7}
    explained = api.post("/api/scheduler/explain/", body)
    assert capacity.status == 200 and explained.status == 200, (capacity, explained)
    return capacity.json, explained.json


def test_capacity_and_explain_judge_every_host(api, five_hosts):
    boot_one(api)
    with UNBOUNDED:
        unbounded = _capacity_and_explain(api)
    with _bound(1):
        bounded = _capacity_and_explain(api)
    assert bounded == unbounded
    capacity, explained = bounded
    assert explained["candidate_hosts"] == 5 and explained["placeable"] == 7


def test_a_target_host_past_the_bound_is_read_alone(api, five_hosts, reads):
    # h1 is the last host by id: a bounded read of the first trees would not hold it.
    with _bound(1):
        assert _hosts(boot(api, name="a", scheduler_hints={"target_host": "h1"})) == ["h1"]
        by_uuid = {"target_host": five_hosts["h1"]}  # make_host gives the uuid
        assert _hosts(boot(api, name="b", scheduler_hints=by_uuid)) == ["h1"]
    # Its tree alone was read (the others left out: ``limited``), and it took the boot
    # without a plan made again over every host.
    assert reads == [(1, True), (1, True)]


def test_a_full_target_host_is_no_valid_host_explained_over_every_host(api, five_hosts, reads):
    with _bound(1):
        # h1 takes four of m1.small (see test_more_instances_than_the_bound).
        assert (
            _hosts(boot(api, name="four", count=4, scheduler_hints={"target_host": "h1"}))
            == ["h1"] * 4
        )
        response = boot(api, name="fifth", scheduler_hints={"target_host": "h1"})
    assert response.status == 409, response
    assert response.error_code == "scheduler.no_valid_host"
    # The target's tree alone, then every host, so that the funnel shows the filter's part.
    assert reads[-2:] == [(0, True), (4, False)]
    explained = response.error["explain"]
    assert explained["candidate_hosts"] == 4
    target_filter = [f for f in explained["filters"] if f["dropped_count"]]
    assert target_filter and target_filter[0]["passed"] == 0


def test_a_move_to_a_target_host_past_the_bound(api, five_hosts, reads):
    with _bound(1):
        server = boot_one(api)
        assert server["host"] == "h5"
        response = api.post(f"/api/servers/{server['id']}/migrate/", {"host": "h2"})
    assert response.status == 201, response
    assert response.json["migration"]["dest_host"] == "h2"
    assert reads[-1] == (1, True)
