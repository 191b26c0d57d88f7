"""GET /allocation_candidates: trees, sharing providers, filters and response shapes."""

import uuid

import pytest

from tests.factories import make_allocation, make_consumer, make_provider

SHARES = "MISC_SHARES_VIA_AGGREGATE"
AGG_SHARED = str(uuid.UUID(int=1))
AGG_OTHER = str(uuid.UUID(int=2))
COMPUTE = {"VCPU": 8, "MEMORY_MB": 2048, "DISK_GB": 500}
FLAVOR = "resources=VCPU:1,MEMORY_MB:512,DISK_GB:100"


def get(client, query):
    return client.get(f"/allocation_candidates?{query}")


def provider_sets(response):
    """Each allocation request as a set of (provider uuid, class, amount)."""
    found = []
    for request in response.json["allocation_requests"]:
        found.append(
            frozenset(
                (rp, rc, amount)
                for rp, alloc in request["allocations"].items()
                for rc, amount in alloc["resources"].items()
            )
        )
    return found


def uuids_used(response):
    return [frozenset(r["allocations"]) for r in response.json["allocation_requests"]]


@pytest.fixture
def cloud(db):
    """cn1 (in the shared aggregate), cn2, and shared storage ss shared with cn1."""
    cn1 = make_provider("cn1", inventories=COMPUTE, aggregates=[AGG_SHARED])
    cn2 = make_provider("cn2", inventories=COMPUTE, traits=["HW_CPU_X86_AVX2"])
    ss = make_provider(
        "ss", inventories={"DISK_GB": 2000}, traits=[SHARES], aggregates=[AGG_SHARED]
    )
    return {"cn1": str(cn1.uuid), "cn2": str(cn2.uuid), "ss": str(ss.uuid)}


@pytest.fixture
def numa_host(db):
    """A compute node with two NUMA children, each with an SR-IOV PF child.

    numa0 has VCPU 4, MEMORY_MB 1024 and pf0 (SRIOV_NET_VF 4, CUSTOM_PHYSNET_A);
    numa1 has the same and pf1 (SRIOV_NET_VF 4, CUSTOM_PHYSNET_B, HW_NIC_ACCEL_SSL).
    """
    cn = make_provider("cn", inventories={"DISK_GB": 500}, traits=["COMPUTE_VOLUME_MULTI_ATTACH"])
    numa0 = make_provider("numa0", parent=cn, inventories={"VCPU": 4, "MEMORY_MB": 1024})
    numa1 = make_provider(
        "numa1", parent=cn, inventories={"VCPU": 4, "MEMORY_MB": 1024}, traits=["HW_CPU_X86_AVX2"]
    )
    pf0 = make_provider(
        "pf0", parent=numa0, inventories={"SRIOV_NET_VF": 4}, traits=["CUSTOM_PHYSNET_A"]
    )
    pf1 = make_provider(
        "pf1",
        parent=numa1,
        inventories={"SRIOV_NET_VF": 4},
        traits=["CUSTOM_PHYSNET_B", "HW_NIC_ACCEL_SSL"],
    )
    return {
        name: str(p.uuid)
        for name, p in {"cn": cn, "numa0": numa0, "numa1": numa1, "pf0": pf0, "pf1": pf1}.items()
    }


# --- the common path --------------------------------------------------------


def test_candidates_combine_tree_and_sharing_provider(api, cloud):
    response = get(api, FLAVOR)
    assert response.status == 200
    assert sorted(map(sorted, uuids_used(response))) == sorted(
        [[cloud["cn1"]], sorted([cloud["cn1"], cloud["ss"]]), [cloud["cn2"]]]
    )


def test_sharing_provider_is_used_only_for_the_class_it_provides(api, cloud):
    response = get(api, FLAVOR)
    shared = [r for r in provider_sets(response) if any(rp == cloud["ss"] for rp, _, _ in r)]
    assert shared == [
        frozenset(
            {
                (cloud["cn1"], "VCPU", 1),
                (cloud["cn1"], "MEMORY_MB", 512),
                (cloud["ss"], "DISK_GB", 100),
            }
        )
    ]


def test_sharing_provider_alone_is_one_candidate(api, cloud):
    response = get(api, "resources=DISK_GB:1000")
    assert uuids_used(response) == [frozenset([cloud["ss"]])]
    assert set(response.json["provider_summaries"]) == {cloud["ss"]}


def test_sharing_provider_outside_any_aggregate_of_the_tree_is_not_used(api, cloud):
    make_provider("ss2", inventories={"DISK_GB": 2000}, traits=[SHARES], aggregates=[AGG_OTHER])
    response = get(api, FLAVOR)
    assert len(response.json["allocation_requests"]) == 3


def test_no_candidate_when_nothing_has_room(api, cloud):
    response = get(api, "resources=VCPU:100")
    assert response.status == 200
    assert response.json == {"allocation_requests": [], "provider_summaries": {}}


