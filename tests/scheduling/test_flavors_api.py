"""/api/flavors/ and every extra-spec form: validated on write (a 400 naming the key) and
meaning on a boot what it says."""

import uuid as uuidlib

import pytest

from tests.scheduling.scheduler_helpers import boot, make_flavor, make_host, usage


def _create(api, extra_specs, name="f1", **fields):
    body = {"name": name, "vcpus": 2, "ram": 1024, "disk": 10, "extra_specs": extra_specs}
    body.update(fields)
    return api.post("/api/flavors/", body)


def test_flavor_crud_list_filters_and_lookup_by_name(api):
    make_flavor(api, "m1.small", vcpus=1, ram=512)
    big = make_flavor(api, "m1.large", vcpus=8, ram=16384, disk=80, ephemeral=10, swap=1024)
    assert big["ephemeral"] == 10 and big["swap"] == 1024 and big["is_public"] is True

    listed = api.get("/api/flavors/?min_vcpus=4").json
    assert [f["name"] for f in listed["results"]] == ["m1.large"]
    assert api.get("/api/flavors/?ordering=-ram").json["results"][0]["name"] == "m1.large"
    assert api.get("/api/flavors/m1.small/").json["vcpus"] == 1
    assert api.get(f"/api/flavors/{big['id']}/").json["name"] == "m1.large"
    assert api.get("/api/flavors/nope/").status == 404

    assert api.delete("/api/flavors/m1.small/").status == 204
    assert api.get("/api/flavors/m1.small/").status == 404


def test_patch_merges_extra_specs_and_null_removes_a_key(api):
    flavor = make_flavor(api, "f", extra_specs={"trait:HW_CPU_X86_AVX2": "required"})
    response = api.request(
        "PATCH",
        f"/api/flavors/{flavor['id']}/",
        {"extra_specs": {"resources:VCPU": 4, "trait:HW_CPU_X86_AVX2": None}},
    )
    assert response.status == 200, response
    assert response.json["extra_specs"] == {"resources:VCPU": 4}


def test_patch_with_a_bad_key_changes_nothing(api):
    flavor = make_flavor(api, "f", extra_specs={"resources:VCPU": 4})
    response = api.request(
        "PATCH", f"/api/flavors/{flavor['id']}/", {"extra_specs": {"hw:bogus": "1"}}
    )
    assert response.status == 400
    assert api.get("/api/flavors/f/").json["extra_specs"] == {"resources:VCPU": 4}


def test_deleting_a_flavor_in_use_is_409(api):
    make_host(api, "cn1")
    make_flavor(api, "f")
    assert boot(api, "f").status == 201
    response = api.delete("/api/flavors/f/")
    assert response.status == 409
    assert response.error_code == "scheduler.flavor_in_use"


def test_duplicate_name_and_missing_fields_are_400(api):
    make_flavor(api, "f")
    assert _create(api, {}, name="f").status == 400
    response = api.post("/api/flavors/", {"name": "g"})
    assert response.status == 400
    assert {"vcpus", "ram"} <= set(response.error["fields"])


@pytest.mark.parametrize(
    ("extra_specs", "key"),
    [
        ({"resources:VCPU": "two"}, "resources:VCPU"),
        ({"resources:VCPU": -1}, "resources:VCPU"),
        ({"resources:vcpu": 1}, "resources:vcpu"),
        ({"resources1:CUSTOM_NOPE": 1}, "resources1:CUSTOM_NOPE"),
        ({"trait:HW_CPU_X86_AVX2": "maybe"}, "trait:HW_CPU_X86_AVX2"),
        ({"trait:CUSTOM_NEVER_MADE": "required"}, "trait:CUSTOM_NEVER_MADE"),
        ({"group_policy": "sometimes"}, "group_policy"),
        ({"member_of": "not-a-uuid"}, "member_of"),
        ({"hw:numa_nodes": 0}, "hw:numa_nodes"),
        ({"hw:numa_nodes": 3}, "hw:numa_nodes"),  # 2 vcpus cannot split over 3 nodes
        ({"hw:cpu_policy": "mixed"}, "hw:cpu_policy"),
        ({"hw:bogus": "1"}, "hw:bogus"),
        ({"hw:cpu_policy": "pinned"}, "hw:cpu_policy"),
        ({"resources:VCPU": {"a": 1}}, "resources:VCPU"),
    ],
)
def test_bad_extra_spec_is_400_naming_the_key(api, extra_specs, key):
    response = _create(api, extra_specs)
    assert response.status == 400, response
    assert response.error_code == "api.invalid"
    assert f"extra_specs.{key}" in response.error["fields"], response.error
    assert key in response.error["detail"]
    assert api.get("/api/flavors/").json["count"] == 0


def test_granular_traits_without_resources_are_400(api):
    response = _create(api, {"trait1:HW_CPU_X86_AVX2": "required"})
    assert response.status == 400
    assert "extra_specs.extra_specs" in response.error["fields"]


# --- what each form means on a boot --------------------------------------------


def _boot_one(api, flavor):
    response = boot(api, flavor)
    assert response.status == 201, response
    return response.json["servers"][0]


