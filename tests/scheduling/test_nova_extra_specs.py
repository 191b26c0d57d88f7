"""Nova's flavor extra specs as Nova takes them: a corpus of real-world flavors imports
unchanged, each key's value is checked as Nova checks it, and only what changes placement is
translated (PCPU and VCPU, the hyperthreading trait, NUMA layouts)."""

import json
import re
from pathlib import Path

import pytest

from scheduling import nova_extra_specs
from tests.scheduling.scheduler_helpers import boot, make_flavor, make_host

CORPUS = json.loads((Path(__file__).parent / "data" / "nova_flavors.json").read_text())["flavors"]
CUSTOM = ("CUSTOM_NVIDIA_A100", "CUSTOM_PHYSNET_PUBLIC")


def _create(api, extra_specs, name="f", vcpus=4, ram=4096, disk=10):
    body = {"name": name, "vcpus": vcpus, "ram": ram, "disk": disk, "extra_specs": extra_specs}
    return api.post("/api/flavors/", body)


def test_the_corpus_uses_every_registered_key():
    keys = [key for flavor in CORPUS for key in flavor["extra_specs"]]
    unused = [
        s.pattern
        for s in nova_extra_specs.REGISTRY
        if not any(re.fullmatch(s.pattern, key) for key in keys)
    ]
    assert unused == []


def test_every_corpus_flavor_imports_unchanged(api):
    for trait in CUSTOM:
        api.put(f"/traits/{trait}")
    api.put("/resource_classes/CUSTOM_FPGA")
    for flavor in CORPUS:
        response = api.post("/api/flavors/", flavor)
        assert response.status == 201, (flavor["name"], response)
        assert response.json["extra_specs"] == flavor["extra_specs"]
        shown = api.get(f"/api/flavors/{flavor['name']}/").json
        assert shown["extra_specs"] == flavor["extra_specs"]
    assert api.get("/api/flavors/").json["count"] == len(CORPUS)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("hw:no_such_key", "1"),
        ("hw:mem_page_size", "huge"),
        ("hw:cpu_thread_policy", "sometimes"),
        ("hw:cpu_realtime", "maybe"),
        ("hw:serial_port_count", "-1"),
        ("hw:redirected_usb_ports", "16"),
        ("hw:numa_mem.0", "0"),
        ("hw:numa_cpus.0", "zero"),
        ("hw:tpm_version", "3.0"),
        ("hw_rng:allowed", "perhaps"),
        ("hw_rng:rate_bytes", "lots"),
        ("hw_rng:nope", "1"),
        ("hw_video:ram_max_mb", "-5"),
        ("quota:disk_read_bytes_sec", "fast"),
        ("quota:cpu_shares_level", "extreme"),
        ("quota:no_such_quota", "1"),
        ("os:secure_boot", "optional"),
        ("os:nope", "x"),
        ("pci_passthrough:alias", "a100"),
        ("pci_passthrough:other", "a:1"),
        ("accel:nope", "x"),
        ("capabilities:no_such_capability", "1"),
        ("vmware:nope", "1"),
        ("hide_hypervisor_id", "visible"),
        ("resources:VCPU", "-1"),
        ("resources1:vcpu", "1"),
        ("trait:HW_CPU_X86_AVX2", "preferred"),
    ],
)
def test_a_value_nova_refuses_or_an_unknown_key_in_its_namespace_is_400(api, key, value):
    response = _create(api, {key: value})
    assert response.status == 400, response
    assert f"extra_specs.{key}" in response.error["fields"], response.error
    assert key in response.error["detail"]
    assert api.get("/api/flavors/").json["count"] == 0


def test_keys_outside_novas_namespaces_are_kept(api):
    specs = {"custom_filter_tag": "blue", "acme:billing_code": "B-42"}
    response = _create(api, specs)
    assert response.status == 201, response
    assert response.json["extra_specs"] == specs


def test_kept_keys_do_not_change_placement(api):
    host = make_host(api, "cn1")
    make_flavor(
        api,
        "f",
        vcpus=2,
        ram=1024,
        disk=10,
        extra_specs={
            # hw:mem_page_size changes placement now (tests/scheduling/test_numa_placement.py)
            "quota:cpu_shares": "1024",
            "hw:cpu_thread_policy": "prefer",
            "os:secure_boot": "required",
        },
    )
    response = boot(api, "f")
    assert response.status == 201, response
    assert response.json["servers"][0]["allocations"] == {
        host: {"VCPU": 2, "MEMORY_MB": 1024, "DISK_GB": 10}
    }


def test_dedicated_cpus_with_isolate_thread_policy_forbid_hyperthreads(api):
    pcpus = {"PCPU": 8, "MEMORY_MB": 16384, "DISK_GB": 100}
    make_host(api, "smt", pcpus, traits=["HW_CPU_HYPERTHREADING"])
    plain = make_host(api, "plain", pcpus)
    make_flavor(
        api,
        "pinned",
        vcpus=4,
        ram=1024,
        disk=1,
        extra_specs={"hw:cpu_policy": "dedicated", "hw:cpu_thread_policy": "isolate"},
    )
    for _ in range(2):
        response = boot(api, "pinned")
        assert response.status == 201, response
        assert response.json["servers"][0]["allocations"] == {
            plain: {"PCPU": 4, "MEMORY_MB": 1024, "DISK_GB": 1}
        }
    assert boot(api, "pinned").status == 409