def test_allocations_count_against_capacity(api, cloud, db):
    from providers.models import ResourceProvider

    cn2 = ResourceProvider.objects.get(name="cn2")
    make_allocation(cn2, make_consumer(), {"VCPU": 6})
    response = get(api, "resources=VCPU:4")
    assert uuids_used(response) == [frozenset([cloud["cn1"]])]


def test_allocation_ratio_and_reserved_give_the_capacity(api, db):
    cn = make_provider(
        "cn", inventories={"VCPU": {"total": 8, "reserved": 2, "allocation_ratio": 4.0}}
    )
    assert len(get(api, "resources=VCPU:24").json["allocation_requests"]) == 1
    assert get(api, "resources=VCPU:25").json["allocation_requests"] == []
    summary = get(api, "resources=VCPU:1").json["provider_summaries"][str(cn.uuid)]
    assert summary["resources"]["VCPU"] == {"capacity": 24, "used": 0}


def test_max_unit_and_step_size_are_respected(api, db):
    make_provider("cn", inventories={"VCPU": {"total": 8, "max_unit": 4, "step_size": 2}})
    assert get(api, "resources=VCPU:6").json["allocation_requests"] == []
    assert get(api, "resources=VCPU:3").json["allocation_requests"] == []
    assert len(get(api, "resources=VCPU:4").json["allocation_requests"]) == 1


def test_summary_reports_used_per_class(api, cloud):
    from providers.models import ResourceProvider

    make_allocation(
        ResourceProvider.objects.get(name="cn1"), make_consumer(), {"VCPU": 3, "MEMORY_MB": 100}
    )
    summary = get(api, FLAVOR).json["provider_summaries"][cloud["cn1"]]
    assert summary["resources"]["VCPU"] == {"capacity": 8, "used": 3}
    assert summary["resources"]["MEMORY_MB"] == {"capacity": 2048, "used": 100}


def test_nested_resources_spread_over_the_tree(api, numa_host):
    response = get(api, "resources=VCPU:1,MEMORY_MB:512,DISK_GB:10")
    # DISK_GB from the root; VCPU and MEMORY_MB each from either NUMA node.
    assert len(response.json["allocation_requests"]) == 4
    for request in provider_sets(response):
        assert (numa_host["cn"], "DISK_GB", 10) in request


def test_one_class_is_never_split_over_two_providers(api, numa_host):
    assert get(api, "resources=VCPU:6").json["allocation_requests"] == []


def test_summaries_cover_the_whole_tree(api, numa_host):
    response = get(api, "resources=VCPU:1")
    assert set(response.json["provider_summaries"]) == set(numa_host.values())


# --- limit and settings -----------------------------------------------------


def test_limit_caps_the_allocation_requests(api, cloud):
    response = get(api, FLAVOR + "&limit=1")
    assert len(response.json["allocation_requests"]) == 1


def test_limit_trims_summaries_to_the_trees_returned(api, cloud):
    response = get(api, FLAVOR + "&limit=1")
    used = set().union(*uuids_used(response))
    assert set(response.json["provider_summaries"]) == used


def test_limit_must_be_a_positive_integer(api, cloud):
    response = get(api, FLAVOR + "&limit=0")
    assert response.status == 400
    assert "Invalid query string parameters" in response.error["detail"]


def test_limit_is_not_known_before_1_16(api_at, cloud):
    assert get(api_at("1.15"), FLAVOR + "&limit=1").status == 400
    assert get(api_at("1.16"), FLAVOR + "&limit=1").status == 200


def test_randomized_candidates_still_respect_limit(api, cloud, settings):
    settings.PLACEMENT_RANDOMIZE_ALLOCATION_CANDIDATES = True
    response = get(api, FLAVOR + "&limit=2")
    assert len(response.json["allocation_requests"]) == 2


def test_max_allocation_candidates_setting_caps_the_answer(api, cloud, settings):
    settings.PLACEMENT_MAX_ALLOCATION_CANDIDATES = 2
    assert len(get(api, FLAVOR).json["allocation_requests"]) == 2


@pytest.mark.parametrize("randomize", [False, True])
def test_negative_max_allocation_candidates_means_no_cap(api, cloud, settings, randomize):
    """As Placement's max_allocation_candidates = -1."""
    settings.PLACEMENT_RANDOMIZE_ALLOCATION_CANDIDATES = randomize
    settings.PLACEMENT_MAX_ALLOCATION_CANDIDATES = 1000
    every = len(get(api, FLAVOR).json["allocation_requests"])
    assert every > 2
    settings.PLACEMENT_MAX_ALLOCATION_CANDIDATES = -1
    assert len(get(api, FLAVOR).json["allocation_requests"]) == every
    assert len(get(api, FLAVOR + "&limit=2").json["allocation_requests"]) == 2


# --- traits -----------------------------------------------------------------


