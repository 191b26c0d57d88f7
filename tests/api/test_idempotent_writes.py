"""A write that changes nothing behaves as the reference's does (observed on Placement 16):

- ``PUT .../traits`` with the traits the provider has, or ``DELETE .../traits`` of a provider
  without any, leaves its generation where it was (neutron's agents resend unchanged traits on
  every resync and track the generations they expect);
- aggregates (1.19+), inventories and allocations sent again unchanged still bump the
  generations they bump when they change, as Placement's do.
"""

import pytest

from tests.conftest import PlacementClient, new_uuid

pytestmark = pytest.mark.django_db


@pytest.fixture
def api():
    return PlacementClient(version="1.39")


@pytest.fixture
def provider(api):
    uuid = new_uuid()
    assert api.post("/resource_providers", {"name": "rp-" + uuid[:8], "uuid": uuid}).status == 200
    response = api.put(
        f"/resource_providers/{uuid}/inventories",
        {"resource_provider_generation": 0, "inventories": {"VCPU": {"total": 8}}},
    )
    assert response.status == 200
    return uuid


def generation(api, uuid):
    return api.get(f"/resource_providers/{uuid}").json["generation"]


def set_traits(api, uuid, traits, gen=None):
    gen = generation(api, uuid) if gen is None else gen
    return api.put(
        f"/resource_providers/{uuid}/traits",
        {"traits": traits, "resource_provider_generation": gen},
    )


def test_unchanged_traits_leave_the_generation(api, provider):
    assert set_traits(api, provider, ["HW_CPU_X86_AVX", "HW_CPU_X86_SSE"]).status == 200
    before = generation(api, provider)
    response = set_traits(api, provider, ["HW_CPU_X86_SSE", "HW_CPU_X86_AVX"])
    assert response.status == 200
    assert response.json["resource_provider_generation"] == before
    assert sorted(response.json["traits"]) == ["HW_CPU_X86_AVX", "HW_CPU_X86_SSE"]
    assert generation(api, provider) == before


def test_unchanged_traits_with_a_stale_generation_are_still_a_conflict(api, provider):
    set_traits(api, provider, ["HW_CPU_X86_AVX"])
    response = set_traits(api, provider, ["HW_CPU_X86_AVX"], gen=generation(api, provider) - 1)
    assert response.status == 409
    assert response.error_code == "placement.concurrent_update"


def test_changed_traits_bump_the_generation(api, provider):
    before = generation(api, provider)
    response = set_traits(api, provider, ["HW_CPU_X86_AVX"])
    assert response.json["resource_provider_generation"] == before + 1
    response = set_traits(api, provider, [])
    assert response.json["resource_provider_generation"] == before + 2


def test_deleting_the_traits_of_a_provider_without_any_leaves_the_generation(api, provider):
    before = generation(api, provider)
    assert api.delete(f"/resource_providers/{provider}/traits").status == 204
    assert generation(api, provider) == before


def test_deleting_existing_traits_bumps_the_generation(api, provider):
    set_traits(api, provider, ["HW_CPU_X86_AVX"])
    before = generation(api, provider)
    assert api.delete(f"/resource_providers/{provider}/traits").status == 204
    assert generation(api, provider) == before + 1


def test_unchanged_aggregates_still_bump_the_generation_as_placements(api, provider):
    aggregates = [new_uuid()]
    body = {"aggregates": aggregates, "resource_provider_generation": generation(api, provider)}
    first = api.put(f"/resource_providers/{provider}/aggregates", body).json
    body["resource_provider_generation"] = first["resource_provider_generation"]
    again = api.put(f"/resource_providers/{provider}/aggregates", body)
    assert again.status == 200
    assert again.json["resource_provider_generation"] == first["resource_provider_generation"] + 1


def test_unchanged_aggregates_before_1_19_leave_the_generation(provider):
    old = PlacementClient(version="1.18")
    before = generation(old, provider)
    aggregates = [new_uuid()]
    assert old.put(f"/resource_providers/{provider}/aggregates", aggregates).status == 200
    assert old.put(f"/resource_providers/{provider}/aggregates", aggregates).status == 200
    assert generation(old, provider) == before


def test_unchanged_inventories_still_bump_the_generation_as_placements(api, provider):
    before = generation(api, provider)
    body = {"inventories": {"VCPU": {"total": 8}}, "resource_provider_generation": before}
    response = api.put(f"/resource_providers/{provider}/inventories", body)
    assert response.json["resource_provider_generation"] == before + 1
    one = api.put(
        f"/resource_providers/{provider}/inventories/VCPU",
        {"total": 8, "resource_provider_generation": before + 1},
    )
    assert one.json["resource_provider_generation"] == before + 2


def test_identical_allocations_still_bump_both_generations_as_placements(api, provider):
    consumer = new_uuid()
    body = {
        "allocations": {provider: {"resources": {"VCPU": 2}}},
        "project_id": "p",
        "user_id": "u",
        "consumer_generation": None,
        "consumer_type": "INSTANCE",
    }
    assert api.put(f"/allocations/{consumer}", body).status == 204
    before = generation(api, provider)
    held = api.get(f"/allocations/{consumer}").json
    body["consumer_generation"] = held["consumer_generation"]
    assert api.put(f"/allocations/{consumer}", body).status == 204
    after = api.get(f"/allocations/{consumer}").json
    assert after["consumer_generation"] == held["consumer_generation"] + 1
    assert generation(api, provider) == before + 1
    assert after["allocations"][provider]["resources"] == {"VCPU": 2}
