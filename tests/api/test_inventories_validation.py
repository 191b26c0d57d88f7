"""Validation of inventory bodies: Placement's schema limits, defaults and capacity rule.

Each rule is checked on all three writes (PUT of all classes, POST of one
class, PUT of one class); a refused write must leave nothing changed.
"""

import json

import pytest

from tests.api.test_inventories import DEFAULTS, MAX_INT, inv_url, stored
from tests.factories import make_provider

pytestmark = pytest.mark.django_db

WRITES = ["replace", "create", "update"]


def write(client, provider, kind, fields, generation=0):
    """Send ``fields`` (one VCPU record) through one of the three write endpoints."""
    if kind == "replace":
        body = {"resource_provider_generation": generation, "inventories": {"VCPU": fields}}
        return client.put(inv_url(provider), body)
    if kind == "create":
        return client.post(inv_url(provider), {"resource_class": "VCPU", **fields})
    return client.put(
        inv_url(provider, "VCPU"), {"resource_provider_generation": generation, **fields}
    )


def provider_for(kind):
    """A provider on which ``kind`` of VCPU is possible: POST needs VCPU absent."""
    if kind == "create":
        return make_provider(inventories={"DISK_GB": 10})
    return make_provider(inventories={"VCPU": 8})


def sent_record(response, kind):
    return response.json["inventories"]["VCPU"] if kind == "replace" else response.json


BAD_FIELDS = [
    pytest.param({"total": 0}, id="total-zero"),
    pytest.param({"total": -1}, id="total-negative"),
    pytest.param({"total": MAX_INT + 1}, id="total-too-big"),
    pytest.param({"total": 10**30}, id="total-huge"),
    pytest.param({"total": 1.5}, id="total-float"),
    pytest.param({"total": "8"}, id="total-string"),
    pytest.param({"total": True}, id="total-bool"),
    pytest.param({"total": None}, id="total-null"),
    pytest.param({"total": [8]}, id="total-list"),
    pytest.param({"reserved": 1}, id="total-missing"),
    pytest.param({"total": 8, "reserved": -1}, id="reserved-negative"),
    pytest.param({"total": 8, "reserved": MAX_INT + 1}, id="reserved-too-big"),
    pytest.param({"total": 8, "reserved": 0.5}, id="reserved-float"),
    pytest.param({"total": 8, "min_unit": 0}, id="min-unit-zero"),
    pytest.param({"total": 8, "min_unit": MAX_INT + 1}, id="min-unit-too-big"),
    pytest.param({"total": 8, "max_unit": 0}, id="max-unit-zero"),
    pytest.param({"total": 8, "max_unit": "4"}, id="max-unit-string"),
    pytest.param({"total": 8, "step_size": 0}, id="step-size-zero"),
    pytest.param({"total": 8, "step_size": -2}, id="step-size-negative"),
    pytest.param({"total": 8, "allocation_ratio": "16.0"}, id="ratio-string"),
    pytest.param({"total": 8, "allocation_ratio": 3.5e38}, id="ratio-above-float-max"),
    pytest.param({"total": 8, "allocation_ratio": None}, id="ratio-null"),
    pytest.param({"total": 8, "used": 1}, id="unknown-field"),
]


@pytest.mark.parametrize("kind", WRITES)
@pytest.mark.parametrize("fields", BAD_FIELDS)
def test_invalid_field_is_400_and_changes_nothing(api, kind, fields):
    rp = provider_for(kind)
    before = stored(rp)
    r = write(api, rp, kind, fields)
    assert r.status == 400, r
    assert "JSON does not validate" in r.error["detail"]
    assert stored(rp) == before


