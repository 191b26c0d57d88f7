"""The /api/ plumbing: token auth, policy per action, paging, filters, errors, schema."""

import json

import pytest

from placementsite.core.rest.pagination import ApiPagination
from tests.conftest import PlacementClient

pytestmark = pytest.mark.urls("tests.rest.urls")


@pytest.fixture
def rest(db):
    return PlacementClient()


def test_missing_token_is_401_in_the_error_format(rest):
    response = rest.get("/api/", token=None)
    assert response.status == 401
    assert response.error_code == "api.not_authenticated"
    assert response.headers["WWW-Authenticate"].startswith("X-Auth-Token")
    assert response.error["request_id"] == response.headers["openstack-request-id"]


def test_unknown_token_is_401(rest, settings):
    settings.PLACEMENT_AUTH_STRATEGY = "token"
    response = rest.get("/api/", token="no-such-token")
    assert response.status == 401
    assert response.error_code == "api.authentication_failed"


def test_root_lists_collections_without_microversion_headers(rest):
    response = rest.get("/api/")
    assert response.status == 200
    assert "test-traits" in response.json
    assert "openstack-api-version" not in response.headers
    assert response.headers["openstack-request-id"].startswith("req-")


def test_list_is_paged_filtered_and_ordered(rest):
    response = rest.get("/api/test-traits/?limit=2&ordering=-name")
    assert response.status == 200
    body = response.json
    assert body["count"] > 2 and len(body["results"]) == 2
    assert body["results"][0]["name"] > body["results"][1]["name"]
    assert body["next"]

    one = rest.get("/api/test-traits/?name=HW_CPU_X86_AVX2").json
    assert [t["name"] for t in one["results"]] == ["HW_CPU_X86_AVX2"]


def test_page_size_is_capped(rest, monkeypatch):
    monkeypatch.setattr(ApiPagination, "max_limit", 5)
    response = rest.get("/api/test-traits/?limit=100000")
    assert len(response.json["results"]) == 5


def test_policy_denies_by_rule_name(rest):
    response = rest.get("/api/test-traits/", token="alice:p1")
    assert response.status == 403
    assert response.error_code == "api.permission_denied"
    assert "placement:api:test_traits:list" in response.error["detail"]


def test_policy_file_overrides_one_action(rest, settings, tmp_path):
    policy = tmp_path / "policy.yaml"
    policy.write_text('"placement:api:test_traits:list": "role:reader"\n')
    settings.PLACEMENT_POLICY_FILE = str(policy)
    reader = {"X-Roles": "reader"}
    assert rest.get("/api/test-traits/", token="alice:p1", headers=reader).status == 200
    trait_id = rest.get("/api/test-traits/?limit=1", headers=reader).json["results"][0]["id"]
    # show is a separate rule, still admin only
    url = f"/api/test-traits/{trait_id}/"
    assert rest.get(url, token="alice:p1", headers=reader).status == 403


def test_validation_error_names_each_field(rest):
    response = rest.post("/api/test-echo/", {"amount": -1, "name": "x" * 11})
    assert response.status == 400
    error = response.error
    assert error["code"] == "api.invalid"
    assert set(error["fields"]) == {"amount", "name"}
    assert "amount: Ensure this value is greater than or equal to 0." in error["detail"]


def test_malformed_json_is_400(rest):
    response = rest.request("POST", "/api/test-echo/", raw="{not json")
    assert response.status == 400
    assert response.error_code == "api.parse_error"


def test_wrong_media_type_is_415(rest):
    response = rest.request("POST", "/api/test-echo/", raw="amount=1", content_type="text/plain")
    assert response.status == 415
    assert response.error_code == "api.unsupported_media_type"


def test_unknown_url_and_method(rest):
    missing = rest.get("/api/no-such-thing/")
    assert missing.status == 404 and missing.error_code == "api.not_found"
    not_allowed = rest.delete("/api/test-traits/")
    assert not_allowed.status == 405 and not_allowed.error_code == "api.method_not_allowed"


def test_unexpected_exception_is_a_json_500(rest):
    response = rest.get("/api/test-echo/1/")
    assert response.status == 500
    assert response.error_code == "api.error"
    assert "RuntimeError" not in response.content.decode()


def test_nul_in_query_is_400(rest):
    response = rest.get("/api/test-traits/?name=a%00b")
    assert response.status == 400


def test_schema_describes_only_the_project_api(rest):
    response = rest.get("/api/schema/?format=json")
    assert response.status == 200
    schema = json.loads(response.content)
    assert schema["openapi"].startswith("3.")
    assert all(path.startswith("/api/") for path in schema["paths"])
    assert "/api/test-traits/" in schema["paths"]
    assert schema["components"]["securitySchemes"]["XAuthToken"]["name"] == "X-Auth-Token"
    operation = schema["paths"]["/api/test-traits/"]["get"]
    assert operation["responses"]["4XX"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Error"
    }


def test_schema_needs_a_token(rest):
    assert rest.get("/api/schema/", token=None).status == 401
