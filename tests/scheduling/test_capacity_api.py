"""GET /api/capacity/?flavor=: how many more instances fit, per host and in total."""

import uuid as uuidlib

from allocations.models import Allocation
from tests.scheduling.scheduler_helpers import boot, make_flavor, make_host


def _capacity(api, query):
    response = api.get(f"/api/capacity/?{query}")
    assert response.status == 200, response
    return response.json["total"], {h["name"]: h["fits"] for h in response.json["hosts"]}


def test_allocation_ratio_and_reserved(api):
    make_host(
        api,
        "cn1",
        {
            "VCPU": {"total": 8, "allocation_ratio": 4.0},  # 32 usable
            "MEMORY_MB": {"total": 16384, "reserved": 4096},  # 12288 usable
            "DISK_GB": 1000,
        },
    )
    make_flavor(api, "f", vcpus=2, ram=1024, disk=10)
    assert _capacity(api, "flavor=f") == (12, {"cn1": 12})  # memory bound
    make_flavor(api, "g", vcpus=4, ram=512, disk=10)
    assert _capacity(api, "flavor=g") == (8, {"cn1": 8})  # CPU bound at ratio 4


def test_min_max_unit_and_step_size(api):
    make_host(
        api, "min", {"VCPU": {"total": 64, "min_unit": 4}, "MEMORY_MB": 65536, "DISK_GB": 1000}
    )
    make_host(
        api, "max", {"VCPU": {"total": 64, "max_unit": 1}, "MEMORY_MB": 65536, "DISK_GB": 1000}
    )
    make_host(
        api, "step", {"VCPU": {"total": 64, "step_size": 3}, "MEMORY_MB": 65536, "DISK_GB": 1000}
    )
    make_host(api, "fine", {"VCPU": 6, "MEMORY_MB": 65536, "DISK_GB": 1000})
    make_flavor(api, "f", vcpus=2, ram=1024, disk=1)
    assert _capacity(api, "flavor=f") == (3, {"fine": 3})
    make_flavor(api, "six", vcpus=6, ram=1024, disk=1)
    assert _capacity(api, "flavor=six") == (21, {"min": 10, "step": 10, "fine": 1})


def test_usage_counts_and_a_boot_takes_one(api):
    make_host(api, "cn1")
    make_flavor(api, "f", vcpus=2, ram=2048, disk=10)
    assert _capacity(api, "flavor=f")[0] == 4
    assert boot(api, "f").status == 201
    assert _capacity(api, "flavor=f") == (3, {"cn1": 3})


def test_nested_granular_groups_count_per_provider(api):
    api.put("/resource_classes/CUSTOM_GPU")
    root = make_host(api, "cn1", {"VCPU": 64, "MEMORY_MB": 65536, "DISK_GB": 1000})
    make_host(api, "gpu0", {"CUSTOM_GPU": 3}, parent=root)
    make_host(api, "gpu1", {"CUSTOM_GPU": 2}, parent=root)
    make_flavor(api, "f", vcpus=1, ram=512, disk=1, extra_specs={"resources1:CUSTOM_GPU": 2})
    assert _capacity(api, "flavor=f") == (2, {"cn1": 2})  # one from each GPU provider


def test_numa_flavor_counts_over_nodes(api):
    root = make_host(api, "cn1", {"DISK_GB": 1000})
    cell = {"parent": root, "traits": ["HW_NUMA_ROOT"]}
    make_host(api, "numa0", {"VCPU": 8, "MEMORY_MB": 8192}, **cell)
    make_host(api, "numa1", {"VCPU": 8, "MEMORY_MB": 8192}, **cell)
    make_flavor(api, "f", vcpus=4, ram=2048, disk=1, extra_specs={"hw:numa_nodes": 2})
    total, hosts = _capacity(api, "flavor=f")
    assert hosts == {"cn1": 4} and total == 4


def test_sharing_provider_counts_once_over_the_hosts_it_serves(api):
    aggregate = str(uuidlib.uuid4())
    make_host(api, "cn1", {"VCPU": 32, "MEMORY_MB": 65536}, aggregates=[aggregate])
    make_host(api, "cn2", {"VCPU": 32, "MEMORY_MB": 65536}, aggregates=[aggregate])
    make_host(
        api,
        "shared-disk",
        {"DISK_GB": 100},
        traits=["MISC_SHARES_VIA_AGGREGATE"],
        aggregates=[aggregate],
    )
    make_flavor(api, "f", vcpus=1, ram=512, disk=20)
    total, hosts = _capacity(api, "flavor=f")
    # Each could take the whole pool, but the pool is one: filling places 5 over the two,
    # in the scheduler's order (the weighers spread them).
    assert total == 5 == sum(hosts.values())
    assert hosts == {"cn1": 3, "cn2": 2}