@pytest.mark.parametrize("kind", WRITES)
@pytest.mark.parametrize("ratio", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_allocation_ratio_is_400_and_changes_nothing(api, kind, ratio):
    # Python's JSON parser accepts these bare words; the write must still refuse them.
    rp = provider_for(kind)
    before = stored(rp)

    class RawClient:
        def _raw(self, method, url, body):
            text = json.dumps(body).replace('"RATIO"', ratio)
            return getattr(api, method)(url, raw=text)

        def put(self, url, body):
            return self._raw("put", url, body)

        def post(self, url, body):
            return self._raw("post", url, body)

    r = write(RawClient(), rp, kind, {"total": 8, "allocation_ratio": "RATIO"})
    assert r.status == 400, r
    assert "JSON does not validate" in r.error["detail"]
    assert stored(rp) == before


@pytest.mark.parametrize("kind", WRITES)
def test_omitted_fields_take_placement_defaults(api, kind):
    rp = provider_for(kind)
    r = write(api, rp, kind, {"total": 5})
    assert r.status in (200, 201)
    assert {k: sent_record(r, kind)[k] for k in DEFAULTS} == DEFAULTS
    assert stored(rp)[1]["VCPU"] == {**DEFAULTS, "total": 5}


@pytest.mark.parametrize("kind", WRITES)
def test_largest_values_are_accepted(api, kind):
    rp = provider_for(kind)
    fields = {
        "total": MAX_INT,
        "reserved": MAX_INT - 1,
        "min_unit": MAX_INT,
        "max_unit": MAX_INT,
        "step_size": MAX_INT,
        "allocation_ratio": 3.40282e38,
    }
    r = write(api, rp, kind, fields)
    assert r.status in (200, 201), r
    assert stored(rp)[1]["VCPU"] == fields


@pytest.mark.parametrize("kind", WRITES)
def test_smallest_values_are_accepted(api, kind):
    rp = provider_for(kind)
    fields = {"total": 1, "reserved": 0, "min_unit": 1, "max_unit": 1, "step_size": 1}
    r = write(api, rp, kind, fields)
    assert r.status in (200, 201), r
    assert stored(rp)[1]["VCPU"] == {**fields, "allocation_ratio": 1.0}


@pytest.mark.parametrize("kind", WRITES)
def test_integral_float_total_is_stored_and_shown_as_integer(api, kind):
    rp = provider_for(kind)
    r = write(api, rp, kind, {"total": 8.0})
    assert r.status in (200, 201)
    assert json.dumps(sent_record(r, kind)["total"]) == "8"
    assert stored(rp)[1]["VCPU"]["total"] == 8


@pytest.mark.parametrize("kind", WRITES)
def test_integer_allocation_ratio_is_shown_as_float(api, kind):
    rp = provider_for(kind)
    r = write(api, rp, kind, {"total": 8, "allocation_ratio": 2})
    assert r.status in (200, 201)
    assert json.dumps(sent_record(r, kind)["allocation_ratio"]) == "2.0"


@pytest.mark.parametrize("kind", WRITES)
def test_min_max_and_step_are_not_checked_against_each_other(api, kind):
    # Placement stores them as given; they only limit what may be allocated.
    rp = provider_for(kind)
    fields = {"total": 4, "min_unit": 8, "max_unit": 2, "step_size": 16}
    r = write(api, rp, kind, fields)
    assert r.status in (200, 201), r
    assert stored(rp)[1]["VCPU"] == {**DEFAULTS, **fields}


# --- the capacity rule ----------------------------------------------------------------


@pytest.mark.parametrize("version", ["1.0", "1.25", "1.26", "latest"])
@pytest.mark.parametrize("kind", WRITES)
def test_reserved_above_total_is_400_at_every_version(api_at, kind, version):
    rp = provider_for(kind)
    before = stored(rp)
    r = write(api_at(version), rp, kind, {"total": 8, "reserved": 9})
    assert r.status == 400
    assert "Invalid inventory for 'VCPU' on resource provider" in r.error["detail"]
    assert stored(rp) == before


@pytest.mark.parametrize("version", ["1.0", "1.25"])
@pytest.mark.parametrize("kind", WRITES)
def test_reserved_equal_to_total_is_400_before_1_26(api_at, kind, version):
    rp = provider_for(kind)
    before = stored(rp)
    r = write(api_at(version), rp, kind, {"total": 8, "reserved": 8})
    assert r.status == 400
    assert "The reserved value is greater than or equal to total." in r.error["detail"]
    assert stored(rp) == before


@pytest.mark.parametrize("version", ["1.26", "latest"])
@pytest.mark.parametrize("kind", WRITES)
def test_reserved_equal_to_total_is_allowed_from_1_26(api_at, kind, version):
    rp = provider_for(kind)
    r = write(api_at(version), rp, kind, {"total": 8, "reserved": 8})
    assert r.status in (200, 201), r
    assert stored(rp)[1]["VCPU"]["reserved"] == 8


@pytest.mark.parametrize("kind", WRITES)
def test_reserved_above_total_message_from_1_26(api_at, kind):
    rp = provider_for(kind)
    r = write(api_at("1.26"), rp, kind, {"total": 8, "reserved": 9})
    assert "The reserved value is greater than total." in r.error["detail"]


@pytest.mark.parametrize("kind", WRITES)
def test_capacity_message_names_the_action(api, kind):
    rp = provider_for(kind)
    r = write(api, rp, kind, {"total": 8, "reserved": 9})
    action = "create" if kind == "create" else "update"
    assert f"Unable to {action} inventory for resource provider {rp.uuid}" in r.error["detail"]


@pytest.mark.parametrize("kind", WRITES)
def test_allocation_ratio_that_leaves_no_capacity_is_400_before_1_26(api_at, kind):
    # Capacity is int((total - reserved) * allocation_ratio): here int(0.5) == 0.
    rp = provider_for(kind)
    before = stored(rp)
    r = write(api_at("1.25"), rp, kind, {"total": 1, "allocation_ratio": 0.5})
    assert r.status == 400
    assert stored(rp) == before


@pytest.mark.parametrize("kind", WRITES)
def test_allocation_ratio_that_leaves_no_capacity_is_allowed_from_1_26(api_at, kind):
    rp = provider_for(kind)
    r = write(api_at("1.26"), rp, kind, {"total": 1, "allocation_ratio": 0.5})
    assert r.status in (200, 201)
    assert stored(rp)[1]["VCPU"]["allocation_ratio"] == 0.5


@pytest.mark.parametrize("kind", WRITES)
def test_zero_allocation_ratio_follows_the_capacity_rule(api_at, kind):
    # Placement sets no minimum: a ratio of 0 leaves no capacity, refused before 1.26.
    rp = provider_for(kind)
    assert write(api_at("1.25"), rp, kind, {"total": 8, "allocation_ratio": 0}).status == 400
    r = write(api_at("1.26"), rp, kind, {"total": 8, "allocation_ratio": 0})
    assert r.status in (200, 201)
    assert stored(rp)[1]["VCPU"]["allocation_ratio"] == 0.0


@pytest.mark.parametrize("version", ["1.25", "latest"])
@pytest.mark.parametrize("kind", WRITES)
def test_negative_allocation_ratio_is_400(api_at, kind, version):
    rp = provider_for(kind)
    before = stored(rp)
    r = write(api_at(version), rp, kind, {"total": 8, "allocation_ratio": -1.0})
    assert r.status == 400
    assert stored(rp) == before


@pytest.mark.parametrize("kind", WRITES)
def test_fractional_allocation_ratio_is_kept(api, kind):
    rp = provider_for(kind)
    r = write(api, rp, kind, {"total": 8, "allocation_ratio": 1.5})
    assert r.status in (200, 201)
    assert sent_record(r, kind)["allocation_ratio"] == 1.5


# --- body shape ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"inventories": {}}, id="generation-missing"),
        pytest.param({"resource_provider_generation": 0}, id="inventories-missing"),
        pytest.param(
            {"resource_provider_generation": "0", "inventories": {}}, id="generation-string"
        ),
        pytest.param(
            {"resource_provider_generation": None, "inventories": {}}, id="generation-null"
        ),
        pytest.param({"resource_provider_generation": 0, "inventories": []}, id="inventories-list"),
        pytest.param(
            {"resource_provider_generation": 0, "inventories": {"VCPU": 8}}, id="record-int"
        ),
        pytest.param(
            {"resource_provider_generation": 0, "inventories": {}, "x": 1}, id="extra-key"
        ),
        pytest.param(
            {
                "resource_provider_generation": 0,
                "inventories": {"VCPU": {"total": 8, "resource_class": "VCPU"}},
            },
            id="class-key-in-record",
        ),
        pytest.param([], id="list-body"),
        pytest.param("inventories", id="string-body"),
    ],
)
def test_replace_with_bad_body_is_400_and_changes_nothing(api, body):
    rp = make_provider(inventories={"VCPU": 8})
    before = stored(rp)
    r = api.put(inv_url(rp), body)
    assert r.status == 400
    assert "JSON does not validate" in r.error["detail"]
    assert stored(rp) == before


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"total": 8}, id="generation-missing"),
        pytest.param({"resource_provider_generation": 0.5, "total": 8}, id="generation-float"),
        pytest.param(
            {"resource_provider_generation": 0, "total": 8, "resource_class": "VCPU"},
            id="class-key",
        ),
        pytest.param({"resource_provider_generation": 0, "inventories": {}}, id="replace-body"),
    ],
)
def test_update_with_bad_body_is_400_and_changes_nothing(api, body):
    rp = make_provider(inventories={"VCPU": 8})
    before = stored(rp)
    r = api.put(inv_url(rp, "VCPU"), body)
    assert r.status == 400
    assert "JSON does not validate" in r.error["detail"]
    assert stored(rp) == before


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"total": 8}, id="class-missing"),
        pytest.param({"resource_class": "vcpu", "total": 8}, id="class-lowercase"),
        pytest.param({"resource_class": "", "total": 8}, id="class-empty"),
        pytest.param({"resource_class": 1, "total": 8}, id="class-int"),
        pytest.param(
            {"resource_class": "VCPU", "total": 8, "resource_provider_generation": "x"},
            id="generation-string",
        ),
    ],
)
def test_create_with_bad_body_is_400_and_changes_nothing(api, body):
    rp = make_provider()
    r = api.post(inv_url(rp), body)
    assert r.status == 400
    assert "JSON does not validate" in r.error["detail"]
    assert stored(rp) == (0, {})


