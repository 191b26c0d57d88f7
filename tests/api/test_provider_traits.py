"""/resource_providers/{uuid}/traits through the HTTP stack."""

import threading

import pytest
from django.db import connection

from providers.models import ResourceProvider, Trait
from tests.conftest import PlacementClient, new_uuid
from tests.factories import make_provider, trait

pytestmark = pytest.mark.django_db


def url(provider):
    return f"/resource_providers/{provider.uuid}/traits"


def generation_of(provider):
    return ResourceProvider.objects.get(pk=provider.pk).generation


def trait_names_of(provider):
    return set(ResourceProvider.objects.get(pk=provider.pk).traits.values_list("name", flat=True))


# --- microversions, policy, unknown providers ------------------------------------


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
def test_provider_traits_do_not_exist_before_1_6(api_at, method):
    provider = make_provider(traits=["HW_CPU_X86_AVX"])
    body = {"traits": [], "resource_provider_generation": 0} if method == "PUT" else None
    r = api_at("1.5").request(method, url(provider), body)
    assert r.status == 404
    assert trait_names_of(provider) == {"HW_CPU_X86_AVX"}


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
def test_non_admin_is_forbidden_under_legacy_policy(api_at, method):
    provider = make_provider(traits=["HW_CPU_X86_AVX"])
    body = {"traits": [], "resource_provider_generation": 0} if method == "PUT" else None
    r = api_at("1.6", token="user:project").request(method, url(provider), body)
    assert r.status == 403
    assert trait_names_of(provider) == {"HW_CPU_X86_AVX"}


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
def test_unknown_provider_is_404(api, method):
    missing = new_uuid()
    body = {"traits": [], "resource_provider_generation": 0} if method == "PUT" else None
    r = api.request(method, f"/resource_providers/{missing}/traits", body)
    assert r.status == 404
    assert f"No resource provider with uuid {missing} found" in r.error["detail"]


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
@pytest.mark.parametrize("text", ["not-a-uuid", "hex", "urn", "%FF"])
def test_malformed_provider_uuid_is_404(api, method, text):
    provider = make_provider(traits=["HW_CPU_X86_AVX"])
    text = {"hex": provider.uuid.hex, "urn": provider.uuid.urn}.get(text, text)
    body = {"traits": [], "resource_provider_generation": 0} if method == "PUT" else None
    r = api.request(method, f"/resource_providers/{text}/traits", body)
    assert r.status == 404
    assert "No resource provider with uuid" in r.error["detail"]
    assert trait_names_of(provider) == {"HW_CPU_X86_AVX"}


def test_upper_case_provider_uuid_finds_the_provider(api):
    provider = make_provider(traits=["HW_CPU_X86_AVX"])
    r = api.get(f"/resource_providers/{str(provider.uuid).upper()}/traits")
    assert r.status == 200
    assert r.json["traits"] == ["HW_CPU_X86_AVX"]


# --- GET ----------------------------------------------------------------------------


def test_get_lists_traits_and_generation(api):
    provider = make_provider(traits=["HW_CPU_X86_AVX", "CUSTOM_GOLD"])
    r = api.get(url(provider))
    assert r.status == 200
    assert r.json == {
        "traits": ["HW_CPU_X86_AVX", "CUSTOM_GOLD"],
        "resource_provider_generation": 0,
    }


def test_get_of_provider_without_traits_is_empty_list(api):
    provider = make_provider()
    assert api.get(url(provider)).json["traits"] == []


def test_traits_are_listed_standard_first_then_in_creation_order(api):
    for name in ("CUSTOM_ZED", "CUSTOM_ALPHA"):
        trait(name)
    newer_standard = trait("HW_NEWER_STANDARD")
    provider = make_provider(
        traits=["CUSTOM_ALPHA", newer_standard.name, "CUSTOM_ZED", "COMPUTE_STATUS_DISABLED"]
    )
    assert api.get(url(provider)).json["traits"] == [
        "COMPUTE_STATUS_DISABLED",
        "HW_NEWER_STANDARD",
        "CUSTOM_ZED",
        "CUSTOM_ALPHA",
    ]


def test_get_has_caching_headers_from_1_15(api_at):
    provider = make_provider(traits=["HW_CPU_X86_AVX"])
    r = api_at("1.15").get(url(provider))
    assert r.headers["Cache-Control"] == "no-cache"
    assert "Last-Modified" in r.headers
    assert "Last-Modified" not in api_at("1.14").get(url(provider)).headers


# --- PUT ----------------------------------------------------------------------------


