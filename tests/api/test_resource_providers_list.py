"""GET /resource_providers: response shape and every filter, at each microversion boundary."""

import datetime as dt
from email.utils import parsedate_to_datetime

import pytest

from providers.models import ResourceProvider
from tests.conftest import new_uuid
from tests.factories import make_allocation, make_consumer, make_provider, trait

pytestmark = pytest.mark.django_db


def names(response):
    assert response.status == 200, response
    return sorted(p["name"] for p in response.json["resource_providers"])


# --- shape ------------------------------------------------------------------


def test_empty_list(api):
    r = api.get("/resource_providers")
    assert r.status == 200
    assert r.json == {"resource_providers": []}


def test_list_at_1_0_has_no_tree_fields(api_at):
    p = make_provider("cn1")
    r = api_at("1.0").get("/resource_providers")
    assert r.json["resource_providers"] == [
        {
            "uuid": str(p.uuid),
            "name": "cn1",
            "generation": 0,
            "links": [
                {"rel": "self", "href": f"/resource_providers/{p.uuid}"},
                {"rel": "inventories", "href": f"/resource_providers/{p.uuid}/inventories"},
                {"rel": "usages", "href": f"/resource_providers/{p.uuid}/usages"},
            ],
        }
    ]


def test_list_latest_has_every_link_and_tree_fields(api):
    root = make_provider("root")
    child = make_provider("child", parent=root)
    listed = {p["name"]: p for p in api.get("/resource_providers").json["resource_providers"]}
    assert [link["rel"] for link in listed["child"]["links"]] == [
        "self",
        "inventories",
        "usages",
        "aggregates",
        "traits",
        "allocations",
    ]
    assert listed["child"]["parent_provider_uuid"] == str(root.uuid)
    assert listed["child"]["root_provider_uuid"] == str(root.uuid)
    assert listed["root"]["parent_provider_uuid"] is None
    assert child.uuid


@pytest.mark.parametrize("version", ["1.0", "1.1", "1.6", "1.11", "1.14", "1.39"])
def test_each_listed_body_is_the_providers_own_body(api_at, version):
    """The listing writes its bodies its own way (for speed): each must be, key for key and
    in order, what GET /resource_providers/{uuid} answers, names needing escapes included."""
    root = make_provider('r\u00f6ot "quoted" \\ back')
    make_provider("child", parent=root)
    client = api_at(version)
    listed = client.get("/resource_providers").json["resource_providers"]
    assert len(listed) == 2
    for body in listed:
        own = client.get(f"/resource_providers/{body['uuid']}").json
        assert list(body.items()) == list(own.items())


def test_list_last_modified_from_1_15(api_at):
    make_provider("cn1")
    assert "Last-Modified" not in api_at("1.14").get("/resource_providers").headers
    r = api_at("1.15").get("/resource_providers")
    assert "Last-Modified" in r.headers
    assert r.headers["Cache-Control"] == "no-cache"


def test_list_last_modified_is_the_newest_listed_change(api):
    """The newest of the listed providers' changes (their creation when never updated), to the
    second below; an empty listing answers now."""
    when = dt.datetime(2021, 6, 1, 12, 34, 56, 999999, tzinfo=dt.UTC)
    older = make_provider("older", inventories={"VCPU": 4})
    newer = make_provider("newer", inventories={"VCPU": 4})
    never_updated = make_provider("never-updated")
    ResourceProvider.objects.filter(pk=older.pk).update(updated_at=when - dt.timedelta(days=1))
    ResourceProvider.objects.filter(pk=newer.pk).update(updated_at=when)
    ResourceProvider.objects.filter(pk=never_updated.pk).update(
        created_at=when + dt.timedelta(hours=1), updated_at=None
    )
    assert api.get("/resource_providers").headers["Last-Modified"] == (
        "Tue, 01 Jun 2021 13:34:56 GMT"
    )
    listed = api.get("/resource_providers?resources=VCPU:1")
    assert names(listed) == ["newer", "older"]
    assert listed.headers["Last-Modified"] == "Tue, 01 Jun 2021 12:34:56 GMT"
    before = dt.datetime.now(dt.UTC).replace(microsecond=0)
    empty = api.get("/resource_providers?resources=VCPU:100")
    assert names(empty) == []
    assert parsedate_to_datetime(empty.headers["Last-Modified"]) >= before


