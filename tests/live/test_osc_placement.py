"""The real ``openstack`` CLI (osc-placement) against the live service."""

import uuid

import pytest

pytestmark = pytest.mark.live

AGG_A = "6f1d7a5c-0d7b-4c4e-9a55-0c9b0f4a1a01"
AGG_B = "6f1d7a5c-0d7b-4c4e-9a55-0c9b0f4a1a02"


def by_name(rows, key="name"):
    return {row[key]: row for row in rows}


def test_resource_provider_lifecycle(osc):
    rp_uuid = str(uuid.uuid4())
    created = osc("resource", "provider", "create", "--uuid", rp_uuid, "compute-live-1")
    assert created["uuid"] == rp_uuid
    assert created["name"] == "compute-live-1"
    assert created["generation"] == 0
    assert created["root_provider_uuid"] == rp_uuid

    listed = osc("resource", "provider", "list")
    assert by_name(listed)["compute-live-1"]["uuid"] == rp_uuid

    shown = osc("resource", "provider", "show", rp_uuid)
    assert shown["name"] == "compute-live-1"

    renamed = osc("resource", "provider", "set", "--name", "compute-live-renamed", rp_uuid)
    assert renamed["name"] == "compute-live-renamed"
    assert osc("resource", "provider", "show", rp_uuid)["name"] == "compute-live-renamed"

    assert osc("resource", "provider", "delete", rp_uuid, fmt=None) == ""
    assert osc("resource", "provider", "list") == []
    assert osc.fails("resource", "provider", "show", rp_uuid, fmt="json").returncode != 0


def test_child_provider_shows_its_parent(osc):
    parent = osc("resource", "provider", "create", "compute-live-parent")
    child = osc(
        "resource",
        "provider",
        "create",
        "--parent-provider",
        parent["uuid"],
        "compute-live-child",
    )
    assert child["parent_provider_uuid"] == parent["uuid"]
    assert child["root_provider_uuid"] == parent["uuid"]
    tree = osc("resource", "provider", "list", "--in-tree", parent["uuid"])
    assert sorted(row["name"] for row in tree) == ["compute-live-child", "compute-live-parent"]


def test_inventory_set_list_delete(osc):
    rp = osc("resource", "provider", "create", "compute-live-inv")
    rows = osc(
        "resource",
        "provider",
        "inventory",
        "set",
        rp["uuid"],
        "--resource",
        "VCPU=8",
        "--resource",
        "VCPU:allocation_ratio=4.0",
        "--resource",
        "MEMORY_MB=4096",
        "--resource",
        "MEMORY_MB:reserved=512",
    )
    inv = by_name(rows, "resource_class")
    assert inv["VCPU"]["total"] == 8
    assert inv["VCPU"]["allocation_ratio"] == 4.0
    assert inv["MEMORY_MB"]["reserved"] == 512
    assert inv["MEMORY_MB"]["max_unit"] == 2147483647

    listed = by_name(osc("resource", "provider", "inventory", "list", rp["uuid"]), "resource_class")
    assert set(listed) == {"VCPU", "MEMORY_MB"}
    assert listed["VCPU"]["total"] == 8

    osc(
        "resource",
        "provider",
        "inventory",
        "delete",
        rp["uuid"],
        "--resource-class",
        "MEMORY_MB",
        fmt=None,
    )
    listed = osc("resource", "provider", "inventory", "list", rp["uuid"])
    assert [row["resource_class"] for row in listed] == ["VCPU"]
    assert osc("resource", "provider", "show", rp["uuid"])["generation"] == 2


def test_inventory_set_with_reserved_above_total_is_refused(osc):
    rp = osc("resource", "provider", "create", "compute-live-bad-inv")
    failure = osc.fails(
        "resource",
        "provider",
        "inventory",
        "set",
        rp["uuid"],
        "--resource",
        "VCPU=4",
        "--resource",
        "VCPU:reserved=5",
        fmt="json",
    )
    assert "400" in failure.stderr or "reserved" in failure.stderr
    assert osc("resource", "provider", "inventory", "list", rp["uuid"]) == []


def test_resource_class_create_list_delete(osc):
    osc("resource", "class", "create", "CUSTOM_LIVE_FPGA", fmt=None)
    names = [row["name"] for row in osc("resource", "class", "list")]
    assert "CUSTOM_LIVE_FPGA" in names
    assert "VCPU" in names
    osc("resource", "class", "delete", "CUSTOM_LIVE_FPGA", fmt=None)
    names = [row["name"] for row in osc("resource", "class", "list")]
    assert "CUSTOM_LIVE_FPGA" not in names


def test_trait_create_list_delete(osc):
    osc("trait", "create", "CUSTOM_LIVE_GOLD", fmt=None)
    names = [row["name"] for row in osc("trait", "list", "--name", "startswith:CUSTOM_LIVE")]
    assert names == ["CUSTOM_LIVE_GOLD"]
    osc("trait", "delete", "CUSTOM_LIVE_GOLD", fmt=None)
    assert osc("trait", "list", "--name", "startswith:CUSTOM_LIVE") == []


def test_provider_trait_set_and_list(osc):
    rp = osc("resource", "provider", "create", "compute-live-traits")
    osc("trait", "create", "CUSTOM_LIVE_SSD", fmt=None)
    rows = osc(
        "resource",
        "provider",
        "trait",
        "set",
        rp["uuid"],
        "--trait",
        "HW_CPU_X86_AVX2",
        "--trait",
        "CUSTOM_LIVE_SSD",
    )
    assert sorted(row["name"] for row in rows) == ["CUSTOM_LIVE_SSD", "HW_CPU_X86_AVX2"]
    listed = osc("resource", "provider", "trait", "list", rp["uuid"])
    assert [row["name"] for row in listed] == ["HW_CPU_X86_AVX2", "CUSTOM_LIVE_SSD"]
    assert osc("resource", "provider", "show", rp["uuid"])["generation"] == 1


def test_provider_aggregate_set_and_list(osc):
    rp = osc("resource", "provider", "create", "compute-live-aggs")
    rows = osc(
        "resource",
        "provider",
        "aggregate",
        "set",
        rp["uuid"],
        "--aggregate",
        AGG_A,
        "--aggregate",
        AGG_B,
        "--generation",
        "0",
    )
    assert sorted(row["uuid"] for row in rows) == [AGG_A, AGG_B]
    listed = osc("resource", "provider", "aggregate", "list", rp["uuid"])
    assert sorted(row["uuid"] for row in listed) == [AGG_A, AGG_B]


def test_provider_aggregate_set_with_stale_generation_is_refused(osc):
    rp = osc("resource", "provider", "create", "compute-live-stale")
    failure = osc.fails(
        "resource",
        "provider",
        "aggregate",
        "set",
        rp["uuid"],
        "--aggregate",
        AGG_A,
        "--generation",
        "7",
        fmt="json",
    )
    assert "409" in failure.stderr or "generation" in failure.stderr.lower()
    assert osc("resource", "provider", "aggregate", "list", rp["uuid"]) == []