def test_require_thread_policy_needs_hyperthreads(api):
    pcpus = {"PCPU": 8, "MEMORY_MB": 16384, "DISK_GB": 100}
    smt = make_host(api, "smt", pcpus, traits=["HW_CPU_HYPERTHREADING"])
    make_host(api, "plain", pcpus)
    make_flavor(
        api,
        "pinned",
        vcpus=8,
        ram=1024,
        disk=1,
        extra_specs={"hw:cpu_policy": "dedicated", "hw:cpu_thread_policy": "require"},
    )
    response = boot(api, "pinned")
    assert response.status == 201, response
    assert response.json["servers"][0]["host_uuid"] == smt
    assert boot(api, "pinned").status == 409


def test_mixed_policy_asks_pcpu_for_the_dedicated_mask_and_vcpu_for_the_rest(api):
    host = make_host(api, "cn1", {"VCPU": 8, "PCPU": 8, "MEMORY_MB": 16384, "DISK_GB": 100})
    make_flavor(
        api,
        "mixed",
        vcpus=4,
        ram=1024,
        disk=1,
        extra_specs={"hw:cpu_policy": "mixed", "hw:cpu_dedicated_mask": "^0"},
    )
    response = boot(api, "mixed")
    assert response.status == 201, response
    assert response.json["servers"][0]["allocations"] == {
        host: {"PCPU": 3, "VCPU": 1, "MEMORY_MB": 1024, "DISK_GB": 1}
    }


@pytest.mark.parametrize(
    ("mask", "pinned"),
    [
        ("^0,1", 3),  # Nova reads it as 0-3,^0,1: every vCPU but 0, not vCPU 1 alone
        ("^0,^1", 2),
        ("1,^2-3", 1),  # no leading exclusion: the vCPUs named, minus the excluded
    ],
)
def test_a_dedicated_mask_starting_with_an_exclusion_starts_from_every_vcpu(api, mask, pinned):
    """Found by scripts/numa_differential.py: Nova pins {1, 2, 3} of a 4-vCPU flavor for
    ``^0,1``, the project pinned {1} alone (it asked one PCPU where Nova's Placement query
    asks three)."""
    host = make_host(api, "cn1", {"VCPU": 8, "PCPU": 8, "MEMORY_MB": 16384, "DISK_GB": 100})
    make_flavor(
        api,
        "mixed",
        vcpus=4,
        ram=1024,
        disk=1,
        extra_specs={"hw:cpu_policy": "mixed", "hw:cpu_dedicated_mask": mask},
    )
    response = boot(api, "mixed")
    assert response.status == 201, response
    assert response.json["servers"][0]["allocations"] == {
        host: {"PCPU": pinned, "VCPU": 4 - pinned, "MEMORY_MB": 1024, "DISK_GB": 1}
    }


@pytest.mark.parametrize(
    ("specs", "key"),
    [
        ({"hw:cpu_policy": "mixed"}, "hw:cpu_policy"),
        ({"hw:cpu_policy": "mixed", "hw:cpu_dedicated_mask": "0-3"}, "hw:cpu_dedicated_mask"),
        ({"hw:cpu_policy": "mixed", "hw:cpu_dedicated_mask": "7"}, "hw:cpu_dedicated_mask"),
        ({"hw:numa_cpus.0": "0-3", "hw:numa_mem.0": "4096"}, "hw:numa_cpus.0"),
        (
            {
                "hw:numa_nodes": "2",
                "hw:numa_cpus.0": "0",
                "hw:numa_cpus.1": "1-3",
                "hw:numa_mem.0": "1024",
                "hw:numa_mem.1": "1024",
            },
            "hw:numa_mem.0",
        ),
        (
            {
                "hw:numa_nodes": "2",
                "hw:numa_cpus.0": "0-1",
                "hw:numa_cpus.1": "1-3",
                "hw:numa_mem.0": "1024",
                "hw:numa_mem.1": "3072",
            },
            "hw:numa_cpus.1",
        ),
        (
            {
                "hw:numa_nodes": "2",
                "hw:numa_cpus.0": "0-3",
                "hw:numa_cpus.2": "1-3",
                "hw:numa_mem.0": "1024",
                "hw:numa_mem.1": "3072",
            },
            "hw:numa_cpus.2",
        ),
    ],
)
def test_placement_specs_nova_would_refuse_at_boot_are_400(api, specs, key):
    response = _create(api, specs)
    assert response.status == 400, response
    assert f"extra_specs.{key}" in response.error["fields"], response.error


def test_asymmetric_numa_layout_asks_each_node_for_its_share(api):
    root = make_host(api, "cn1", {"DISK_GB": 100})
    cells = [
        make_host(
            api,
            f"cn1_NUMA{i}",
            {"VCPU": 4, "MEMORY_MB": 4096},
            parent=root,
            traits=["HW_NUMA_ROOT"],
        )
        for i in range(2)
    ]
    make_flavor(
        api,
        "asym",
        vcpus=4,
        ram=4096,
        disk=1,
        extra_specs={
            "hw:numa_nodes": "2",
            "hw:numa_cpus.0": "0",
            "hw:numa_cpus.1": "1-3",
            "hw:numa_mem.0": "1024",
            "hw:numa_mem.1": "3072",
        },
    )
    response = boot(api, "asym")
    assert response.status == 201, response
    allocations = response.json["servers"][0]["allocations"]
    per_cell = sorted((allocations[c]["VCPU"], allocations[c]["MEMORY_MB"]) for c in cells)
    assert per_cell == [(1, 1024), (3, 3072)]
    assert allocations[root] == {"DISK_GB": 1}
