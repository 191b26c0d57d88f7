"""/traits and /traits/{name} through the HTTP stack."""

import os_traits
import pytest

from providers.models import Trait
from tests.factories import make_provider, trait

pytestmark = pytest.mark.django_db


def names(response):
    return response.json["traits"]


# --- microversions and policy ----------------------------------------------


@pytest.mark.parametrize(
    "method, url",
    [
        ("GET", "/traits"),
        ("GET", "/traits/HW_CPU_X86_AVX"),
        ("PUT", "/traits/CUSTOM_OLD"),
        ("DELETE", "/traits/CUSTOM_OLD"),
    ],
)
def test_traits_do_not_exist_before_1_6(api_at, method, url):
    r = api_at("1.5").request(method, url)
    assert r.status == 404
    assert "errors" in r.json
    assert not Trait.objects.filter(name="CUSTOM_OLD").exists()


@pytest.mark.parametrize(
    "method, url",
    [
        ("GET", "/traits"),
        ("GET", "/traits/HW_CPU_X86_AVX"),
        ("PUT", "/traits/CUSTOM_NOPE"),
        ("DELETE", "/traits/CUSTOM_NOPE"),
    ],
)
def test_non_admin_is_forbidden_under_legacy_policy(api_at, method, url):
    r = api_at("1.6", token="user:project").request(method, url)
    assert r.status == 403
    assert not Trait.objects.filter(name="CUSTOM_NOPE").exists()


def test_post_to_traits_is_405(api):
    r = api.post("/traits", {"name": "CUSTOM_A"})
    assert r.status == 405


# --- GET /traits --------------------------------------------------------------


def test_list_has_every_standard_trait(api):
    r = api.get("/traits")
    assert r.status == 200
    assert set(os_traits.get_traits()) <= set(names(r))


def test_list_puts_standard_traits_before_custom_ones(api):
    api.put("/traits/CUSTOM_FIRST")
    # A standard trait added later (an os-traits upgrade) still comes first.
    Trait.objects.create(name="HW_NEWER_STANDARD")
    listed = names(api.get("/traits"))
    assert listed[-1] == "CUSTOM_FIRST"
    assert listed.index("HW_NEWER_STANDARD") < listed.index("CUSTOM_FIRST")


def test_custom_traits_are_listed_in_creation_order(api):
    for name in ("CUSTOM_ZED", "CUSTOM_ALPHA", "CUSTOM_MID"):
        api.put(f"/traits/{name}")
    r = api.get("/traits?name=startswith:CUSTOM_")
    assert names(r) == ["CUSTOM_ZED", "CUSTOM_ALPHA", "CUSTOM_MID"]


def test_name_in_filter_lists_only_those_names(api):
    api.put("/traits/CUSTOM_A")
    r = api.get("/traits?name=in:CUSTOM_A,HW_CPU_X86_AVX,CUSTOM_UNKNOWN")
    assert r.status == 200
    assert sorted(names(r)) == ["CUSTOM_A", "HW_CPU_X86_AVX"]


def test_name_in_with_nothing_after_the_colon_lists_nothing(api):
    r = api.get("/traits?name=in:")
    assert r.status == 200
    assert names(r) == []


def test_startswith_filter_lists_only_that_prefix(api):
    api.put("/traits/CUSTOM_GOLD")
    api.put("/traits/CUSTOM_SILVER")
    r = api.get("/traits?name=startswith:CUSTOM_G")
    assert names(r) == ["CUSTOM_GOLD"]


def test_startswith_treats_underscore_literally(api):
    api.put("/traits/CUSTOM_A_B")
    api.put("/traits/CUSTOM_AXB")
    r = api.get("/traits?name=startswith:CUSTOM_A_")
    assert names(r) == ["CUSTOM_A_B"]


def test_associated_true_lists_traits_some_provider_has(api):
    api.put("/traits/CUSTOM_USED")
    api.put("/traits/CUSTOM_UNUSED")
    make_provider(traits=["CUSTOM_USED", "HW_CPU_X86_AVX"])
    make_provider(traits=["CUSTOM_USED"])
    r = api.get("/traits?associated=true")
    assert r.status == 200
    assert names(r) == ["HW_CPU_X86_AVX", "CUSTOM_USED"]


def test_associated_false_lists_traits_no_provider_has(api):
    api.put("/traits/CUSTOM_USED")
    api.put("/traits/CUSTOM_UNUSED")
    make_provider(traits=["CUSTOM_USED"])
    listed = names(api.get("/traits?associated=false"))
    assert "CUSTOM_UNUSED" in listed
    assert "CUSTOM_USED" not in listed
    assert "HW_CPU_X86_AVX" in listed


def test_associated_is_case_insensitive_and_combines_with_name(api):
    make_provider(traits=["CUSTOM_USED", "HW_CPU_X86_AVX"])
    r = api.get("/traits?associated=True&name=startswith:CUSTOM_")
    assert names(r) == ["CUSTOM_USED"]


@pytest.mark.parametrize("value", ["CUSTOM_A", "", "foo:CUSTOM_A", "IN:CUSTOM_A"])
def test_badly_formatted_name_filter_is_400(api, value):
    r = api.get(f"/traits?name={value}")
    assert r.status == 400
    assert "Badly formatted name parameter" in r.error["detail"]
    assert f'Got: "{value}"' in r.error["detail"]