def test_required_trait_selects_providers(api, cloud):
    response = get(api, FLAVOR + "&required=HW_CPU_X86_AVX2")
    assert uuids_used(response) == [frozenset([cloud["cn2"]])]


def test_required_trait_on_child_provider_in_tree(api, numa_host):
    response = get(api, "resources=VCPU:1,SRIOV_NET_VF:1&required=HW_NIC_ACCEL_SSL")
    used = uuids_used(response)
    assert used and all(numa_host["pf1"] in u for u in used)


def test_forbidden_trait_in_tree_with_children(api, numa_host):
    """The reference answers 500 here on PostgreSQL; we exclude the provider."""
    response = get(api, "resources=VCPU:1,SRIOV_NET_VF:1&required=!HW_NIC_ACCEL_SSL")
    assert response.status == 200
    used = uuids_used(response)
    assert len(used) == 2
    assert all(numa_host["pf1"] not in u and numa_host["pf0"] in u for u in used)


def test_forbidden_trait_on_root_excludes_only_the_root(api, numa_host):
    response = get(api, "resources=VCPU:1&required=!COMPUTE_VOLUME_MULTI_ATTACH")
    assert len(response.json["allocation_requests"]) == 2
    assert (
        get(api, "resources=DISK_GB:1&required=!COMPUTE_VOLUME_MULTI_ATTACH").json[
            "allocation_requests"
        ]
        == []
    )


def test_forbidden_traits_need_1_22(api_at, cloud):
    response = get(api_at("1.21"), FLAVOR + "&required=!HW_CPU_X86_AVX2")
    assert response.status == 400
    assert get(api_at("1.22"), FLAVOR + "&required=!HW_CPU_X86_AVX2").status == 200


def test_any_of_traits_from_1_39(api, cloud, db):
    make_provider("cn3", inventories=COMPUTE, traits=["HW_CPU_X86_SSE42"])
    response = get(api, FLAVOR + "&required=in:HW_CPU_X86_AVX2,HW_CPU_X86_SSE42")
    assert len(response.json["allocation_requests"]) == 2
    assert cloud["cn1"] not in set().union(*uuids_used(response))


def test_any_of_traits_rejected_before_1_39(api_at, cloud):
    response = get(api_at("1.38"), FLAVOR + "&required=in:HW_CPU_X86_AVX2,HW_CPU_X86_SSE42")
    assert response.status == 400


def test_required_not_known_before_1_17(api_at, cloud):
    assert get(api_at("1.16"), FLAVOR + "&required=HW_CPU_X86_AVX2").status == 400


def test_summary_traits_from_1_17(api_at, cloud):
    old = get(api_at("1.16"), FLAVOR).json["provider_summaries"][cloud["cn2"]]
    new = get(api_at("1.17"), FLAVOR).json["provider_summaries"][cloud["cn2"]]
    assert "traits" not in old
    assert new["traits"] == ["HW_CPU_X86_AVX2"]


# --- aggregates -------------------------------------------------------------


def test_member_of_filters_trees(api, cloud):
    response = get(api, FLAVOR + f"&member_of={AGG_SHARED}")
    assert sorted(map(sorted, uuids_used(response))) == sorted(
        [[cloud["cn1"]], sorted([cloud["cn1"], cloud["ss"]])]
    )


def test_member_of_on_root_spans_the_tree(api, db):
    cn = make_provider("cn", aggregates=[AGG_SHARED])
    numa = make_provider("numa", parent=cn, inventories={"VCPU": 4})
    response = get(api, f"resources=VCPU:1&member_of={AGG_SHARED}")
    assert uuids_used(response) == [frozenset([str(numa.uuid)])]


def test_member_of_on_child_does_not_span_the_tree(api, db):
    cn = make_provider("cn", inventories={"MEMORY_MB": 1024})
    make_provider("numa", parent=cn, inventories={"VCPU": 4}, aggregates=[AGG_OTHER])
    response = get(api, f"resources=VCPU:1,MEMORY_MB:1&member_of={AGG_OTHER}")
    assert response.json["allocation_requests"] == []


def test_forbidden_aggregate_excludes_tree(api, cloud):
    response = get(api, FLAVOR + f"&member_of=!{AGG_SHARED}")
    assert uuids_used(response) == [frozenset([cloud["cn2"]])]


def test_forbidden_aggregate_needs_1_32(api_at, cloud):
    assert get(api_at("1.31"), FLAVOR + f"&member_of=!{AGG_SHARED}").status == 400


def test_member_of_not_known_before_1_21(api_at, cloud):
    assert get(api_at("1.20"), FLAVOR + f"&member_of={AGG_SHARED}").status == 400


# --- granular groups --------------------------------------------------------