def test_unknown_query_parameter_is_400(api):
    r = api.get("/resource_providers?colour=blue")
    assert r.status == 400
    assert "Invalid query string parameters" in r.error["detail"]
    assert "'colour' was unexpected" in r.error["detail"]


# --- name and uuid ----------------------------------------------------------


def test_filter_by_name(api_at):
    make_provider("cn1")
    make_provider("cn2")
    assert names(api_at("1.0").get("/resource_providers?name=cn2")) == ["cn2"]


def test_filter_by_unicode_name(api):
    make_provider("\u2603 snow")
    assert names(api.get("/resource_providers?name=%E2%98%83%20snow")) == ["\u2603 snow"]


def test_filter_by_uuid(api_at):
    p = make_provider("cn1")
    make_provider("cn2")
    assert names(api_at("1.0").get(f"/resource_providers?uuid={p.uuid}")) == ["cn1"]


def test_filter_by_malformed_uuid_is_400(api):
    r = api.get("/resource_providers?uuid=not-a-uuid")
    assert r.status == 400
    assert "Invalid query string parameters" in r.error["detail"]


def test_percent_encoded_non_utf8_name_is_not_a_500(api):
    make_provider("cn1")
    r = api.get("/resource_providers?name=%ff%fe")
    assert r.status in (200, 400)
    if r.status == 200:
        assert r.json["resource_providers"] == []


def test_nul_in_query_is_400(api):
    assert api.get("/resource_providers?name=a%00b").status == 400


# --- member_of --------------------------------------------------------------


def test_member_of_is_unknown_before_1_3(api_at):
    r = api_at("1.2").get(f"/resource_providers?member_of={new_uuid()}")
    assert r.status == 400
    assert "'member_of' was unexpected" in r.error["detail"]


def test_member_of_one_aggregate_from_1_3(api_at):
    agg = new_uuid()
    make_provider("in", aggregates=[agg])
    make_provider("out", aggregates=[new_uuid()])
    assert names(api_at("1.3").get(f"/resource_providers?member_of={agg}")) == ["in"]


def test_member_of_in_list_means_any_of(api_at):
    a, b = new_uuid(), new_uuid()
    make_provider("a", aggregates=[a])
    make_provider("b", aggregates=[b])
    make_provider("c", aggregates=[new_uuid()])
    assert names(api_at("1.3").get(f"/resource_providers?member_of=in:{a},{b}")) == ["a", "b"]


def test_member_of_list_without_in_is_400(api):
    r = api.get(f"/resource_providers?member_of={new_uuid()},{new_uuid()}")
    assert r.status == 400
    assert "must be prefixed with the 'in:' or '!in:' keyword" in r.error["detail"]


def test_member_of_malformed_uuid_is_400(api):
    r = api.get("/resource_providers?member_of=in:nope")
    assert r.status == 400
    assert "Expected 'member_of' parameter to contain valid UUID(s). Got: nope" in r.error["detail"]


def test_member_of_unknown_aggregate_matches_nothing(api):
    make_provider("a", aggregates=[new_uuid()])
    assert names(api.get(f"/resource_providers?member_of={new_uuid()}")) == []


def test_repeated_member_of_is_refused_before_1_24(api_at):
    r = api_at("1.23").get(f"/resource_providers?member_of={new_uuid()}&member_of={new_uuid()}")
    assert r.status == 400
    assert "Multiple member_of parameters are not supported" in r.error["detail"]


def test_repeated_member_of_means_all_of_from_1_24(api_at):
    a, b, c = new_uuid(), new_uuid(), new_uuid()
    make_provider("ab", aggregates=[a, b])
    make_provider("a", aggregates=[a])
    make_provider("cb", aggregates=[c, b])
    r = api_at("1.24").get(f"/resource_providers?member_of=in:{a},{c}&member_of={b}")
    assert names(r) == ["ab", "cb"]


def test_forbidden_member_of_is_refused_before_1_32(api_at):
    r = api_at("1.31").get(f"/resource_providers?member_of=!{new_uuid()}")
    assert r.status == 400
    assert "Forbidden member_of parameters are not supported" in r.error["detail"]


def test_forbidden_member_of_from_1_32(api_at):
    a = new_uuid()
    make_provider("in", aggregates=[a])
    make_provider("out", aggregates=[new_uuid()])
    make_provider("none")
    assert names(api_at("1.32").get(f"/resource_providers?member_of=!{a}")) == ["none", "out"]