@pytest.mark.parametrize("kind", WRITES)
def test_malformed_json_is_400(api, kind):
    rp = provider_for(kind)
    before = stored(rp)
    url = inv_url(rp, "VCPU") if kind == "update" else inv_url(rp)
    method = api.post if kind == "create" else api.put
    r = method(url, raw='{"total": 8,')
    assert r.status == 400
    assert "Malformed JSON" in r.error["detail"]
    assert stored(rp) == before


@pytest.mark.parametrize("kind", WRITES)
def test_body_that_is_not_json_media_type_is_415(api, kind):
    rp = provider_for(kind)
    before = stored(rp)
    url = inv_url(rp, "VCPU") if kind == "update" else inv_url(rp)
    method = api.post if kind == "create" else api.put
    r = method(url, raw='{"total": 8}', content_type="text/plain")
    assert r.status == 415
    assert stored(rp) == before


def test_huge_generation_is_a_conflict_not_an_error(api):
    rp = make_provider(inventories={"VCPU": 8})
    r = api.put(inv_url(rp), {"resource_provider_generation": 10**30, "inventories": {}})
    assert r.status == 409


def test_deeply_nested_body_is_400(api):
    rp = make_provider(inventories={"VCPU": 8})
    raw = '{"resource_provider_generation": 0, "inventories": ' + "[" * 100000 + "]" * 100000 + "}"
    r = api.put(inv_url(rp), raw=raw)
    assert r.status == 400