def test_granular_groups_isolate_use_different_providers(api, numa_host):
    response = get(
        api,
        "resources=VCPU:1&resources1=SRIOV_NET_VF:1&required1=HW_NIC_ACCEL_SSL"
        "&resources2=SRIOV_NET_VF:1&group_policy=isolate",
    )
    for used in uuids_used(response):
        assert {numa_host["pf0"], numa_host["pf1"]} <= used
    assert len(response.json["allocation_requests"]) == 2


def test_granular_groups_policy_none_may_share_a_provider(api, numa_host):
    response = get(
        api,
        "resources=VCPU:1&resources1=SRIOV_NET_VF:1&required1=HW_NIC_ACCEL_SSL"
        "&resources2=SRIOV_NET_VF:1&group_policy=none",
    )
    combined = [r for r in provider_sets(response) if (numa_host["pf1"], "SRIOV_NET_VF", 2) in r]
    assert len(combined) == 2  # pf1 serves both groups, VCPU from either NUMA node
    assert len(response.json["allocation_requests"]) == 4


def test_groups_on_one_provider_must_fit_together(api, db):
    make_provider("cn", inventories={"VCPU": 6})
    response = get(api, "resources1=VCPU:4&resources2=VCPU:4&group_policy=none")
    assert response.json["allocation_requests"] == []


def test_granular_group_uses_sharing_provider(api, cloud):
    response = get(api, "resources=VCPU:1&resources1=DISK_GB:1000&group_policy=none")
    assert uuids_used(response) == [frozenset([cloud["cn1"], cloud["ss"]])]


def test_granular_member_of_does_not_span_the_tree(api, db):
    cn = make_provider("cn", aggregates=[AGG_SHARED])
    make_provider("numa", parent=cn, inventories={"VCPU": 4})
    response = get(api, f"resources1=VCPU:1&member_of1={AGG_SHARED}")
    assert response.json["allocation_requests"] == []


def test_group_policy_required_with_several_granular_groups(api, numa_host):
    response = get(api, "resources1=VCPU:1&resources2=SRIOV_NET_VF:1")
    assert response.status == 400
    assert '"group_policy" parameter is required' in response.error["detail"]


def test_granular_groups_not_known_before_1_25(api_at, numa_host):
    response = get(api_at("1.24"), "resources=VCPU:1&resources1=SRIOV_NET_VF:1")
    assert response.status == 400
    assert "resources1" in response.error["detail"]


def test_string_suffixes_from_1_33(api_at, numa_host):
    query = "resources_CPU=VCPU:1&resources_NET=SRIOV_NET_VF:1&group_policy=none"
    assert get(api_at("1.32"), query).status == 400
    assert len(get(api_at("1.33"), query).json["allocation_requests"]) == 4


def test_mappings_from_1_34(api_at, numa_host):
    query = "resources=DISK_GB:1&resources_NET=SRIOV_NET_VF:1&required_NET=CUSTOM_PHYSNET_A"
    old = get(api_at("1.33"), query).json["allocation_requests"][0]
    new = get(api_at("1.34"), query).json["allocation_requests"][0]
    assert "mappings" not in old
    assert new["mappings"] == {"": [numa_host["cn"]], "_NET": [numa_host["pf0"]]}


# --- same_subtree, root_required, in_tree -----------------------------------


def test_same_subtree_keeps_numa_and_pf_together(api, numa_host):
    response = get(
        api,
        "resources_CPU=VCPU:1&resources_NET=SRIOV_NET_VF:1&group_policy=none"
        "&same_subtree=_CPU,_NET",
    )
    pairs = {frozenset(r) for r in uuids_used(response)}
    assert pairs == {
        frozenset([numa_host["numa0"], numa_host["pf0"]]),
        frozenset([numa_host["numa1"], numa_host["pf1"]]),
    }


def test_same_subtree_with_resourceless_group(api, numa_host):
    response = get(
        api,
        "resources_CPU=VCPU:1&required_NIC=HW_NIC_ACCEL_SSL&group_policy=none"
        "&same_subtree=_CPU,_NIC",
    )
    requests = response.json["allocation_requests"]
    assert len(requests) == 1
    assert requests[0]["allocations"] == {numa_host["numa1"]: {"resources": {"VCPU": 1}}}
    assert requests[0]["mappings"]["_NIC"] == [numa_host["pf1"]]


def test_same_subtree_naming_unknown_suffix(api, numa_host):
    response = get(
        api,
        "resources_CPU=VCPU:1&resources_NET=SRIOV_NET_VF:1&group_policy=none&same_subtree=_CPU,_X",
    )
    assert response.status == 400
    assert "Real suffixes should be specified in `same_subtree`" in response.error["detail"]


def test_resourceless_group_outside_same_subtree(api, numa_host):
    response = get(api, "resources_CPU=VCPU:1&required_NIC=HW_NIC_ACCEL_SSL&group_policy=none")
    assert response.status == 400
    assert "Resourceless suffixed group" in response.error["detail"]