@pytest.mark.parametrize("value", ["yes", "1", ""])
def test_associated_other_than_true_or_false_is_400(api, value):
    r = api.get(f"/traits?associated={value}")
    assert r.status == 400
    assert 'The query parameter "associated" only accepts "true" or "false"' in r.error["detail"]


def test_unknown_query_parameter_is_400(api):
    r = api.get("/traits?color=red")
    assert r.status == 400
    assert "Invalid query string parameters" in r.error["detail"]
    assert "'color' was unexpected" in r.error["detail"]


def test_non_utf8_query_value_is_not_a_server_error(api):
    r = api.get("/traits?name=in:%FF%FE")
    assert r.status == 200
    assert names(r) == []


def test_list_has_caching_headers_from_1_15(api_at):
    r = api_at("1.15").get("/traits")
    assert r.headers["Cache-Control"] == "no-cache"
    assert "Last-Modified" in r.headers
    before = api_at("1.14").get("/traits")
    assert "Last-Modified" not in before.headers
    assert "Cache-Control" not in before.headers


# --- PUT /traits/{name} ---------------------------------------------------------


def test_put_creates_custom_trait_with_location(api):
    r = api.put("/traits/CUSTOM_GOLD")
    assert r.status == 201
    assert r.headers["Location"].endswith("/traits/CUSTOM_GOLD")
    assert r.content == b""
    assert Trait.objects.filter(name="CUSTOM_GOLD").exists()


def test_put_of_existing_trait_is_204_with_location(api):
    api.put("/traits/CUSTOM_GOLD")
    r = api.put("/traits/CUSTOM_GOLD")
    assert r.status == 204
    assert r.headers["Location"].endswith("/traits/CUSTOM_GOLD")
    assert Trait.objects.filter(name="CUSTOM_GOLD").count() == 1


@pytest.mark.parametrize(
    "name",
    [
        "GOLD",
        "HW_CPU_X86_AVX",
        "CUSTOM_",
        "CUSTOM_gold",
        "custom_GOLD",
        "CUSTOM_GO-LD",
        "CUSTOM_GOLD%0A",
        "CUSTOM_%C3%89",
        "CUSTOM_%FF",
        "CUSTOM_" + "A" * 249,
    ],
)
def test_put_rejects_invalid_trait_names(api, name):
    before = Trait.objects.count()
    r = api.put(f"/traits/{name}")
    assert r.status == 400
    assert (
        "The trait is invalid. A valid trait must be no longer than 255 characters"
        in (r.error["detail"])
    )
    assert Trait.objects.count() == before


def test_put_accepts_a_name_of_255_characters(api):
    name = "CUSTOM_" + "A" * 248
    assert api.put(f"/traits/{name}").status == 201


def test_put_has_caching_headers_from_1_15(api_at):
    r = api_at("1.15").put("/traits/CUSTOM_GOLD")
    assert r.headers["Cache-Control"] == "no-cache"
    assert "Last-Modified" in r.headers
    r = api_at("1.14").put("/traits/CUSTOM_SILVER")
    assert "Last-Modified" not in r.headers


# --- GET /traits/{name} -----------------------------------------------------------


def test_get_existing_trait_is_204_without_body(api):
    r = api.get("/traits/HW_CPU_X86_AVX")
    assert r.status == 204
    assert r.content == b""


def test_get_unknown_trait_is_404(api):
    r = api.get("/traits/CUSTOM_NOPE")
    assert r.status == 404
    assert "No such trait(s): CUSTOM_NOPE." in r.error["detail"]


def test_get_of_non_utf8_name_is_404(api):
    assert api.get("/traits/CUSTOM_%FF").status == 404


def test_get_has_caching_headers_from_1_15(api_at):
    r = api_at("1.15").get("/traits/HW_CPU_X86_AVX")
    assert r.headers["Cache-Control"] == "no-cache"
    assert "Last-Modified" in r.headers
    assert "Last-Modified" not in api_at("1.14").get("/traits/HW_CPU_X86_AVX").headers


# --- DELETE /traits/{name} --------------------------------------------------------


def test_delete_unused_custom_trait(api):
    api.put("/traits/CUSTOM_GOLD")
    r = api.delete("/traits/CUSTOM_GOLD")
    assert r.status == 204
    assert r.content == b""
    assert api.get("/traits/CUSTOM_GOLD").status == 404


def test_delete_standard_trait_is_400(api):
    r = api.delete("/traits/HW_CPU_X86_AVX")
    assert r.status == 400
    assert "Cannot delete standard trait HW_CPU_X86_AVX." in r.error["detail"]
    assert Trait.objects.filter(name="HW_CPU_X86_AVX").exists()


def test_delete_unknown_trait_is_404(api):
    r = api.delete("/traits/CUSTOM_NOPE")
    assert r.status == 404
    assert "No such trait(s): CUSTOM_NOPE." in r.error["detail"]


def test_delete_trait_a_provider_has_is_409(api):
    make_provider(traits=[trait("CUSTOM_USED").name])
    r = api.delete("/traits/CUSTOM_USED")
    assert r.status == 409
    assert "The trait CUSTOM_USED is in use by a resource provider." in r.error["detail"]
    assert Trait.objects.filter(name="CUSTOM_USED").exists()