def test_forbidden_member_of_in_list_from_1_32(api_at):
    a, b = new_uuid(), new_uuid()
    make_provider("a", aggregates=[a])
    make_provider("b", aggregates=[b])
    make_provider("c", aggregates=[new_uuid()])
    assert names(api_at("1.32").get(f"/resource_providers?member_of=!in:{a},{b}")) == ["c"]


def test_required_and_forbidden_member_of_together(api_at):
    a, b = new_uuid(), new_uuid()
    make_provider("a", aggregates=[a])
    make_provider("ab", aggregates=[a, b])
    r = api_at("1.32").get(f"/resource_providers?member_of={a}&member_of=!{b}")
    assert names(r) == ["a"]


# --- resources --------------------------------------------------------------


def test_resources_is_unknown_before_1_4(api_at):
    r = api_at("1.3").get("/resource_providers?resources=VCPU:1")
    assert r.status == 400
    assert "'resources' was unexpected" in r.error["detail"]


def test_resources_needs_inventory_of_every_class(api_at):
    make_provider("both", inventories={"VCPU": 8, "MEMORY_MB": 2048})
    make_provider("cpu-only", inventories={"VCPU": 8})
    r = api_at("1.4").get("/resource_providers?resources=VCPU:2,MEMORY_MB:1024")
    assert names(r) == ["both"]


def test_resources_subtracts_usage(api):
    full = make_provider("full", inventories={"VCPU": 4})
    make_provider("free", inventories={"VCPU": 4})
    make_allocation(full, make_consumer(), {"VCPU": 3})
    assert names(api.get("/resource_providers?resources=VCPU:2")) == ["free"]
    assert names(api.get("/resource_providers?resources=VCPU:1")) == ["free", "full"]


def test_resources_sums_usage_of_every_consumer(api):
    p = make_provider("p", inventories={"VCPU": 4})
    make_allocation(p, make_consumer(), {"VCPU": 2})
    make_allocation(p, make_consumer(), {"VCPU": 1})
    assert names(api.get("/resource_providers?resources=VCPU:1")) == ["p"]
    assert names(api.get("/resource_providers?resources=VCPU:2")) == []


def test_resources_respects_reserved_and_allocation_ratio(api):
    make_provider("p", inventories={"VCPU": {"total": 4, "reserved": 1, "allocation_ratio": 2.5}})
    # (4 - 1) * 2.5 = 7.5, truncated to 7 usable
    assert names(api.get("/resource_providers?resources=VCPU:7")) == ["p"]
    assert names(api.get("/resource_providers?resources=VCPU:8")) == []


def test_resources_respects_min_unit(api):
    make_provider("p", inventories={"VCPU": {"total": 8, "min_unit": 2}})
    assert names(api.get("/resource_providers?resources=VCPU:1")) == []
    assert names(api.get("/resource_providers?resources=VCPU:2")) == ["p"]


def test_resources_respects_max_unit(api):
    make_provider("p", inventories={"VCPU": {"total": 8, "max_unit": 4}})
    assert names(api.get("/resource_providers?resources=VCPU:4")) == ["p"]
    assert names(api.get("/resource_providers?resources=VCPU:5")) == []


def test_resources_respects_step_size(api):
    make_provider("p", inventories={"DISK_GB": {"total": 100, "step_size": 10}})
    assert names(api.get("/resource_providers?resources=DISK_GB:20")) == ["p"]
    assert names(api.get("/resource_providers?resources=DISK_GB:25")) == []


@pytest.mark.parametrize("narrowed", [False, True])
def test_resources_judges_each_class_with_its_own_usage(api, narrowed):
    """A whole cloud's capacity is judged at once, a named provider's one class at a time:
    both count each class's usage against its own inventory, and only the classes asked."""
    busy = make_provider("busy", inventories={"VCPU": 4, "MEMORY_MB": 1024, "DISK_GB": 10})
    make_allocation(busy, make_consumer(), {"VCPU": 3, "DISK_GB": 10})
    freed = make_provider("freed", inventories={"VCPU": 4, "MEMORY_MB": 1024})
    make_allocation(freed, (consumer := make_consumer()), {"MEMORY_MB": 1024})
    api.delete(f"/allocations/{consumer.uuid}")  # its usage row stays, at 0
    make_provider("no-memory", inventories={"VCPU": 4})

    def fitting(resources):
        if not narrowed:
            return names(api.get(f"/resource_providers?resources={resources}"))
        return [
            name
            for name in ("busy", "freed", "no-memory")
            if names(api.get(f"/resource_providers?resources={resources}&name={name}"))
        ]

    assert fitting("VCPU:1,MEMORY_MB:1024") == ["busy", "freed"]
    assert fitting("VCPU:2,MEMORY_MB:512") == ["freed"]
    assert fitting("VCPU:1") == ["busy", "freed", "no-memory"]
    assert fitting("DISK_GB:1") == []


