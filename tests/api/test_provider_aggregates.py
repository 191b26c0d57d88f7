"""/resource_providers/{uuid}/aggregates through the HTTP stack."""

import pytest

from providers.models import Aggregate, ResourceProvider
from tests.api.test_provider_traits import run_concurrently
from tests.conftest import PlacementClient, new_uuid
from tests.factories import make_provider

pytestmark = pytest.mark.django_db

AGG_A = "5f6b4bd4-3a4f-4f0e-9a53-0d4a3f0ac001"
AGG_B = "5f6b4bd4-3a4f-4f0e-9a53-0d4a3f0ac002"
AGG_C = "5f6b4bd4-3a4f-4f0e-9a53-0d4a3f0ac003"


def url(provider):
    return f"/resource_providers/{provider.uuid}/aggregates"


def generation_of(provider):
    return ResourceProvider.objects.get(pk=provider.pk).generation


def aggregates_of(provider):
    provider = ResourceProvider.objects.get(pk=provider.pk)
    return {str(u) for u in provider.aggregates.values_list("uuid", flat=True)}


# --- microversions, policy, unknown providers ------------------------------------


@pytest.mark.parametrize("method", ["GET", "PUT"])
def test_aggregates_do_not_exist_at_1_0(api_at, method):
    provider = make_provider(aggregates=[AGG_A])
    body = [] if method == "PUT" else None
    r = api_at("1.0").request(method, url(provider), body)
    assert r.status == 404
    assert aggregates_of(provider) == {AGG_A}


@pytest.mark.parametrize("method", ["GET", "PUT"])
def test_non_admin_is_forbidden_under_legacy_policy(api_at, method):
    provider = make_provider(aggregates=[AGG_A])
    body = [] if method == "PUT" else None
    r = api_at("1.1", token="user:project").request(method, url(provider), body)
    assert r.status == 403
    assert aggregates_of(provider) == {AGG_A}


@pytest.mark.parametrize(
    "version, method, body",
    [
        ("1.1", "GET", None),
        ("1.1", "PUT", []),
        ("1.19", "PUT", {"aggregates": [], "resource_provider_generation": 0}),
    ],
)
def test_unknown_provider_is_404(api_at, version, method, body):
    missing = new_uuid()
    r = api_at(version).request(method, f"/resource_providers/{missing}/aggregates", body)
    assert r.status == 404
    assert f"No resource provider with uuid {missing} found" in r.error["detail"]


def test_malformed_provider_uuid_is_404(api):
    assert api.get("/resource_providers/nope/aggregates").status == 404
    body = {"aggregates": [], "resource_provider_generation": 0}
    assert api.put("/resource_providers/nope/aggregates", body).status == 404


# --- GET ----------------------------------------------------------------------------


def test_get_before_1_19_lists_aggregates_without_generation(api_at):
    provider = make_provider(aggregates=[AGG_A, AGG_B])
    r = api_at("1.18").get(url(provider))
    assert r.status == 200
    assert r.json == {"aggregates": [AGG_A, AGG_B]}


def test_get_from_1_19_includes_generation(api_at):
    provider = make_provider(aggregates=[AGG_A])
    r = api_at("1.19").get(url(provider))
    assert r.json == {"aggregates": [AGG_A], "resource_provider_generation": 0}


def test_get_of_provider_in_no_aggregate_is_empty_list(api):
    provider = make_provider()
    assert api.get(url(provider)).json["aggregates"] == []


def test_get_has_caching_headers_from_1_15(api_at):
    provider = make_provider()
    r = api_at("1.15").get(url(provider))
    assert r.headers["Cache-Control"] == "no-cache"
    assert "Last-Modified" in r.headers
    assert "Last-Modified" not in api_at("1.14").get(url(provider)).headers


# --- PUT before 1.19: a bare list, no generation --------------------------------------


def test_put_before_1_19_takes_a_bare_list(api_at):
    provider = make_provider()
    r = api_at("1.1").put(url(provider), [AGG_A, AGG_B])
    assert r.status == 200
    assert r.json == {"aggregates": [AGG_A, AGG_B]}
    assert aggregates_of(provider) == {AGG_A, AGG_B}


