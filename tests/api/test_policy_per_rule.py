"""Every Placement endpoint checks its own policy rule, and only that rule.

For each rule of ``placementsite.api.policy.RULES``: a policy file refusing that rule alone
turns an admin's request to the endpoint into a 403 that names the rule, and a policy file
allowing that rule alone to anyone lets a non-admin caller past the policy check. A last test
checks the table covers every rule, so a new endpoint without a row here fails.
"""

import pytest

from placementsite.api import policy
from tests.api.endpoint_tests import assert_refused_by
from tests.conftest import PlacementClient
from tests.factories import make_allocation, make_consumer, make_provider

pytestmark = pytest.mark.django_db

RP = "11111111-1111-4111-8111-111111111111"
CONSUMER = "22222222-2222-4222-8222-222222222222"
PROJECT = "project-a"

# rule -> (method, path, body)
ENDPOINTS = {
    "placement:resource_providers:list": ("GET", "/resource_providers", None),
    "placement:resource_providers:create": ("POST", "/resource_providers", {"name": "new"}),
    "placement:resource_providers:show": ("GET", f"/resource_providers/{RP}", None),
    "placement:resource_providers:update": ("PUT", f"/resource_providers/{RP}", {"name": "x"}),
    "placement:resource_providers:delete": ("DELETE", f"/resource_providers/{RP}", None),
    "placement:resource_classes:list": ("GET", "/resource_classes", None),
    "placement:resource_classes:create": ("POST", "/resource_classes", {"name": "CUSTOM_NEW"}),
    "placement:resource_classes:show": ("GET", "/resource_classes/VCPU", None),
    "placement:resource_classes:update": ("PUT", "/resource_classes/CUSTOM_PUT", None),
    "placement:resource_classes:delete": ("DELETE", "/resource_classes/CUSTOM_GONE", None),
    "placement:resource_providers:inventories:list": (
        "GET",
        f"/resource_providers/{RP}/inventories",
        None,
    ),
    "placement:resource_providers:inventories:create": (
        "POST",
        f"/resource_providers/{RP}/inventories",
        {"resource_class": "DISK_GB", "total": 10, "resource_provider_generation": 1},
    ),
    "placement:resource_providers:inventories:show": (
        "GET",
        f"/resource_providers/{RP}/inventories/VCPU",
        None,
    ),
    "placement:resource_providers:inventories:update": (
        "PUT",
        f"/resource_providers/{RP}/inventories/VCPU",
        {"total": 16, "resource_provider_generation": 1},
    ),
    "placement:resource_providers:inventories:delete": (
        "DELETE",
        f"/resource_providers/{RP}/inventories/MEMORY_MB",
        None,
    ),
    "placement:resource_providers:aggregates:list": (
        "GET",
        f"/resource_providers/{RP}/aggregates",
        None,
    ),
    "placement:resource_providers:aggregates:update": (
        "PUT",
        f"/resource_providers/{RP}/aggregates",
        {"aggregates": [], "resource_provider_generation": 1},
    ),
    "placement:resource_providers:usages": ("GET", f"/resource_providers/{RP}/usages", None),
    "placement:usages": ("GET", f"/usages?project_id={PROJECT}", None),
    "placement:traits:list": ("GET", "/traits", None),
    "placement:traits:show": ("GET", "/traits/HW_CPU_X86_AVX2", None),
    "placement:traits:update": ("PUT", "/traits/CUSTOM_NEW_TRAIT", None),
    "placement:traits:delete": ("DELETE", "/traits/CUSTOM_GONE_TRAIT", None),
    "placement:resource_providers:traits:list": ("GET", f"/resource_providers/{RP}/traits", None),
    "placement:resource_providers:traits:update": (
        "PUT",
        f"/resource_providers/{RP}/traits",
        {"traits": [], "resource_provider_generation": 1},
    ),
    "placement:resource_providers:traits:delete": (
        "DELETE",
        f"/resource_providers/{RP}/traits",
        None,
    ),
    "placement:allocations:manage": ("POST", "/allocations", {}),
    "placement:allocations:list": ("GET", f"/allocations/{CONSUMER}", None),
    "placement:allocations:update": (
        "PUT",
        f"/allocations/{CONSUMER}",
        {
            "allocations": {RP: {"resources": {"VCPU": 1}}},
            "project_id": PROJECT,
            "user_id": "user-a",
            "consumer_generation": 1,
            "consumer_type": "INSTANCE",
        },
    ),
    "placement:allocations:delete": ("DELETE", f"/allocations/{CONSUMER}", None),
    "placement:resource_providers:allocations:list": (
        "GET",
        f"/resource_providers/{RP}/allocations",
        None,
    ),
    "placement:allocation_candidates:list": (
        "GET",
        "/allocation_candidates?resources=VCPU:1",
        None,
    ),
    "placement:reshaper:reshape": ("POST", "/reshaper", {"inventories": {}, "allocations": {}}),
}


@pytest.fixture
def cloud(db):
    """One provider with inventories and one consumer's allocation, for every endpoint."""
    provider = make_provider("policy-rp", uuid=RP, inventories={"VCPU": 8, "MEMORY_MB": 1024})
    make_allocation(provider, make_consumer(uuid=CONSUMER, project=PROJECT), {"VCPU": 1})
    admin = PlacementClient(version="latest")
    assert admin.put("/resource_classes/CUSTOM_GONE").status == 201
    assert admin.put("/traits/CUSTOM_GONE_TRAIT").status == 201
    return provider


def call(client, rule):
    method, path, body = ENDPOINTS[rule]
    return client.request(method, path, body)


@pytest.mark.parametrize("rule", sorted(ENDPOINTS))
def test_refusing_the_rule_refuses_the_endpoint(cloud, policy_file, rule):
    policy_file({rule: "!"})
    response = call(PlacementClient(version="latest"), rule)
    assert_refused_by(response, rule)


@pytest.mark.parametrize("rule", sorted(ENDPOINTS))
def test_allowing_the_rule_admits_a_non_admin(cloud, policy_file, rule):
    policy_file({rule: "@"})
    response = call(PlacementClient(token="alice:project-a", version="latest"), rule)
    assert response.status != 403, response


def test_every_placement_rule_has_an_endpoint_here():
    assert set(ENDPOINTS) == set(policy.RULES) - policy.UNSCOPED_RULES