def test_put_replaces_traits_and_bumps_generation(api):
    trait("CUSTOM_GOLD")
    provider = make_provider(traits=["HW_CPU_X86_AVX", "HW_CPU_X86_SSE"])
    r = api.put(
        url(provider),
        {"traits": ["CUSTOM_GOLD", "HW_CPU_X86_AVX"], "resource_provider_generation": 0},
    )
    assert r.status == 200
    assert r.json == {
        "traits": ["HW_CPU_X86_AVX", "CUSTOM_GOLD"],
        "resource_provider_generation": 1,
    }
    assert trait_names_of(provider) == {"HW_CPU_X86_AVX", "CUSTOM_GOLD"}
    assert api.get(url(provider)).json == r.json


def test_put_of_the_same_set_leaves_the_generation_as_placement(api):
    provider = make_provider(traits=["HW_CPU_X86_AVX"])
    r = api.put(url(provider), {"traits": ["HW_CPU_X86_AVX"], "resource_provider_generation": 0})
    assert r.json["resource_provider_generation"] == 0
    assert generation_of(provider) == 0


def test_put_of_empty_list_removes_every_trait(api):
    provider = make_provider(traits=["HW_CPU_X86_AVX"])
    r = api.put(url(provider), {"traits": [], "resource_provider_generation": 0})
    assert r.status == 200
    assert r.json == {"traits": [], "resource_provider_generation": 1}
    assert trait_names_of(provider) == set()


def test_put_with_stale_generation_is_409_and_changes_nothing(api):
    provider = make_provider(traits=["HW_CPU_X86_AVX"])
    r = api.put(url(provider), {"traits": [], "resource_provider_generation": 5})
    assert r.status == 409
    assert r.error_code == "placement.concurrent_update"
    assert "generation already changed" in r.error["detail"]
    assert trait_names_of(provider) == {"HW_CPU_X86_AVX"}
    assert generation_of(provider) == 0


def test_second_put_with_the_same_generation_is_409(api):
    provider = make_provider()
    body = {"traits": ["HW_CPU_X86_AVX"], "resource_provider_generation": 0}
    assert api.put(url(provider), body).status == 200
    r = api.put(url(provider), {"traits": ["HW_CPU_X86_SSE"], "resource_provider_generation": 0})
    assert r.status == 409
    assert r.error_code == "placement.concurrent_update"
    assert trait_names_of(provider) == {"HW_CPU_X86_AVX"}


def test_put_with_unknown_traits_is_400_naming_them(api):
    provider = make_provider(traits=["HW_CPU_X86_AVX"])
    r = api.put(
        url(provider),
        {
            "traits": ["HW_CPU_X86_SSE", "CUSTOM_NOPE", "CUSTOM_NADA"],
            "resource_provider_generation": 0,
        },
    )
    assert r.status == 400
    assert "No such trait CUSTOM_NOPE, CUSTOM_NADA" in r.error["detail"]
    assert trait_names_of(provider) == {"HW_CPU_X86_AVX"}
    assert generation_of(provider) == 0


def test_stale_generation_is_reported_before_unknown_traits(api):
    provider = make_provider()
    r = api.put(url(provider), {"traits": ["CUSTOM_NOPE"], "resource_provider_generation": 3})
    assert r.status == 409


@pytest.mark.parametrize(
    "body",
    [
        {"traits": ["HW_CPU_X86_AVX"]},
        {"resource_provider_generation": 0},
        {"traits": ["HW_CPU_X86_AVX"], "resource_provider_generation": 0, "extra": 1},
        {"traits": ["HW_CPU_X86_AVX", "HW_CPU_X86_AVX"], "resource_provider_generation": 0},
        {"traits": "HW_CPU_X86_AVX", "resource_provider_generation": 0},
        {"traits": [1], "resource_provider_generation": 0},
        {"traits": [""], "resource_provider_generation": 0},
        {"traits": ["CUSTOM_" + "A" * 300], "resource_provider_generation": 0},
        {"traits": [], "resource_provider_generation": "0"},
        {"traits": [], "resource_provider_generation": None},
        ["HW_CPU_X86_AVX"],
    ],
)
def test_put_rejects_bodies_that_do_not_validate(api, body):
    provider = make_provider(traits=["HW_CPU_X86_SSE"])
    r = api.put(url(provider), body)
    assert r.status == 400
    assert "JSON does not validate" in r.error["detail"]
    assert trait_names_of(provider) == {"HW_CPU_X86_SSE"}
    assert generation_of(provider) == 0


def test_put_with_malformed_json_is_400(api):
    provider = make_provider()
    r = api.put(url(provider), raw='{"traits": [')
    assert r.status == 400
    assert "Malformed JSON" in r.error["detail"]


def test_put_without_json_media_type_is_415(api):
    provider = make_provider()
    r = api.put(
        url(provider),
        raw='{"traits": [], "resource_provider_generation": 0}',
        content_type="text/plain",
    )
    assert r.status == 415
    assert generation_of(provider) == 0