def test_put_before_1_19_does_not_bump_generation(api_at):
    provider = make_provider()
    api_at("1.18").put(url(provider), [AGG_A])
    assert generation_of(provider) == 0


def test_put_at_1_18_refuses_the_1_19_body(api_at):
    provider = make_provider()
    r = api_at("1.18").put(
        url(provider), {"aggregates": [AGG_A], "resource_provider_generation": 0}
    )
    assert r.status == 400
    assert "JSON does not validate" in r.error["detail"]
    assert aggregates_of(provider) == set()


@pytest.mark.parametrize(
    "body",
    [
        ["not-a-uuid"],
        [AGG_A, AGG_A],
        [1],
        AGG_A,
        {"aggregates": [AGG_A]},
    ],
)
def test_put_before_1_19_rejects_bad_lists(api_at, body):
    provider = make_provider(aggregates=[AGG_C])
    r = api_at("1.1").put(url(provider), body)
    assert r.status == 400
    assert "JSON does not validate" in r.error["detail"]
    assert aggregates_of(provider) == {AGG_C}


# --- PUT from 1.19: an object with the generation -------------------------------------


def test_put_replaces_aggregates_and_bumps_generation(api):
    provider = make_provider(aggregates=[AGG_A, AGG_B])
    r = api.put(url(provider), {"aggregates": [AGG_C, AGG_B], "resource_provider_generation": 0})
    assert r.status == 200
    assert r.json == {"aggregates": [AGG_C, AGG_B], "resource_provider_generation": 1}
    assert aggregates_of(provider) == {AGG_B, AGG_C}
    assert generation_of(provider) == 1


def test_put_creates_aggregates_on_first_use(api):
    provider = make_provider()
    api.put(url(provider), {"aggregates": [AGG_A], "resource_provider_generation": 0})
    assert Aggregate.objects.filter(uuid=AGG_A).count() == 1


def test_put_keeps_aggregates_a_provider_left(api):
    provider = make_provider(aggregates=[AGG_A])
    api.put(url(provider), {"aggregates": [], "resource_provider_generation": 0})
    assert aggregates_of(provider) == set()
    assert Aggregate.objects.filter(uuid=AGG_A).exists()


def test_providers_share_one_aggregate(api):
    first = make_provider(aggregates=[AGG_A])
    second = make_provider()
    api.put(url(second), {"aggregates": [AGG_A], "resource_provider_generation": 0})
    assert Aggregate.objects.filter(uuid=AGG_A).count() == 1
    assert aggregates_of(first) == aggregates_of(second) == {AGG_A}


def test_get_lists_aggregates_in_the_order_they_were_put(api):
    provider = make_provider()
    api.put(url(provider), {"aggregates": [AGG_C, AGG_A, AGG_B], "resource_provider_generation": 0})
    assert api.get(url(provider)).json["aggregates"] == [AGG_C, AGG_A, AGG_B]


def test_uuids_differing_only_in_case_are_one_aggregate(api):
    provider = make_provider()
    body = {"aggregates": [AGG_A, AGG_A.upper()], "resource_provider_generation": 0}
    r = api.put(url(provider), body)
    assert r.status == 200
    assert r.json["aggregates"] == [AGG_A]
    assert aggregates_of(provider) == {AGG_A}


def test_put_with_stale_generation_is_409_and_changes_nothing(api):
    provider = make_provider(aggregates=[AGG_A])
    r = api.put(url(provider), {"aggregates": [AGG_B], "resource_provider_generation": 7})
    assert r.status == 409
    assert r.error_code == "placement.concurrent_update"
    assert "generation already changed" in r.error["detail"]
    assert aggregates_of(provider) == {AGG_A}
    assert generation_of(provider) == 0
    assert not Aggregate.objects.filter(uuid=AGG_B).exists()


def test_second_put_with_the_same_generation_is_409(api):
    provider = make_provider()
    assert (
        api.put(url(provider), {"aggregates": [AGG_A], "resource_provider_generation": 0}).json[
            "resource_provider_generation"
        ]
        == 1
    )
    r = api.put(url(provider), {"aggregates": [AGG_B], "resource_provider_generation": 0})
    assert r.status == 409
    assert r.error_code == "placement.concurrent_update"
    assert aggregates_of(provider) == {AGG_A}