def test_aggregate_parameter_restricts_hosts(api):
    aggregate = str(uuidlib.uuid4())
    make_host(api, "in", aggregates=[aggregate])
    make_host(api, "out")
    make_flavor(api, "f", vcpus=2, ram=2048, disk=10)
    assert _capacity(api, "flavor=f")[0] == 8
    assert _capacity(api, f"flavor=f&aggregate={aggregate}") == (4, {"in": 4})


def test_required_traits_and_unknown_flavor(api):
    make_host(api, "plain")
    make_host(api, "avx", traits=["HW_CPU_X86_AVX2"])
    make_flavor(
        api, "f", vcpus=2, ram=2048, disk=10, extra_specs={"trait:HW_CPU_X86_AVX2": "required"}
    )
    assert _capacity(api, "flavor=f") == (4, {"avx": 4})
    response = api.get("/api/capacity/?flavor=nope")
    assert response.status == 400 and "flavor" in response.error["fields"]
    assert api.get("/api/capacity/").status == 400
    assert api.get("/api/capacity/?flavor=f&aggregate=zzz").status == 400


def test_capacity_claims_nothing(api):
    make_host(api, "cn1")
    make_flavor(api, "f", vcpus=2, ram=2048, disk=10)
    _capacity(api, "flavor=f")
    assert Allocation.objects.count() == 0


def test_a_flavor_whose_class_was_deleted_since_is_a_400_not_a_500(api):
    api.put("/resource_classes/CUSTOM_GONE")
    make_host(api, "cn1")
    make_flavor(api, "f", vcpus=1, ram=512, disk=1, extra_specs={"resources:CUSTOM_GONE": 1})
    assert api.delete("/resource_classes/CUSTOM_GONE").status == 204
    response = api.get("/api/capacity/?flavor=f")
    assert response.status == 400
    assert response.error_code == "scheduler.invalid_flavor"
    assert boot(api, "f").error_code == "scheduler.invalid_flavor"
    body = {"name": "x", "flavor": "f", "project_id": "p", "user_id": "u"}
    assert api.post("/api/scheduler/explain/", body).status == 400


def test_counts_are_integers_once_something_is_allocated(api):
    # PostgreSQL sums a bigint into a numeric: a usage read that forgets it answers 3.0.
    make_host(api, "cn1")
    make_flavor(api, "f", vcpus=2, ram=2048, disk=10)
    assert boot(api, "f").status == 201
    body = api.get("/api/capacity/?flavor=f").json
    assert type(body["total"]) is int
    assert [type(host["fits"]) for host in body["hosts"]] == [int]


def test_a_count_cut_short_by_the_engines_budget_says_so(api, settings):
    """The engine's work budget stops its read: the figures are then lower bounds, and the
    answer says so instead of undercounting silently."""
    for i in range(5):
        make_host(api, f"cn{i}")
    make_flavor(api, "f", vcpus=2, ram=2048, disk=10)
    whole = api.get("/api/capacity/?flavor=f").json
    assert (whole["total"], whole["complete"], whole["incomplete_reason"]) == (20, True, None)

    settings.PLACEMENT_ALLOCATION_CANDIDATES_MAX_EXAMINED = 2
    cut = api.get("/api/capacity/?flavor=f")
    assert cut.status == 200, cut
    assert cut.json["complete"] is False
    assert cut.json["incomplete_reason"] == "2 combinations examined"
    assert 0 < cut.json["total"] < 20


def test_the_answer_is_the_standard_renderers_bytes(api):
    # Capacity's answer is encoded by orjson (LargeAnswerRenderer): the same bytes as DRF's
    # JSONRenderer, line separators in a name escaped as it escapes them, and an indent
    # asked in the Accept header honoured as it honours it.
    from rest_framework.renderers import JSONRenderer

    make_host(api, "cn\u2028one\u2029é", {"VCPU": 8, "MEMORY_MB": 8192, "DISK_GB": 100})
    make_host(api, "cn2", {"VCPU": 4, "MEMORY_MB": 8192, "DISK_GB": 100})
    make_flavor(api, "f", vcpus=2, ram=1024, disk=10)
    response = api.get("/api/capacity/?flavor=f")
    assert response.status == 200, response
    assert response.json["total"] == 6
    assert response.json["hosts"][0]["name"] == "cn\u2028one\u2029é"
    assert response.content == JSONRenderer().render(response.json)
    assert b"\\u2028" in response.content and "\u2028".encode() not in response.content

    indented = api.get("/api/capacity/?flavor=f", headers={"Accept": "application/json; indent=2"})
    assert indented.status == 200, indented
    assert indented.content == JSONRenderer().render(indented.json, "application/json; indent=2")
    assert b'\n  "flavor"' in indented.content