def test_resources_override_and_zero_drops_a_standard_amount(api):
    host = make_host(api, "cn1")
    make_flavor(api, "f", extra_specs={"resources:VCPU": 4, "resources:DISK_GB": 0})
    server = _boot_one(api, "f")
    assert server["allocations"] == {host: {"VCPU": 4, "MEMORY_MB": 2048}}


def test_ephemeral_and_swap_count_in_disk(api):
    host = make_host(api, "cn1")
    make_flavor(api, "f", disk=10, ephemeral=5, swap=1500)
    assert _boot_one(api, "f")["allocations"][host]["DISK_GB"] == 17  # 10 + 5 + ceil(1500/1024)


def test_custom_resource_lands_where_it_is(api):
    api.put("/resource_classes/CUSTOM_CU")
    make_host(api, "plain")
    rich = make_host(
        api, "rich", {"VCPU": 8, "MEMORY_MB": 16384, "DISK_GB": 100, "CUSTOM_CU": 1000}
    )
    make_flavor(api, "f", extra_specs={"resources:CUSTOM_CU": 100})
    server = _boot_one(api, "f")
    assert server["host_uuid"] == rich
    assert server["allocations"][rich]["CUSTOM_CU"] == 100


def test_granular_group_lands_on_a_child_provider(api):
    api.put("/resource_classes/CUSTOM_GPU")
    root = make_host(api, "cn1")
    gpu = make_host(api, "cn1-gpu", {"CUSTOM_GPU": 2}, parent=root)
    make_flavor(api, "f", extra_specs={"resources1:CUSTOM_GPU": 1})
    server = _boot_one(api, "f")
    assert server["host_uuid"] == root
    assert server["allocations"][gpu] == {"CUSTOM_GPU": 1}


def test_required_and_forbidden_traits(api):
    make_host(api, "plain")
    avx = make_host(api, "avx", traits=["HW_CPU_X86_AVX2"])
    make_flavor(api, "needs", extra_specs={"trait:HW_CPU_X86_AVX2": "required"})
    make_flavor(api, "avoids", extra_specs={"trait:HW_CPU_X86_AVX2": "forbidden"})
    for _ in range(3):
        assert _boot_one(api, "needs")["host_uuid"] == avx
        assert _boot_one(api, "avoids")["host"] == "plain"


def test_granular_trait_and_group_policy_isolate(api):
    api.put("/resource_classes/CUSTOM_VF")
    root = make_host(api, "cn1")
    fast = make_host(api, "nic-fast", {"CUSTOM_VF": 4}, parent=root, traits=["CUSTOM_FAST"])
    slow = make_host(api, "nic-slow", {"CUSTOM_VF": 4}, parent=root)
    make_flavor(
        api,
        "f",
        extra_specs={
            "resources1:CUSTOM_VF": 1,
            "trait1:CUSTOM_FAST": "required",
            "resources2:CUSTOM_VF": 1,
            "group_policy": "isolate",
        },
    )
    server = _boot_one(api, "f")
    assert server["allocations"][fast] == {"CUSTOM_VF": 1}
    assert server["allocations"][slow] == {"CUSTOM_VF": 1}


def test_member_of_an_aggregate(api):
    aggregate = str(uuidlib.uuid4())
    make_host(api, "outside")
    inside = make_host(api, "inside", aggregates=[aggregate])
    make_flavor(api, "f", extra_specs={"member_of": aggregate})
    for _ in range(3):
        assert _boot_one(api, "f")["host_uuid"] == inside
    make_flavor(api, "g", extra_specs={"member_of": f"!{aggregate}"})
    assert _boot_one(api, "g")["host"] == "outside"


def test_numa_nodes_split_cpu_and_memory_over_isolated_nodes(api):
    root = make_host(api, "cn1", {"DISK_GB": 100})
    cell = {"parent": root, "traits": ["HW_NUMA_ROOT"]}
    numa0 = make_host(api, "cn1-numa0", {"VCPU": 4, "MEMORY_MB": 4096}, **cell)
    numa1 = make_host(api, "cn1-numa1", {"VCPU": 4, "MEMORY_MB": 4096}, **cell)
    make_flavor(api, "f", vcpus=4, ram=2048, extra_specs={"hw:numa_nodes": 2})
    server = _boot_one(api, "f")
    assert server["allocations"][numa0] == {"VCPU": 2, "MEMORY_MB": 1024}
    assert server["allocations"][numa1] == {"VCPU": 2, "MEMORY_MB": 1024}
    assert server["allocations"][root] == {"DISK_GB": 10}


def test_dedicated_cpu_policy_asks_for_pcpu(api):
    host = make_host(api, "cn1", {"PCPU": 4, "MEMORY_MB": 4096, "DISK_GB": 100})
    make_host(api, "shared-only")
    make_flavor(api, "f", extra_specs={"hw:cpu_policy": "dedicated"})
    server = _boot_one(api, "f")
    assert server["host_uuid"] == host
    assert server["allocations"][host]["PCPU"] == 2
    assert usage(api, host)["PCPU"] == 2
