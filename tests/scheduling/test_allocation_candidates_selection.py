"""GET /allocation_candidates: how usage, aggregates and trees are read (second performance round).

Each test pins one behaviour that the faster selection query and summaries must keep.
"""

import json
import uuid

from tests.factories import make_allocation, make_consumer, make_provider

AGGREGATE = str(uuid.UUID(int=11))


def get(client, query):
    return client.get(f"/allocation_candidates?{query}")


def candidate_providers(response):
    return [set(request["allocations"]) for request in response.json["allocation_requests"]]


def test_usage_of_the_same_class_leaves_too_little_room(api):
    full = make_provider("full", inventories={"VCPU": 4, "MEMORY_MB": 1024})
    make_allocation(full, make_consumer(), {"VCPU": 3})
    free = make_provider("free", inventories={"VCPU": 4, "MEMORY_MB": 1024})

    response = get(api, "resources=VCPU:2")

    assert candidate_providers(response) == [{str(free.uuid)}]


def test_usage_of_another_class_does_not_count_against_a_class(api):
    provider = make_provider("busy-memory", inventories={"VCPU": 4, "MEMORY_MB": 1024})
    make_allocation(provider, make_consumer(), {"MEMORY_MB": 1000})

    response = get(api, "resources=VCPU:4")

    assert candidate_providers(response) == [{str(provider.uuid)}]


def test_usage_summed_over_several_consumers(api):
    provider = make_provider("shared-out", inventories={"VCPU": 4})
    make_allocation(provider, make_consumer(), {"VCPU": 1})
    make_allocation(provider, make_consumer(), {"VCPU": 2})

    assert candidate_providers(get(api, "resources=VCPU:1")) == [{str(provider.uuid)}]
    assert get(api, "resources=VCPU:2").json["allocation_requests"] == []


def test_summary_used_is_the_sum_of_allocations(api):
    provider = make_provider("summed", inventories={"VCPU": 8})
    make_allocation(provider, make_consumer(), {"VCPU": 1})
    make_allocation(provider, make_consumer(), {"VCPU": 2})

    summary = get(api, "resources=VCPU:1").json["provider_summaries"][str(provider.uuid)]

    assert summary["resources"]["VCPU"] == {"capacity": 8, "used": 3}


def test_member_of_on_the_root_admits_its_child_providers(api):
    root = make_provider("agg-root", aggregates=[AGGREGATE])
    child = make_provider("agg-child", parent=root, inventories={"VCPU": 4})
    make_provider("other-root", inventories={"VCPU": 4})

    response = get(api, f"resources=VCPU:1&member_of={AGGREGATE}")

    assert candidate_providers(response) == [{str(child.uuid)}]


def test_member_of_on_the_provider_itself_admits_it(api):
    make_provider("plain", inventories={"VCPU": 4})
    member = make_provider("member", inventories={"VCPU": 4}, aggregates=[AGGREGATE])

    response = get(api, f"resources=VCPU:1&member_of={AGGREGATE}")

    assert candidate_providers(response) == [{str(member.uuid)}]


def test_forbidden_aggregate_on_the_root_excludes_its_child_providers(api):
    root = make_provider("forbidden-root", aggregates=[AGGREGATE])
    make_provider("forbidden-child", parent=root, inventories={"VCPU": 4})
    allowed = make_provider("allowed-root", inventories={"VCPU": 4})

    response = get(api, f"resources=VCPU:1&member_of=!{AGGREGATE}")

    assert candidate_providers(response) == [{str(allowed.uuid)}]


def test_same_subtree_with_a_sharing_provider_summarises_the_sharing_tree(api):
    storage = make_provider(
        "shared-disk",
        inventories={"DISK_GB": 1000},
        traits=["MISC_SHARES_VIA_AGGREGATE"],
        aggregates=[AGGREGATE],
    )
    host = make_provider("host", aggregates=[AGGREGATE])
    numa = make_provider("host-numa", parent=host, inventories={"VCPU": 4})
    make_provider("host-pf", parent=numa, inventories={"SRIOV_NET_VF": 8})

    response = get(
        api,
        "resources=DISK_GB:10&resources_CPU=VCPU:1&resources_NET=SRIOV_NET_VF:1"
        "&same_subtree=_CPU,_NET&group_policy=none",
    )

    assert response.status == 200
    assert len(response.json["allocation_requests"]) == 1
    assert str(storage.uuid) in response.json["allocation_requests"][0]["allocations"]
    assert set(response.json["provider_summaries"]) == {
        str(storage.uuid),
        str(host.uuid),
        str(numa.uuid),
        str(numa.children.get().uuid),
    }


def test_response_is_compact_json_with_its_content_type(api):
    make_provider("rendered", inventories={"VCPU": 4})

    response = get(api, "resources=VCPU:1")

    assert response.headers["Content-Type"] == "application/json"
    assert json.dumps(response.json, separators=(",", ":")).encode() == response.content


def test_invalid_query_keeps_the_schema_message(api_at):
    response = get(api_at("1.16"), "resources=VCPU:1&limit=0")

    assert response.status == 400
    assert "Invalid query string parameters" in response.error["detail"]


def test_a_repeated_request_reads_the_data_of_its_own_time(api):
    # The selection's SQL is built once per request shape: it must hold no data.
    provider = make_provider("repeated", inventories={"VCPU": 4})
    assert candidate_providers(get(api, "resources=VCPU:3")) == [{str(provider.uuid)}]

    make_allocation(provider, make_consumer(), {"VCPU": 2})

    assert get(api, "resources=VCPU:3").json["allocation_requests"] == []
    assert candidate_providers(get(api, "resources=VCPU:2")) == [{str(provider.uuid)}]


def test_a_custom_class_recreated_under_its_name_is_selected_by_its_new_id(api):
    assert api.put("/resource_classes/CUSTOM_GOLD").status == 201
    old = make_provider("old-gold", inventories={"CUSTOM_GOLD": 4})
    assert candidate_providers(get(api, "resources=CUSTOM_GOLD:1")) == [{str(old.uuid)}]
    assert api.delete(f"/resource_providers/{old.uuid}/inventories").status == 204
    assert api.delete("/resource_classes/CUSTOM_GOLD").status == 204

    assert api.put("/resource_classes/CUSTOM_GOLD").status == 201
    new = make_provider("new-gold", inventories={"CUSTOM_GOLD": 4})

    assert candidate_providers(get(api, "resources=CUSTOM_GOLD:1")) == [{str(new.uuid)}]