def test_same_subtree_not_known_before_1_36(api_at, numa_host):
    response = get(
        api_at("1.35"),
        "resources_CPU=VCPU:1&resources_NET=SRIOV_NET_VF:1&group_policy=none&same_subtree=_CPU,_NET",
    )
    assert response.status == 400


def test_root_required_checks_the_root(api, numa_host, cloud):
    response = get(api, "resources=VCPU:1&root_required=COMPUTE_VOLUME_MULTI_ATTACH")
    used = set().union(*uuids_used(response))
    assert used and used <= set(numa_host.values())


def test_root_required_forbidden(api, numa_host, cloud):
    response = get(api, "resources=VCPU:1&root_required=!COMPUTE_VOLUME_MULTI_ATTACH")
    used = set().union(*uuids_used(response))
    assert used == {cloud["cn1"], cloud["cn2"]}


def test_root_required_not_known_before_1_35(api_at, cloud):
    assert get(api_at("1.34"), "resources=VCPU:1&root_required=HW_CPU_X86_AVX2").status == 400


def test_in_tree_restricts_to_one_tree(api, numa_host, cloud):
    response = get(api, f"resources=VCPU:1&in_tree={numa_host['pf0']}")
    used = set().union(*uuids_used(response))
    assert used == {numa_host["numa0"], numa_host["numa1"]}


def test_unsuffixed_in_tree_does_not_apply_to_granular_group(api, cloud):
    response = get(api, f"resources=VCPU:1&in_tree={cloud['cn1']}&resources1=DISK_GB:600")
    assert uuids_used(response) == [frozenset([cloud["cn1"], cloud["ss"]])]


def test_in_tree_not_known_before_1_31(api_at, cloud):
    assert get(api_at("1.30"), f"resources=VCPU:1&in_tree={cloud['cn1']}").status == 400


# --- response shapes per microversion ---------------------------------------


def test_not_found_before_1_10(api_at, cloud):
    assert get(api_at("1.9"), FLAVOR).status == 404


def test_list_form_allocations_before_1_12(api_at, cloud):
    request = get(api_at("1.10"), "resources=VCPU:1&limit=1".replace("&limit=1", "")).json[
        "allocation_requests"
    ][0]
    assert isinstance(request["allocations"], list)
    assert set(request["allocations"][0]) == {"resource_provider", "resources"}


def test_dict_form_allocations_from_1_12(api_at, cloud):
    request = get(api_at("1.12"), "resources=VCPU:1").json["allocation_requests"][0]
    ((rp, value),) = request["allocations"].items()
    assert value == {"resources": {"VCPU": 1}}


def test_each_shape_of_hosts_alone_and_with_a_sharing_provider(api_at, cloud):
    """A host giving every amount (a flat host's candidate) and a host taking its disk from a
    sharing provider, in each shape of allocation_requests: in root order, each provider's
    classes in the order of their ids."""
    cn1, cn2, ss = cloud["cn1"], cloud["cn2"], cloud["ss"]
    host = [("VCPU", 1), ("MEMORY_MB", 512), ("DISK_GB", 100)]
    with_disk = [(cn1, [("VCPU", 1), ("MEMORY_MB", 512)]), (ss, [("DISK_GB", 100)])]
    expected = [[(cn1, host)], with_disk, [(cn2, host)]]
    listed = get(api_at("1.10"), FLAVOR).json["allocation_requests"]
    assert [
        [(a["resource_provider"]["uuid"], list(a["resources"].items())) for a in r["allocations"]]
        for r in listed
    ] == expected
    for version in ("1.12", "1.34"):
        found = get(api_at(version), FLAVOR).json["allocation_requests"]
        assert [
            [(uuid, list(value["resources"].items())) for uuid, value in r["allocations"].items()]
            for r in found
        ] == expected
    mapped = get(api_at("1.34"), FLAVOR).json["allocation_requests"]
    assert [list(r) for r in mapped] == [["allocations", "mappings"]] * 3
    assert [r["mappings"] for r in mapped] == [{"": [cn1]}, {"": [cn1, ss]}, {"": [cn2]}]