def test_resources_unknown_class_is_400(api):
    r = api.get("/resource_providers?resources=CUSTOM_NOPE:1")
    assert r.status == 400
    assert (
        "Invalid resource class in resources parameter: No such resource class CUSTOM_NOPE."
        in r.error["detail"]
    )


@pytest.mark.parametrize(
    "value, message",
    [
        (
            "",
            "Badly formed resources parameter. Expected resources query string parameter in "
            "form: ?resources=VCPU:2,MEMORY_MB:1024. Got: empty string.",
        ),
        ("VCPU", "Got: VCPU."),
        ("VCPU:1:2", "Got: VCPU:1:2."),
        ("VCPU:x", "Requested resource VCPU expected positive integer amount. Got: x."),
        ("VCPU:0", "Requested resource VCPU requires amount >= 1. Got: 0."),
        ("VCPU:-1", "Requested resource VCPU requires amount >= 1. Got: -1."),
    ],
)
def test_resources_bad_syntax_is_400(api, value, message):
    r = api.get(f"/resource_providers?resources={value}")
    assert r.status == 400
    assert message in r.error["detail"]


# --- in_tree ----------------------------------------------------------------


def test_in_tree_is_unknown_before_1_14(api_at):
    p = make_provider("p")
    r = api_at("1.13").get(f"/resource_providers?in_tree={p.uuid}")
    assert r.status == 400
    assert "'in_tree' was unexpected" in r.error["detail"]


def test_in_tree_lists_the_whole_tree_from_any_member(api_at):
    root = make_provider("root")
    child = make_provider("child", parent=root)
    make_provider("grandchild", parent=child)
    make_provider("other")
    assert names(api_at("1.14").get(f"/resource_providers?in_tree={child.uuid}")) == [
        "child",
        "grandchild",
        "root",
    ]


def test_in_tree_unknown_provider_matches_nothing(api):
    make_provider("p")
    assert names(api.get(f"/resource_providers?in_tree={new_uuid()}")) == []


def test_in_tree_malformed_uuid_is_400(api):
    r = api.get("/resource_providers?in_tree=nope")
    assert r.status == 400
    assert "Invalid query string parameters" in r.error["detail"]


# --- required ---------------------------------------------------------------


def test_required_is_unknown_before_1_18(api_at):
    r = api_at("1.17").get("/resource_providers?required=HW_CPU_X86_AVX")
    assert r.status == 400
    assert "'required' was unexpected" in r.error["detail"]


def test_required_traits_all_needed_from_1_18(api_at):
    make_provider("both", traits=["HW_CPU_X86_AVX", "HW_CPU_X86_AVX2"])
    make_provider("one", traits=["HW_CPU_X86_AVX"])
    make_provider("none")
    r = api_at("1.18").get("/resource_providers?required=HW_CPU_X86_AVX,HW_CPU_X86_AVX2")
    assert names(r) == ["both"]


def test_required_unknown_trait_is_400(api):
    r = api.get("/resource_providers?required=CUSTOM_NOPE")
    assert r.status == 400
    assert (
        'Invalid trait(s) in "required" parameter: No such trait(s): CUSTOM_NOPE.'
        in r.error["detail"]
    )


def test_required_empty_trait_is_400(api):
    r = api.get("/resource_providers?required=HW_CPU_X86_AVX,")
    assert r.status == 400
    assert "Expected 'required' parameter value of the form" in r.error["detail"]


def test_forbidden_trait_is_refused_before_1_22(api_at):
    r = api_at("1.21").get("/resource_providers?required=!HW_CPU_X86_AVX")
    assert r.status == 400
    assert "HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: !HW_CPU_X86_AVX" in r.error["detail"]


def test_forbidden_trait_from_1_22(api_at):
    make_provider("avx", traits=["HW_CPU_X86_AVX"])
    make_provider("sse", traits=["HW_CPU_X86_SSE"])
    make_provider("none")
    assert names(api_at("1.22").get("/resource_providers?required=!HW_CPU_X86_AVX")) == [
        "none",
        "sse",
    ]


