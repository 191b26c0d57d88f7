"""Domain errors leave every edge as the HTTP error of their kind: status from the one mapping
(placement_error_for), detail and code as raised, byte for byte what the services' HTTP errors
gave before."""

import pytest

from placementsite.core.api.errors import EXPLANATIONS, placement_error_for
from placementsite.core.exceptions import DomainError
from tests.api.refusal_urls import REFUSALS
from tests.conftest import PlacementClient, new_uuid
from tests.factories import make_provider
from tests.scheduling.scheduler_helpers import boot, make_flavor, make_host

pytestmark = pytest.mark.urls("tests.api.refusal_urls")

KINDS = list(REFUSALS)


def without_request_id(response):
    body = response.json
    for error in body["errors"]:
        error.pop("request_id")
    return body


@pytest.mark.parametrize("kind", KINDS)
def test_the_mapping_gives_the_kind_its_status_and_keeps_detail_and_code(kind):
    make, status, code = REFUSALS[kind]
    error = make()
    answer = placement_error_for(error)
    assert (answer.status, answer.detail, answer.code) == (status, error.detail, code)


def test_a_domain_error_of_no_kind_is_a_400():
    assert placement_error_for(DomainError("Refused.")).status == 400


@pytest.mark.parametrize("path", ["/test-refusals", "/test-refusals-plain"])
@pytest.mark.parametrize("kind", KINDS)
def test_placement_api_answers_as_the_http_error_did(api, path, kind):
    make, status, code = REFUSALS[kind]
    response = api.get(f"{path}/{kind}")
    assert response.status == status
    assert response.error_code == code
    assert response.error["detail"] == f"{EXPLANATIONS[status]}\n\n {make().detail}  "
    assert response.error["request_id"] == response.headers["openstack-request-id"]
    before = api.get(f"{path}/{kind}?as=http")
    assert (response.status, without_request_id(response)) == (
        before.status,
        without_request_id(before),
    )


@pytest.mark.parametrize("kind", KINDS)
def test_placement_api_shows_no_code_before_1_23(api_at, kind):
    response = api_at("1.22").get(f"/test-refusals/{kind}")
    assert response.status == REFUSALS[kind][1]
    assert "code" not in response.error


@pytest.mark.parametrize("kind", KINDS)
def test_rest_api_answers_as_the_http_error_did(db, kind):
    make, status, code = REFUSALS[kind]
    rest = PlacementClient()
    response = rest.get(f"/api/test-refusals/{kind}/")
    assert response.status == status
    assert response.error["code"] == code
    assert response.error["detail"] == make().detail
    before = rest.get(f"/api/test-refusals/{kind}/?as=http")
    assert (response.status, without_request_id(response)) == (
        before.status,
        without_request_id(before),
    )


# --- real endpoints: a service's refusal, whole, on each API ------------------------------------


def test_placement_invalid_request_from_a_service(api):
    response = api.delete("/resource_classes/VCPU")
    assert response.status == 400
    assert response.error == {
        "status": 400,
        "title": "Bad Request",
        "detail": f"{EXPLANATIONS[400]}\n\n Error in delete resource class: Cannot delete "
        "standard resource class VCPU  ",
        "code": "placement.undefined_code",
        "request_id": response.headers["openstack-request-id"],
    }


def test_placement_not_found_from_a_selector(api):
    missing = new_uuid()
    response = api.get(f"/resource_providers/{missing}/inventories")
    assert response.status == 404
    assert response.error_code == "placement.undefined_code"
    assert response.error["detail"] == (
        f"{EXPLANATIONS[404]}\n\n No resource provider with uuid {missing} found  "
    )


def test_placement_conflict_kind_from_a_service(api):
    parent = make_provider(name="parent")
    make_provider(name="child", parent=parent)
    response = api.delete(f"/resource_providers/{parent.uuid}")
    assert response.status == 409
    assert response.error_code == "placement.resource_provider.cannot_delete_parent"
    assert response.error["detail"] == (
        f"{EXPLANATIONS[409]}\n\n Unable to delete parent resource provider {parent.uuid}: "
        "It has child resource providers.  "
    )


def test_rest_invalid_request_from_a_service(api):
    response = api.request("PATCH", "/api/resource-classes/VCPU/", {"unit": "cores"})
    assert response.status == 400
    assert response.error == {
        "status": 400,
        "title": "Bad Request",
        "detail": "Cannot update standard resource class VCPU",
        "code": "api.standard_class",
        "request_id": response.headers["openstack-request-id"],
    }


def test_rest_conflict_from_a_view_and_no_valid_host_from_a_service(api):
    make_host(api, "cn1", {"VCPU": 2, "MEMORY_MB": 2048, "DISK_GB": 20})
    make_flavor(api, "f", vcpus=2, ram=1024, disk=10)
    assert boot(api, "f", name="one").status == 201

    refused = boot(api, "f", name="two")
    assert refused.status == 409
    error = refused.error
    assert error.pop("explain")["hosts"] == 1
    assert error == {
        "status": 409,
        "title": "Conflict",
        "detail": "No valid host was found for two (flavor f).",
        "code": "scheduler.no_valid_host",
        "request_id": refused.headers["openstack-request-id"],
    }

    in_use = api.delete("/api/flavors/f/")
    assert in_use.status == 409
    assert in_use.error == {
        "status": 409,
        "title": "Conflict",
        "detail": "Flavor f is used by servers.",
        "code": "scheduler.flavor_in_use",
        "request_id": in_use.headers["openstack-request-id"],
    }