def test_a_sharing_provider_older_than_the_host_comes_first_in_its_allocations(api_at, db):
    """A host with the required trait taking its disk from a sharing provider of a lower id
    (allocations in provider id order, mappings in the order of the classes asked), one
    group or two, in each shape of allocation_requests."""
    ss = str(
        make_provider(
            "ss", inventories={"DISK_GB": 2000}, traits=[SHARES], aggregates=[AGG_SHARED]
        ).uuid
    )
    cn = str(
        make_provider(
            "cn", inventories=COMPUTE, traits=["HW_CPU_X86_AVX2"], aggregates=[AGG_SHARED]
        ).uuid
    )
    query = f"{FLAVOR}&required=HW_CPU_X86_AVX2&member_of={AGG_SHARED}"
    host = {cn: {"resources": {"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 100}}}
    shared = {ss: {"resources": {"DISK_GB": 100}}, cn: {"resources": {"VCPU": 1, "MEMORY_MB": 512}}}
    listed = get(api_at("1.10"), FLAVOR).json["allocation_requests"]
    assert [[a["resource_provider"]["uuid"] for a in r["allocations"]] for r in listed] == [
        [cn],
        [ss, cn],
    ]
    for version in ("1.21", "1.33"):
        found = get(api_at(version), query).json["allocation_requests"]
        assert found == [{"allocations": host}, {"allocations": shared}]
        assert [list(r["allocations"]) for r in found] == [[cn], [ss, cn]]
    found = get(api_at("1.39"), query).json["allocation_requests"]
    assert [r["mappings"] for r in found] == [{"": [cn]}, {"": [cn, ss]}]
    disk_first = get(api_at("1.39"), query.replace(FLAVOR, "resources=DISK_GB:100,VCPU:1"))
    assert [r["mappings"] for r in disk_first.json["allocation_requests"]] == [
        {"": [cn]},
        {"": [ss, cn]},
    ]
    groups = "resources_C=VCPU:1,MEMORY_MB:512&resources_D=DISK_GB:100&group_policy=none"
    found = get(api_at("1.39"), groups).json["allocation_requests"]
    assert [r["mappings"] for r in found] == [{"_C": [cn], "_D": [cn]}, {"_C": [cn], "_D": [ss]}]
    assert [list(r["allocations"]) for r in found] == [[cn], [ss, cn]]


def test_hosts_on_either_side_of_a_sharing_provider_list_their_allocations_in_id_order(api_at, db):
    """Hosts of lower and higher ids than their sharing provider, several of each, answered
    in one response: each host + sharing-provider candidate lists its allocations in
    provider id order and its mappings in the order of the classes asked."""

    def host(name):
        return str(
            make_provider(
                name, inventories=COMPUTE, traits=["HW_CPU_X86_AVX2"], aggregates=[AGG_SHARED]
            ).uuid
        )

    older = [host("cn1"), host("cn2")]
    ss = str(
        make_provider(
            "ss", inventories={"DISK_GB": 2000}, traits=[SHARES], aggregates=[AGG_SHARED]
        ).uuid
    )
    newer = [host("cn3"), host("cn4")]
    query = f"{FLAVOR}&required=HW_CPU_X86_AVX2&member_of={AGG_SHARED}"
    for version in ("1.21", "1.39"):
        found = get(api_at(version), query).json["allocation_requests"]
        shared = [list(r["allocations"]) for r in found if len(r["allocations"]) == 2]
        assert shared == [[cn, ss] for cn in older] + [[ss, cn] for cn in newer]
        for r in found:
            assert sum(a["resources"].get("DISK_GB", 0) for a in r["allocations"].values()) == 100
    found = get(api_at("1.39"), query).json["allocation_requests"]
    assert [r["mappings"] for r in found] == [
        mapping for cn in older + newer for mapping in ({"": [cn]}, {"": [cn, ss]})
    ]


def test_hosts_of_two_aggregates_take_the_disk_of_their_own_sharing_provider(api_at, db):
    """Two aggregates, each a host and a sharing provider of its own: each host is answered
    alone and with its aggregate's disk, never the other's."""
    aggregates = [str(uuid.UUID(int=2)), str(uuid.UUID(int=3))]
    pairs = []
    for n, aggregate in enumerate(aggregates):
        cn = make_provider(f"cn{n}", inventories=COMPUTE, aggregates=[aggregate])
        ss = make_provider(
            f"ss{n}", inventories={"DISK_GB": 2000}, traits=[SHARES], aggregates=[aggregate]
        )
        pairs.append((str(cn.uuid), str(ss.uuid)))
    found = get(api_at("1.39"), FLAVOR).json["allocation_requests"]
    assert [r["mappings"] for r in found] == [
        mapping for cn, ss in pairs for mapping in ({"": [cn]}, {"": [cn, ss]})
    ]
    assert [list(r["allocations"]) for r in found] == [
        keys for cn, ss in pairs for keys in ([cn], [cn, ss])
    ]


def test_two_groups_on_one_host_map_each_suffix_to_it(api_at, cloud):
    query = "resources_B=VCPU:1&resources_A=MEMORY_MB:512&group_policy=none"
    found = get(api_at("1.34"), query).json["allocation_requests"]
    assert [r["mappings"] for r in found] == [
        {"_A": [cloud["cn1"]], "_B": [cloud["cn1"]]},
        {"_A": [cloud["cn2"]], "_B": [cloud["cn2"]]},
    ]
    assert [list(r["mappings"]) for r in found] == [["_A", "_B"]] * 2
    assert [list(r["allocations"][cloud["cn1"]]["resources"].items()) for r in found[:1]] == [
        [("VCPU", 1), ("MEMORY_MB", 512)]
    ]


def test_summary_resources_all_inventories_from_1_27(api_at, cloud):
    old = get(api_at("1.26"), "resources=VCPU:1").json["provider_summaries"][cloud["cn1"]]
    new = get(api_at("1.27"), "resources=VCPU:1").json["provider_summaries"][cloud["cn1"]]
    assert set(old["resources"]) == {"VCPU"}
    assert set(new["resources"]) == {"VCPU", "MEMORY_MB", "DISK_GB"}


def test_summary_tree_uuids_from_1_29(api_at, numa_host):
    old = get(api_at("1.28"), "resources=VCPU:1").json["provider_summaries"][numa_host["numa0"]]
    new = get(api_at("1.29"), "resources=VCPU:1").json["provider_summaries"][numa_host["numa0"]]
    assert "parent_provider_uuid" not in old
    assert new["parent_provider_uuid"] == numa_host["cn"]
    assert new["root_provider_uuid"] == numa_host["cn"]


def test_last_modified_from_1_15(api_at, cloud):
    assert "Last-Modified" not in get(api_at("1.14"), "resources=VCPU:1").headers
    assert "Last-Modified" in get(api_at("1.15"), "resources=VCPU:1").headers


# --- invalid queries --------------------------------------------------------


def test_resources_required_before_1_25(api_at, cloud):
    response = get(api_at("1.24"), "limit=1")
    assert response.status == 400
    assert "'resources' is a required property" in response.error["detail"]


def test_no_group_with_resources(api, cloud):
    response = get(api, "limit=1")
    assert response.status == 400
    assert (
        "There must be at least one resources or resources[$S] parameter."
        in (response.error["detail"])
    )
    assert response.error_code == "placement.query.missing_value"


def test_unknown_resource_class(api, cloud):
    response = get(api, "resources=CUSTOM_NOPE:1")
    assert response.status == 400
    assert "Invalid resource class in resources parameter" in response.error["detail"]


def test_unknown_trait(api, cloud):
    response = get(api, "resources=VCPU:1&required=CUSTOM_NOPE")
    assert response.status == 400
    assert "No such trait(s): CUSTOM_NOPE" in response.error["detail"]


def test_badly_formed_resources(api, cloud):
    response = get(api, "resources=VCPU")
    assert response.status == 400
    assert "Badly formed resources parameter" in response.error["detail"]


def test_empty_resources(api, cloud):
    response = get(api, "resources=")
    assert response.status == 400
    assert "Got: empty string" in response.error["detail"]


def test_non_positive_amount(api, cloud):
    response = get(api, "resources=VCPU:0")
    assert response.status == 400
    assert "requires amount >= 1" in response.error["detail"]


def test_orphaned_required_before_1_36(api_at, cloud):
    response = get(api_at("1.35"), "resources=VCPU:1&required1=HW_CPU_X86_AVX2")
    assert response.status == 400
    assert "orphaned traits keys: required1" in response.error["detail"]


def test_orphaned_member_of(api_at, cloud):
    response = get(api_at("1.35"), f"resources=VCPU:1&member_of1={AGG_SHARED}")
    assert response.status == 400
    assert "orphaned member_of keys: member_of1" in response.error["detail"]


def test_unknown_parameter(api, cloud):
    response = get(api, "resources=VCPU:1&bogus=1")
    assert response.status == 400
    assert "Invalid query string parameters" in response.error["detail"]
    assert "'bogus'" in response.error["detail"]


def test_bad_group_policy(api, cloud):
    response = get(api, "resources1=VCPU:1&resources2=DISK_GB:1&group_policy=some")
    assert response.status == 400


def test_invalid_in_tree_uuid(api, cloud):
    assert get(api, "resources=VCPU:1&in_tree=not-a-uuid").status == 400


def test_unknown_in_tree_gives_no_candidates(api, cloud):
    response = get(api, f"resources=VCPU:1&in_tree={uuid.uuid4()}")
    assert response.status == 200
    assert response.json["allocation_requests"] == []


def test_bad_queries_are_placement_errors(api, cloud):
    response = get(api, "resources=VCPU:1,")
    assert response.status == 400
    assert response.error_code == "placement.undefined_code"


def test_policy_forbids_non_admin(api_at, cloud):
    response = get(api_at("latest", token="user"), "resources=VCPU:1")
    assert response.status == 403


# --- Placement's words for malformed requests ---------------------------------------------


def error_of(response):
    assert response.status == 400, response
    return response.error["detail"], response.error_code


def test_orphaned_keys_are_named_before_1_36(api_at, cloud):
    api = api_at("1.35")
    detail, _ = error_of(get(api, "required=HW_CPU_X86_AVX2&required1=HW_CPU_X86_AVX2"))
    assert "Found the following orphaned traits keys: required, required1" in detail
    detail, _ = error_of(get(api, f"member_of={AGG_SHARED}&member_of3={AGG_SHARED}"))
    assert "Found the following orphaned member_of keys: member_of, member_of3" in detail
    detail, _ = error_of(get(api, "group_policy=none"))
    assert "At least one request group (`resources` or `resources{$S}`) is required." in detail


def test_resourceless_group_outside_same_subtree_is_named(api, cloud):
    detail, code = error_of(
        get(api, "resources1=VCPU:1&required2=HW_CPU_X86_AVX2&group_policy=none")
    )
    assert (
        "Resourceless suffixed group request should be specified in `same_subtree` query "
        "param: bad group(s) - ['2']." in detail
    )
    assert code == "placement.query.bad_value"


def test_same_subtree_suffix_errors(api, cloud):
    base = "resources_COMPUTE=VCPU:1&resources_ACCEL=DISK_GB:1&group_policy=none"
    detail, code = error_of(get(api, f"{base}&same_subtree=COMPUTE,_ACCEL"))
    assert "Real suffixes should be specified in `same_subtree`: ['COMPUTE'] not found" in detail
    assert code == "placement.query.bad_value"
    detail, code = error_of(get(api, f"{base}&same_subtree=_COMPUTE,,_ACCEL"))
    assert "Empty string (unsuffixed group) can not be specified in `same_subtree`" in detail
    assert code == "placement.query.bad_value"


def test_root_required_once_and_without_conflicts(api, cloud):
    detail, code = error_of(
        get(api, "resources=VCPU:1&root_required=HW_CPU_X86_AVX2&root_required=!HW_NUMA_ROOT")
    )
    assert "Query parameter 'root_required' may be specified only once." in detail
    assert code == "placement.query.duplicate_key"
    detail, code = error_of(
        get(api, "resources=VCPU:1&root_required=HW_CPU_X86_AVX2,!HW_CPU_X86_AVX2")
    )
    assert "Conflicting required and forbidden traits found in root_required: HW_CPU_X86_AVX2" in (
        detail
    )
    assert code == "placement.query.bad_value"


def test_group_requiring_a_trait_it_forbids(api, cloud):
    detail, _ = error_of(get(api, "resources=VCPU:1&required=HW_CPU_X86_AVX2,!HW_CPU_X86_AVX2"))
    assert (
        "Conflicting required and forbidden traits found in the following traits keys: "
        "required: (HW_CPU_X86_AVX2)" in detail
    )


def test_in_tree_must_be_a_uuid(api, cloud):
    detail, _ = error_of(get(api, "resources=VCPU:1&in_tree=life-is-beautiful"))
    assert "Expected 'in_tree' parameter to be a format of uuid. Got: life-is-beautiful" in detail


def test_bad_suffix_names_placement_patterns(api_at, cloud):
    detail, _ = error_of(get(api_at("1.33"), "resources1@=VCPU:1"))
    assert "'resources1@' does not match any of the regexes" in detail
    assert "^member_of([a-zA-Z0-9_-]{1,64})?$" in detail


# --- before 1.29 a client does not know trees -------------------------------------------


def test_before_1_29_no_candidate_uses_two_providers_of_one_tree(api_at, numa_host):
    query = "resources=VCPU:1,SRIOV_NET_VF:1"
    assert len(get(api_at("1.29"), query).json["allocation_requests"]) > 0
    old = get(api_at("1.28"), query).json
    assert old == {"allocation_requests": [], "provider_summaries": {}}


def test_before_1_29_summaries_list_only_the_providers_used(api_at, numa_host):
    old = get(api_at("1.28"), "resources=SRIOV_NET_VF:1").json
    assert len(old["allocation_requests"]) == 2
    assert set(old["provider_summaries"]) == {numa_host["pf0"], numa_host["pf1"]}
    new = get(api_at("1.29"), "resources=SRIOV_NET_VF:1").json
    assert set(new["provider_summaries"]) == set(numa_host.values())


def test_before_1_29_flat_clouds_keep_every_summary_of_the_tree(api_at, cloud):
    # No provider has a parent: nothing is left out (Placement's has_trees).
    r = get(api_at("1.28"), "resources=VCPU:1")
    assert set(r.json["provider_summaries"]) == {cloud["cn1"], cloud["cn2"]}


def test_isolate_keeps_a_resourceless_group_off_the_other_groups_providers(api, numa_host):
    # pf1 alone has both SRIOV_NET_VF and HW_NIC_ACCEL_SSL: "none" lets the trait-only group
    # share it, "isolate" does not (as Placement).
    query = (
        "resources_VF=SRIOV_NET_VF:1&required_SSL=HW_NIC_ACCEL_SSL&same_subtree=_VF,_SSL"
        "&group_policy="
    )
    shared = get(api, query + "none").json["allocation_requests"]
    assert [r["mappings"] for r in shared] == [
        {"_VF": [numa_host["pf1"]], "_SSL": [numa_host["pf1"]]}
    ]
    assert get(api, query + "isolate").json["allocation_requests"] == []