def test_required_and_forbidden_traits_together(api_at):
    make_provider("avx", traits=["HW_CPU_X86_AVX"])
    make_provider("avx-sse", traits=["HW_CPU_X86_AVX", "HW_CPU_X86_SSE"])
    r = api_at("1.22").get("/resource_providers?required=HW_CPU_X86_AVX,!HW_CPU_X86_SSE")
    assert names(r) == ["avx"]


def test_unknown_forbidden_trait_is_400(api):
    r = api.get("/resource_providers?required=!CUSTOM_NOPE")
    assert r.status == 400
    assert "No such trait(s): CUSTOM_NOPE." in r.error["detail"]


def test_any_of_traits_is_refused_before_1_39(api_at):
    r = api_at("1.38").get("/resource_providers?required=in:HW_CPU_X86_AVX,HW_CPU_X86_SSE")
    assert r.status == 400
    assert "only supported since microversion 1.39" in r.error["detail"]


def test_any_of_traits_from_1_39(api_at):
    make_provider("avx", traits=["HW_CPU_X86_AVX"])
    make_provider("sse", traits=["HW_CPU_X86_SSE"])
    make_provider("none")
    r = api_at("1.39").get("/resource_providers?required=in:HW_CPU_X86_AVX,HW_CPU_X86_SSE")
    assert names(r) == ["avx", "sse"]


def test_any_of_traits_cannot_forbid(api):
    r = api.get("/resource_providers?required=in:HW_CPU_X86_AVX,!HW_CPU_X86_SSE")
    assert r.status == 400
    assert "does not support forbidden traits" in r.error["detail"]


def test_repeated_required_uses_only_the_last_before_1_39(api_at):
    make_provider("avx", traits=["HW_CPU_X86_AVX"])
    make_provider("sse", traits=["HW_CPU_X86_SSE"])
    r = api_at("1.38").get("/resource_providers?required=HW_CPU_X86_AVX&required=HW_CPU_X86_SSE")
    assert names(r) == ["sse"]


def test_repeated_required_means_all_of_from_1_39(api_at):
    trait("CUSTOM_GOLD")
    make_provider("avx-gold", traits=["HW_CPU_X86_AVX", "CUSTOM_GOLD"])
    make_provider("sse-gold", traits=["HW_CPU_X86_SSE", "CUSTOM_GOLD"])
    make_provider("avx", traits=["HW_CPU_X86_AVX"])
    r = api_at("1.39").get(
        "/resource_providers?required=in:HW_CPU_X86_AVX,HW_CPU_X86_SSE&required=CUSTOM_GOLD"
    )
    assert names(r) == ["avx-gold", "sse-gold"]


# --- everything at once -----------------------------------------------------


def test_all_filters_combine(api):
    agg = new_uuid()
    root = make_provider("root")
    make_provider(
        "match", parent=root, inventories={"VCPU": 8}, traits=["HW_CPU_X86_AVX"], aggregates=[agg]
    )
    make_provider("no-trait", parent=root, inventories={"VCPU": 8}, aggregates=[agg])
    make_provider("no-agg", parent=root, inventories={"VCPU": 8}, traits=["HW_CPU_X86_AVX"])
    make_provider(
        "other-tree", inventories={"VCPU": 8}, traits=["HW_CPU_X86_AVX"], aggregates=[agg]
    )
    r = api.get(
        f"/resource_providers?in_tree={root.uuid}&member_of={agg}"
        "&resources=VCPU:4&required=HW_CPU_X86_AVX"
    )
    assert names(r) == ["match"]


# --- no N+1 -----------------------------------------------------------------


def _populate(count):
    agg = new_uuid()
    root = make_provider(
        "root", inventories={"VCPU": 64}, traits=["HW_CPU_X86_AVX"], aggregates=[agg]
    )
    for i in range(count - 1):
        make_provider(
            f"p{i}",
            parent=root,
            inventories={"VCPU": 64, "MEMORY_MB": 4096},
            traits=["HW_CPU_X86_AVX"],
            aggregates=[agg],
        )
    return agg


@pytest.mark.parametrize("count", [1, 50])
def test_list_query_count_does_not_grow_with_providers(api, django_assert_max_num_queries, count):
    agg = _populate(count)
    with django_assert_max_num_queries(8):
        r = api.get("/resource_providers")
    assert len(r.json["resource_providers"]) == count
    with django_assert_max_num_queries(8):
        r = api.get(f"/resource_providers?resources=VCPU:1&required=HW_CPU_X86_AVX&member_of={agg}")
    assert len(r.json["resource_providers"]) == count
