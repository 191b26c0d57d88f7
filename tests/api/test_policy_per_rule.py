"""Every Placement and /api/ endpoint checks its own policy rule, and only that rule.

For each rule the apps register (``placementsite.core.api.policy.registered_rules``): a policy file
refusing that rule alone turns an admin's request to the endpoint into a 403 that names the
rule, and a policy file allowing that rule alone to anyone lets a non-admin caller past the
policy check. The last tests check the tables cover every rule, and every /api/ route checks
one of them, so a new endpoint or rule without a row here fails.
"""

from types import SimpleNamespace

import pytest

from placementsite import api_urls
from placementsite.core.api import policy
from placementsite.core.rest.permissions import PolicyPermission
from tests.api.endpoint_tests import assert_refused_by
from tests.conftest import PlacementClient
from tests.factories import make_allocation, make_consumer, make_provider, resource_class
from tests.providers.hosts import report
from tests.scheduling.move_helpers import boot_one, setup_hosts

pytestmark = pytest.mark.django_db

RP = "11111111-1111-4111-8111-111111111111"
CONSUMER = "22222222-2222-4222-8222-222222222222"
PROJECT = "project-a"
HOST = "policy-host"
POOL = "policy-pool"
POOL_BODY = {"kind": "shared_storage", "inventories": {"DISK_GB": {"total": 100}}}
SERVER_BODY = {"name": "new", "flavor": "m1.small", "project_id": PROJECT, "user_id": "user-a"}