def test_put_has_caching_headers_from_1_15(api_at):
    provider = make_provider()
    r = api_at("1.15").put(url(provider), {"traits": [], "resource_provider_generation": 0})
    assert r.headers["Cache-Control"] == "no-cache"
    assert "Last-Modified" in r.headers
    r = api_at("1.14").put(url(provider), {"traits": [], "resource_provider_generation": 1})
    assert "Last-Modified" not in r.headers


def test_put_leaves_other_providers_alone(api):
    provider = make_provider(traits=["HW_CPU_X86_AVX"])
    other = make_provider(traits=["HW_CPU_X86_AVX"])
    api.put(url(provider), {"traits": [], "resource_provider_generation": 0})
    assert trait_names_of(other) == {"HW_CPU_X86_AVX"}
    assert generation_of(other) == 0


# --- DELETE -------------------------------------------------------------------------


def test_delete_removes_every_trait_and_bumps_generation(api):
    provider = make_provider(traits=["HW_CPU_X86_AVX", "HW_CPU_X86_SSE"])
    r = api.delete(url(provider))
    assert r.status == 204
    assert r.content == b""
    assert trait_names_of(provider) == set()
    assert generation_of(provider) == 1
    assert api.get(url(provider)).json == {"traits": [], "resource_provider_generation": 1}


def test_delete_keeps_the_traits_themselves(api):
    provider = make_provider(traits=[trait("CUSTOM_GOLD").name])
    api.delete(url(provider))
    assert Trait.objects.filter(name="CUSTOM_GOLD").exists()


# --- concurrency ----------------------------------------------------------------------


def run_concurrently(count, action):
    """Run ``action(index)`` in ``count`` threads released together; their results."""
    barrier = threading.Barrier(count)
    results = [None] * count

    def worker(index):
        try:
            barrier.wait(timeout=10)
            results[index] = action(index)
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_only_one_of_concurrent_puts_with_the_same_generation_wins():
    provider = make_provider()
    candidates = ["HW_CPU_X86_AVX", "HW_CPU_X86_SSE", "HW_CPU_X86_SSE2", "HW_CPU_X86_AVX2"]

    def put(index):
        body = {"traits": [candidates[index]], "resource_provider_generation": 0}
        return PlacementClient(version="latest").put(url(provider), body)

    results = run_concurrently(len(candidates), put)
    statuses = sorted(r.status for r in results)
    assert statuses == [200, 409, 409, 409]
    winner = next(r for r in results if r.status == 200)
    assert all(r.error_code == "placement.concurrent_update" for r in results if r.status == 409)
    assert generation_of(provider) == 1
    assert trait_names_of(provider) == set(winner.json["traits"])


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_deleting_a_trait_while_providers_take_it_never_fails_with_500():
    gold = trait("CUSTOM_GOLD")
    providers = [make_provider() for _ in range(4)]

    def act(index):
        client = PlacementClient(version="latest")
        if index == len(providers):
            return client.delete("/traits/CUSTOM_GOLD")
        body = {"traits": [gold.name], "resource_provider_generation": 0}
        return client.put(url(providers[index]), body)

    results = run_concurrently(len(providers) + 1, act)
    *puts, deletion = results
    assert deletion.status in (204, 409)
    assert all(r.status in (200, 400) for r in puts)
    holders = [p for p in providers if trait_names_of(p)]
    if deletion.status == 204:
        assert holders == []
        assert not Trait.objects.filter(name="CUSTOM_GOLD").exists()
    else:
        assert len(holders) == sum(r.status == 200 for r in puts) > 0


# --- the selector other endpoints reuse -------------------------------------------------


def test_bulk_selector_agrees_with_get_in_one_query(api, django_assert_num_queries):
    from providers.selectors.traits import trait_names_by_provider

    trait("CUSTOM_GOLD")
    providers = [
        make_provider(traits=["CUSTOM_GOLD", "HW_CPU_X86_AVX"]),
        make_provider(traits=["HW_CPU_X86_SSE"]),
        make_provider(),
    ]
    with django_assert_num_queries(1):
        by_provider = trait_names_by_provider(provider_ids=(p.pk for p in providers))
    for provider in providers:
        assert by_provider[provider.pk] == api.get(url(provider)).json["traits"]


def test_put_query_count_does_not_grow_with_the_number_of_traits(api):
    from django.test.utils import CaptureQueriesContext

    names = sorted(Trait.objects.exclude(name__startswith="CUSTOM_").values_list("name", flat=True))
    counts = []
    for size in (1, 20):
        provider = make_provider(traits=names[100 : 100 + size])
        with CaptureQueriesContext(connection) as queries:
            r = api.put(url(provider), {"traits": names[:size], "resource_provider_generation": 0})
        assert r.status == 200
        assert len(r.json["traits"]) == size
        counts.append(len(queries))
    assert counts[0] == counts[1]