@pytest.mark.parametrize(
    "body",
    [
        [AGG_A],
        {"aggregates": [AGG_A]},
        {"resource_provider_generation": 0},
        {"aggregates": [AGG_A], "resource_provider_generation": 0, "extra": True},
        {"aggregates": ["not-a-uuid"], "resource_provider_generation": 0},
        {"aggregates": [AGG_A, AGG_A], "resource_provider_generation": 0},
        {"aggregates": AGG_A, "resource_provider_generation": 0},
        {"aggregates": [AGG_A], "resource_provider_generation": "0"},
    ],
)
def test_put_from_1_19_rejects_bodies_that_do_not_validate(api, body):
    provider = make_provider(aggregates=[AGG_C])
    r = api.put(url(provider), body)
    assert r.status == 400
    assert "JSON does not validate" in r.error["detail"]
    assert aggregates_of(provider) == {AGG_C}
    assert generation_of(provider) == 0


def test_put_without_json_media_type_is_415(api):
    provider = make_provider()
    r = api.put(url(provider), raw=f'["{AGG_A}"]', content_type="text/plain")
    assert r.status == 415
    assert aggregates_of(provider) == set()


def test_put_has_caching_headers_from_1_15(api_at):
    provider = make_provider()
    r = api_at("1.15").put(url(provider), [AGG_A])
    assert r.headers["Cache-Control"] == "no-cache"
    assert "Last-Modified" in r.headers
    assert "Last-Modified" not in api_at("1.14").put(url(provider), [AGG_A]).headers


# --- concurrency ----------------------------------------------------------------------


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_only_one_of_concurrent_puts_with_the_same_generation_wins():
    provider = make_provider()
    choices = [AGG_A, AGG_B, AGG_C, new_uuid()]

    def put(index):
        body = {"aggregates": [choices[index]], "resource_provider_generation": 0}
        return PlacementClient(version="latest").put(url(provider), body)

    results = run_concurrently(len(choices), put)
    assert sorted(r.status for r in results) == [200, 409, 409, 409]
    winner = next(r for r in results if r.status == 200)
    assert all(r.error_code == "placement.concurrent_update" for r in results if r.status == 409)
    assert generation_of(provider) == 1
    assert aggregates_of(provider) == set(winner.json["aggregates"])


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_concurrent_first_use_of_one_aggregate_creates_it_once():
    providers = [make_provider() for _ in range(4)]

    def put(index):
        body = {"aggregates": [AGG_A], "resource_provider_generation": 0}
        return PlacementClient(version="1.19").put(url(providers[index]), body)

    results = run_concurrently(len(providers), put)
    assert [r.status for r in results] == [200] * len(providers)
    assert Aggregate.objects.filter(uuid=AGG_A).count() == 1
    assert all(aggregates_of(p) == {AGG_A} for p in providers)


# --- the selector other endpoints reuse -------------------------------------------------


def test_bulk_selector_agrees_with_get_in_one_query(api, django_assert_num_queries):
    from providers.selectors.aggregates import aggregate_uuids_by_provider

    providers = [make_provider(), make_provider(aggregates=[AGG_C]), make_provider()]
    api.put(url(providers[0]), {"aggregates": [AGG_B, AGG_A], "resource_provider_generation": 0})
    with django_assert_num_queries(1):
        by_provider = aggregate_uuids_by_provider(provider_ids=(p.pk for p in providers))
    for provider in providers:
        assert by_provider[provider.pk] == api.get(url(provider)).json["aggregates"]


def test_put_query_count_does_not_grow_with_the_number_of_aggregates(api):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    counts = []
    for size in (1, 20):
        provider = make_provider(aggregates=[new_uuid() for _ in range(size)])
        wanted = [new_uuid() for _ in range(size)]
        with CaptureQueriesContext(connection) as queries:
            r = api.put(url(provider), {"aggregates": wanted, "resource_provider_generation": 0})
        assert r.json["aggregates"] == wanted
        counts.append(len(queries))
    assert counts[0] == counts[1]
