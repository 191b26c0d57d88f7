"""Schema errors carry jsonschema's whole message, as Placement's do.

Placement formats the ``ValidationError`` itself (``"JSON does not validate: %s" % exc``), so
clients and Placement's own suite see the failed keyword and the schema path
(``Failed validating 'minimum' in schema['properties']['total']``), not just the summary.
"""

import pytest

from tests.conftest import new_uuid
from tests.factories import make_provider

pytestmark = pytest.mark.django_db


def detail(response):
    assert response.status == 400, response
    return response.error["detail"]


def test_body_minimum_names_the_keyword_and_the_property(api):
    rp = make_provider("cn")
    text = detail(
        api.post(
            f"/resource_providers/{rp.uuid}/inventories",
            {"resource_class": "DISK_GB", "total": 0, "resource_provider_generation": 0},
        )
    )
    assert "JSON does not validate: 0 is less than the minimum of 1" in text
    assert "Failed validating 'minimum' in schema['properties']['total']" in text


def test_body_maximum(api):
    rp = make_provider("cn")
    body = {"resource_class": "DISK_GB", "total": 2**31, "resource_provider_generation": 0}
    assert "Failed validating 'maximum'" in detail(
        api.post(f"/resource_providers/{rp.uuid}/inventories", body)
    )


def test_body_max_length_and_format(api):
    assert "Failed validating 'maxLength'" in detail(
        api.post("/resource_providers", {"name": "x" * 201})
    )
    assert "Failed validating 'format'" in detail(
        api.post("/resource_providers", {"name": "n", "uuid": "not-a-uuid"})
    )


def test_body_pattern_on_resource_class_put(api_at):
    api = api_at("1.7")
    assert "Failed validating 'pattern'" in detail(api.put("/resource_classes/DISK_GB"))


def test_body_required_and_min_items_in_allocations(api_at):
    api = api_at("1.8")
    rp = make_provider("cn", inventories={"DISK_GB": 10})
    url = f"/allocations/{new_uuid()}"
    alloc = [{"resource_provider": {"uuid": str(rp.uuid)}, "resources": {"DISK_GB": 1}}]
    assert "Failed validating 'required' in schema" in detail(
        api.put(url, {"allocations": alloc, "user_id": "u"})
    )
    assert "Failed validating 'minItems'" in detail(
        api.put(url, {"allocations": [], "project_id": "p", "user_id": "u"})
    )


def test_query_string_min_length(api):
    text = detail(api.get("/usages?project_id="))
    assert text.startswith("The server could not comply")
    assert "Invalid query string parameters:" in text
    assert "Failed validating 'minLength'" in text


def test_query_string_pattern_on_candidates_limit(api):
    assert "Failed validating 'pattern'" in detail(
        api.get("/allocation_candidates?resources=VCPU:1&limit=-1")
    )


# --- repeated query parameters: the first value wins, as in Placement ----------------------


@pytest.fixture
def three_hosts(db):
    return [make_provider(f"cn{i}", inventories={"VCPU": 4}) for i in range(3)]


def test_repeated_limit_takes_the_first_value(api, three_hosts):
    r = api.get("/allocation_candidates?resources=VCPU:1&limit=2&limit=1")
    assert r.status == 200
    assert len(r.json["allocation_requests"]) == 2


def test_repeated_group_policy_takes_the_first_value(api, db):
    # One host with two VCPU providers below it: "isolate" needs both children, "none" does not.
    root = make_provider("cn")
    make_provider("numa0", parent=root, inventories={"VCPU": 4})
    make_provider("numa1", parent=root, inventories={"VCPU": 4})
    query = "resources1=VCPU:1&resources2=VCPU:1"
    isolate_first = api.get(
        f"/allocation_candidates?{query}&group_policy=isolate&group_policy=none"
    )
    none_first = api.get(f"/allocation_candidates?{query}&group_policy=none&group_policy=isolate")
    assert len(isolate_first.json["allocation_requests"]) == 2
    assert len(none_first.json["allocation_requests"]) == 4