# rule -> (method, path, body); a path's {server} and {migration} are ids made by api_world
PLACEMENT_ENDPOINTS = {
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


API_ENDPOINTS = {
    "placement:api:root": ("GET", "/api/", None),
    "placement:api:schema": ("GET", "/api/schema/", None),
    "placement:api:flavors:list": ("GET", "/api/flavors/", None),
    "placement:api:flavors:show": ("GET", "/api/flavors/m1.small/", None),
    "placement:api:flavors:create": (
        "POST",
        "/api/flavors/",
        {"name": "m1.new", "vcpus": 1, "ram": 512, "disk": 1},
    ),
    "placement:api:flavors:update": (
        "PATCH",
        "/api/flavors/m1.spare/",
        {"extra_specs": {"hw:mem_page_size": "large"}},
    ),
    "placement:api:flavors:delete": ("DELETE", "/api/flavors/m1.spare/", None),
    "placement:api:flavors:access:list": ("GET", "/api/flavors/m1.private/access/", None),
    "placement:api:flavors:access:add": (
        "POST",
        "/api/flavors/m1.private/access/",
        {"project_id": "project-z"},
    ),
    "placement:api:flavors:access:remove": (
        "DELETE",
        "/api/flavors/m1.private/access/project-b/",
        None,
    ),
    "placement:api:servers:list": ("GET", "/api/servers/", None),
    "placement:api:servers:show": ("GET", "/api/servers/{server}/", None),
    "placement:api:servers:create": ("POST", "/api/servers/", SERVER_BODY),
    "placement:api:servers:delete": ("DELETE", "/api/servers/{server}/", None),
    "placement:api:servers:migrate": ("POST", "/api/servers/{server}/migrate/", {}),
    "placement:api:servers:resize": (
        "POST",
        "/api/servers/{server}/resize/",
        {"flavor": "m1.medium"},
    ),
    "placement:api:servers:live_migrate": ("POST", "/api/servers/{server}/live-migrate/", {}),
    "placement:api:servers:evacuate": ("POST", "/api/servers/{server}/evacuate/", {}),
    "placement:api:migrations:list": ("GET", "/api/migrations/", None),
    "placement:api:server_groups:list": ("GET", "/api/server-groups/", None),
    "placement:api:server_groups:show": ("GET", "/api/server-groups/{group}/", None),
    "placement:api:server_groups:create": (
        "POST",
        "/api/server-groups/",
        {"name": "g", "policy": "affinity", "project_id": "project-a"},
    ),
    "placement:api:server_groups:delete": ("DELETE", "/api/server-groups/{group}/", None),
    "placement:api:migrations:show": ("GET", "/api/migrations/{migration}/", None),
    "placement:api:migrations:confirm": ("POST", "/api/migrations/{migration}/confirm/", {}),
    "placement:api:migrations:revert": ("POST", "/api/migrations/{migration}/revert/", {}),
    "placement:api:migrations:finish": ("POST", "/api/migrations/{migration}/finish/", {}),
    "placement:api:migrations:fail": (
        "POST",
        "/api/migrations/{migration}/fail/",
        {"reason": "host lost"},
    ),
    "placement:api:scheduler:explain": ("POST", "/api/scheduler/explain/", SERVER_BODY),
    "placement:api:capacity:list": ("GET", "/api/capacity/?flavor=m1.small", None),
    "placement:api:aggregates:list": ("GET", "/api/aggregates/", None),
    "placement:api:aggregates:show": ("GET", "/api/aggregates/agg.spare/", None),
    "placement:api:aggregates:create": ("POST", "/api/aggregates/", {"name": "agg.new"}),
    "placement:api:aggregates:update": (
        "PATCH",
        "/api/aggregates/agg.spare/",
        {"metadata": {"k": "v"}},
    ),
    "placement:api:aggregates:delete": ("DELETE", "/api/aggregates/agg.spare/", None),
    "placement:api:compute_nodes:list": ("GET", "/api/compute-nodes/", None),
    "placement:api:compute_nodes:show": ("GET", f"/api/compute-nodes/{HOST}/", None),
    "placement:api:compute_nodes:update": ("PUT", f"/api/compute-nodes/{HOST}/", report()),
    "placement:api:compute_nodes:adopt": (
        "PUT",
        "/api/compute-nodes/made-by-hand/?adopt=true",
        report(),
    ),
    "placement:api:compute_nodes:delete": ("DELETE", f"/api/compute-nodes/{HOST}/", None),
    "placement:api:compute_nodes:force_down": (
        "PATCH",
        f"/api/compute-nodes/{HOST}/",
        {"forced_down": True},
    ),
    "placement:api:compute_nodes:drain": ("POST", f"/api/compute-nodes/{HOST}/drain/", {}),
    "placement:api:resource_pools:list": ("GET", "/api/resource-pools/", None),
    "placement:api:resource_pools:show": ("GET", f"/api/resource-pools/{POOL}/", None),
    "placement:api:resource_pools:update": ("PUT", f"/api/resource-pools/{POOL}/", POOL_BODY),
    "placement:api:resource_pools:delete": ("DELETE", f"/api/resource-pools/{POOL}/", None),
    "placement:api:resource_classes:list": ("GET", "/api/resource-classes/", None),
    "placement:api:resource_classes:show": ("GET", "/api/resource-classes/VCPU/", None),
    "placement:api:resource_classes:update": (
        "PATCH",
        "/api/resource-classes/CUSTOM_API/",
        {"unit": "hours"},
    ),
}

# The site's own pages checked by a rule (with PLACEMENT_METRICS=token).
SITE_ENDPOINTS = {
    "placement:metrics": ("GET", "/metrics", None),
    "placement:healthcheck:detailed": ("GET", "/healthcheck?detailed", None),
}
# Rules that widen a list (or the flavors one sees) rather than guard an endpoint: their own
# tests (tests/security/test_api_project_scoping.py, tests/scheduling/test_flavor_access.py).
SCOPE_RULES = {
    "placement:api:servers:all_projects",
    "placement:api:migrations:all_projects",
    "placement:api:flavors:all_projects",
    "placement:api:server_groups:all_projects",
}
# The shared base rules, named by the others (``rule:admin_or_service_api``).
BASE_RULES = {r.name for r in policy.BASE_RULES}

ENDPOINTS = {**PLACEMENT_ENDPOINTS, **API_ENDPOINTS, **SITE_ENDPOINTS}


@pytest.fixture
def cloud(db):
    """One provider with inventories and one consumer's allocation, for every Placement
    endpoint, whose paths name them as constants (no ids to fill in)."""
    provider = make_provider("policy-rp", uuid=RP, inventories={"VCPU": 8, "MEMORY_MB": 1024})
    make_allocation(provider, make_consumer(uuid=CONSUMER, project=PROJECT), {"VCPU": 1})
    admin = PlacementClient(version="latest")
    assert admin.put("/resource_classes/CUSTOM_GONE").status == 201
    assert admin.put("/traits/CUSTOM_GONE_TRAIT").status == 201
    return {}


@pytest.fixture
def api_world(db):
    """Hosts and flavors, an idle server, another one moving, a compute host and a custom
    class, for every /api/ endpoint; returns the ids their paths name."""
    admin = PlacementClient(version="latest")
    setup_hosts(admin, flavors=("m1.small", "m1.medium", "m1.spare"))
    idle = boot_one(admin, name="idle")
    moving = boot_one(admin, name="moving")
    migration = admin.post(f"/api/servers/{moving['id']}/migrate/", {})
    assert migration.status == 201, migration
    assert admin.put(f"/api/compute-nodes/{HOST}/", report()).status == 201
    assert admin.put(f"/api/resource-pools/{POOL}/", POOL_BODY).status == 201
    resource_class("CUSTOM_API")
    assert admin.post("/resource_providers", {"name": "made-by-hand"}).status == 200
    private = {"name": "m1.private", "vcpus": 1, "ram": 512, "disk": 1, "is_public": False}
    assert admin.post("/api/flavors/", private).status == 201
    assert admin.post("/api/flavors/m1.private/access/", {"project_id": "project-b"}).status == 201
    assert admin.post("/api/aggregates/", {"name": "agg.spare"}).status == 201
    group = admin.post(
        "/api/server-groups/", {"name": "g", "policy": "affinity", "project_id": "project-a"}
    )
    assert group.status == 201, group
    return {
        "server": idle["id"],
        "migration": migration.json["migration"]["id"],
        "group": group.json["id"],
    }


@pytest.fixture
def ids(request, rule):
    """What the rule's endpoint needs in the database, and the ids its path names."""
    return request.getfixturevalue("api_world" if rule in API_ENDPOINTS else "cloud")


@pytest.fixture(autouse=True)
def metrics_behind_a_token(settings):
    settings.PLACEMENT_METRICS = "token"


def call(client, rule, ids):
    method, path, body = ENDPOINTS[rule]
    return client.request(method, path.format(**ids), body)


@pytest.mark.parametrize("rule", sorted(ENDPOINTS))
def test_refusing_the_rule_refuses_the_endpoint(ids, policy_file, rule):
    policy_file({rule: "!"})
    assert_refused_by(call(PlacementClient(version="latest"), rule, ids), rule)


# Endpoints that check a second rule besides their own (adopting is a report too).
ALSO_CHECKED = {
    "placement:api:compute_nodes:adopt": "placement:api:compute_nodes:update",
    "placement:api:compute_nodes:force_down": "placement:api:compute_nodes:update",
}


@pytest.mark.parametrize("rule", sorted(ENDPOINTS))
def test_allowing_the_rule_admits_a_non_admin(ids, policy_file, rule):
    also = ALSO_CHECKED.get(rule)
    policy_file({rule: "@", **({also: "@"} if also else {})})
    response = call(PlacementClient(token="alice:project-a", version="latest"), rule, ids)
    assert response.status != 403, response


def test_every_registered_rule_has_an_endpoint_here():
    registered = {r.name for r in policy.registered_rules()}
    assert set(ENDPOINTS) | SCOPE_RULES | BASE_RULES == registered


def test_every_api_rule_has_an_endpoint_here():
    registered = {r.name for r in policy.registered_rules() if r.name.startswith("placement:api:")}
    assert set(API_ENDPOINTS) | SCOPE_RULES == registered


def api_route_rules():
    """The rule PolicyPermission checks for each method a route of /api/ answers."""
    for pattern in api_urls.urlpatterns:
        view = pattern.callback
        for method, action in (getattr(view, "actions", None) or {"get": None}).items():
            if method in view.cls.http_method_names:
                request = SimpleNamespace(method=method.upper())
                yield PolicyPermission.rule_for(request, view.cls(action=action))


def test_every_api_route_checks_a_rule_of_the_table():
    # The adopt and force_down rules are checked by the compute-node update on ?adopt=true
    # and on a forced_down field.
    assert set(api_route_rules()) == set(API_ENDPOINTS) - {
        "placement:api:compute_nodes:adopt",
        "placement:api:compute_nodes:force_down",
    }
