"""One scheduling model per pass: capacity is a simulated fill, explain places ``count``
instances, a multi-instance boot places all of them in one pass; all three agree with what
real boots place."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.scheduling.scheduler_helpers import boot, make_flavor, make_host

NUMA = {"vcpus": 8, "ram": 16384, "disk": 10, "extra_specs": {"hw:numa_nodes": "2"}}


def capacity(api, query):
    response = api.get(f"/api/capacity/?{query}")
    assert response.status == 200, response
    return response.json["total"], {h["name"]: h["fits"] for h in response.json["hosts"]}


def explain(api, flavor, count=1, **extra):
    body = {"name": "x", "flavor": flavor, "project_id": "p1", "user_id": "u1", "count": count}
    response = api.post("/api/scheduler/explain/", {**body, **extra})
    assert response.status == 200, response
    return response.json


@pytest.fixture
def numa_cloud(api):
    """Two NUMA hosts (two cells of 8 VCPU and 16 GB each) and a flat host of the same size."""
    for name in ("n1", "n2"):
        root = make_host(api, name, {"DISK_GB": 100})
        for cell in ("c0", "c1"):
            make_host(
                api,
                f"{name}_{cell}",
                {"VCPU": 8, "MEMORY_MB": 16384},
                parent=root,
                traits=["HW_NUMA_ROOT"],
            )
    make_host(api, "p1", {"VCPU": 16, "MEMORY_MB": 32768, "DISK_GB": 100})
    make_flavor(api, "numa.f", **NUMA)
    return api


def test_numa_capacity_is_what_filling_places(numa_cloud):
    api = numa_cloud
    assert capacity(api, "flavor=numa.f") == (4, {"n1": 2, "n2": 2})
    for _ in range(4):
        assert boot(api, "numa.f").status == 201
    refused = boot(api, "numa.f")
    assert refused.status == 409 and refused.error_code == "scheduler.no_valid_host"
    assert capacity(api, "flavor=numa.f") == (0, {})


def test_explain_places_count_instances_in_one_pass(numa_cloud):
    answer = explain(numa_cloud, "numa.f", count=5)
    assert answer["count"] == 5
    assert answer["placeable"] == 4
    assert sorted(answer["placements"]) == ["n1", "n1", "n2", "n2"]
    # A real boot of 5 fails on the fifth and leaves nothing; one of 4 places all of them.
    assert boot(numa_cloud, "numa.f", count=5).status == 409
    placed = boot(numa_cloud, "numa.f", count=4)
    assert placed.status == 201
    assert sorted(s["host"] for s in placed.json["servers"]) == sorted(answer["placements"])


def test_explain_funnel_counts_hosts_and_adds_up(numa_cloud):
    api = numa_cloud
    answer = explain(api, "numa.f", count=1)
    funnel = answer["funnel"]
    assert funnel[0] == {"step": "hosts", "passed": 3}
    resources = funnel[1]
    assert resources["step"] == "resources"
    assert resources["entered"] == 3 and resources["passed"] == 2
    assert resources["passed"] + resources["dropped_count"] == resources["entered"]
    assert [d["host"] for d in resources["dropped"]] == ["p1"]  # no NUMA cells
    entering = resources["passed"]
    for step in funnel[2:]:
        assert step["entered"] == entering
        assert step["passed"] + step["dropped_count"] == step["entered"]
        assert sum(step["reasons"].values()) == step["dropped_count"]
        entering = step["passed"]


def test_capacity_applies_the_scheduler_filters(api, settings):
    settings.PLACEMENT_SCHEDULER_FILTERS = "host_enabled,extended_resource:CUSTOM_CU:100"
    api.put("/resource_classes/CUSTOM_CU")
    make_host(api, "rich", {"VCPU": 8, "MEMORY_MB": 8192, "DISK_GB": 100, "CUSTOM_CU": 400})
    make_host(api, "poor", {"VCPU": 8, "MEMORY_MB": 8192, "DISK_GB": 100, "CUSTOM_CU": 50})
    make_flavor(api, "cu", vcpus=1, ram=1024, disk=1, extra_specs={"resources:CUSTOM_CU": "100"})
    # rich: 400 CU, each instance takes 100 and the filter wants 100 free before it: 4.
    assert capacity(api, "flavor=cu") == (4, {"rich": 4})
    for _ in range(4):
        assert boot(api, "cu").status == 201
    assert boot(api, "cu").status == 409


# The pass's reads are the statements before the claim's row lock, which SQLite does not take.
@pytest.mark.postgresql
def test_a_multi_instance_boot_reads_the_cloud_once(api):
    for index in range(4):
        make_host(api, f"cn{index}")
    make_flavor(api, "f", vcpus=1, ram=512, disk=1)
    boot(api, "f", name="warm")  # caches warm
    with CaptureQueriesContext(connection) as one:
        assert boot(api, "f", name="one").status == 201
    with CaptureQueriesContext(connection) as three:
        assert boot(api, "f", name="three", count=3).status == 201
    single = len(one.captured_queries)
    # The pass's reads once; each further instance costs its claim's writes only.
    claim = single - _reads(one)
    assert len(three.captured_queries) <= single + 2 * claim
    assert _reads(three) == _reads(one)


def _reads(context):
    """Statements before the first claim locks its providers: the request and the pass."""
    queries = [q["sql"] for q in context.captured_queries]
    return next(i for i, sql in enumerate(queries) if "FOR UPDATE" in sql)
