"""The policy rules of the providers app: Placement's rules for resource providers, resource
classes, inventories, aggregates and traits, and those of ``/api/`` compute
hosts and resource class metadata.

Defaults as Placement 16's (``placementsite.core.api.policy`` explains how they apply); the rules of
``/api/`` follow the same pattern: admins and services, and for a host's report any service
whatever the defaults, since that is what a host agent holds.
"""

from placementsite.core.api.policy import ADMIN, ADMIN_OR_SERVICE, rule

RESOURCE_PROVIDERS_LIST = "placement:resource_providers:list"
RESOURCE_PROVIDERS_CREATE = "placement:resource_providers:create"
RESOURCE_PROVIDERS_SHOW = "placement:resource_providers:show"
RESOURCE_PROVIDERS_UPDATE = "placement:resource_providers:update"
RESOURCE_PROVIDERS_DELETE = "placement:resource_providers:delete"
RESOURCE_CLASSES_LIST = "placement:resource_classes:list"
RESOURCE_CLASSES_CREATE = "placement:resource_classes:create"
RESOURCE_CLASSES_SHOW = "placement:resource_classes:show"
RESOURCE_CLASSES_UPDATE = "placement:resource_classes:update"
RESOURCE_CLASSES_DELETE = "placement:resource_classes:delete"
INVENTORIES_LIST = "placement:resource_providers:inventories:list"
INVENTORIES_CREATE = "placement:resource_providers:inventories:create"
INVENTORIES_SHOW = "placement:resource_providers:inventories:show"
INVENTORIES_UPDATE = "placement:resource_providers:inventories:update"
INVENTORIES_DELETE = "placement:resource_providers:inventories:delete"
AGGREGATES_LIST = "placement:resource_providers:aggregates:list"
AGGREGATES_UPDATE = "placement:resource_providers:aggregates:update"
TRAITS_LIST = "placement:traits:list"
TRAITS_SHOW = "placement:traits:show"
TRAITS_UPDATE = "placement:traits:update"
TRAITS_DELETE = "placement:traits:delete"
PROVIDER_TRAITS_LIST = "placement:resource_providers:traits:list"
PROVIDER_TRAITS_UPDATE = "placement:resource_providers:traits:update"
PROVIDER_TRAITS_DELETE = "placement:resource_providers:traits:delete"

# /api/ (the viewsets name the prefix; the action gives the verb)
COMPUTE_NODES = "placement:api:compute_nodes"
COMPUTE_NODES_ADOPT = "placement:api:compute_nodes:adopt"
COMPUTE_NODES_FORCE_DOWN = "placement:api:compute_nodes:force_down"
API_RESOURCE_CLASSES = "placement:api:resource_classes"

rules = [
    rule(RESOURCE_PROVIDERS_LIST, ADMIN_OR_SERVICE, "List resource providers."),
    rule(RESOURCE_PROVIDERS_CREATE, ADMIN_OR_SERVICE, "Create resource provider."),
    rule(RESOURCE_PROVIDERS_SHOW, ADMIN_OR_SERVICE, "Show resource provider."),
    rule(RESOURCE_PROVIDERS_UPDATE, ADMIN_OR_SERVICE, "Update resource provider."),
    rule(RESOURCE_PROVIDERS_DELETE, ADMIN_OR_SERVICE, "Delete resource provider."),
    rule(RESOURCE_CLASSES_LIST, ADMIN_OR_SERVICE, "List resource classes."),
    rule(RESOURCE_CLASSES_CREATE, ADMIN_OR_SERVICE, "Create resource class."),
    rule(RESOURCE_CLASSES_SHOW, ADMIN_OR_SERVICE, "Show resource class."),
    rule(RESOURCE_CLASSES_UPDATE, ADMIN_OR_SERVICE, "Update resource class."),
    rule(RESOURCE_CLASSES_DELETE, ADMIN_OR_SERVICE, "Delete resource class."),
    rule(INVENTORIES_LIST, ADMIN_OR_SERVICE, "List resource provider inventories."),
    rule(INVENTORIES_CREATE, ADMIN_OR_SERVICE, "Create one resource provider inventory."),
    rule(INVENTORIES_SHOW, ADMIN_OR_SERVICE, "Show resource provider inventory."),
    rule(INVENTORIES_UPDATE, ADMIN_OR_SERVICE, "Update resource provider inventory."),
    rule(INVENTORIES_DELETE, ADMIN_OR_SERVICE, "Delete resource provider inventory."),
    rule(AGGREGATES_LIST, ADMIN_OR_SERVICE, "List resource provider aggregates."),
    rule(AGGREGATES_UPDATE, ADMIN_OR_SERVICE, "Update resource provider aggregates."),
    rule(TRAITS_LIST, ADMIN_OR_SERVICE, "List traits."),
    rule(TRAITS_SHOW, ADMIN_OR_SERVICE, "Show trait."),
    rule(TRAITS_UPDATE, ADMIN_OR_SERVICE, "Create trait."),
    rule(TRAITS_DELETE, ADMIN_OR_SERVICE, "Delete trait."),
    rule(PROVIDER_TRAITS_LIST, ADMIN_OR_SERVICE, "List resource provider traits."),
    rule(PROVIDER_TRAITS_UPDATE, ADMIN_OR_SERVICE, "Update resource provider traits."),
    rule(PROVIDER_TRAITS_DELETE, ADMIN_OR_SERVICE, "Delete resource provider traits."),
    rule(f"{COMPUTE_NODES}:list", ADMIN_OR_SERVICE, "GET /api/compute-nodes/: list hosts."),
    rule(f"{COMPUTE_NODES}:show", ADMIN_OR_SERVICE, "GET /api/compute-nodes/{name}/."),
    rule(
        f"{COMPUTE_NODES}:update",
        "role:admin or role:service",
        "PUT /api/compute-nodes/{name}/: a host's report; PATCH: enable or disable it.",
    ),
    rule(
        COMPUTE_NODES_ADOPT,
        ADMIN,
        "PUT /api/compute-nodes/{name}/?adopt=true: hand a provider the host sync did not "
        "create (one of the host's name) to the sync.",
    ),
    rule(
        COMPUTE_NODES_FORCE_DOWN,
        ADMIN,
        "PATCH /api/compute-nodes/{name}/ with forced_down: mark a host down (or up again), as "
        "Nova's forced_down; a forced-down host is never scheduled to and may be evacuated.",
    ),
    rule(f"{COMPUTE_NODES}:delete", ADMIN, "DELETE /api/compute-nodes/{name}/: forget a host."),
    rule(f"{API_RESOURCE_CLASSES}:list", ADMIN_OR_SERVICE, "GET /api/resource-classes/."),
    rule(f"{API_RESOURCE_CLASSES}:show", ADMIN_OR_SERVICE, "GET /api/resource-classes/{name}/."),
    rule(
        f"{API_RESOURCE_CLASSES}:update",
        ADMIN,
        "PATCH /api/resource-classes/{name}/: a custom class's type, unit and description.",
    ),
]

RESOURCE_POOLS = "placement:api:resource_pools"

rules += [
    rule(f"{RESOURCE_POOLS}:list", ADMIN_OR_SERVICE, "GET /api/resource-pools/: list pools."),
    rule(f"{RESOURCE_POOLS}:show", ADMIN_OR_SERVICE, "GET /api/resource-pools/{name}/."),
    rule(
        f"{RESOURCE_POOLS}:update",
        "role:admin or role:service",
        "PUT /api/resource-pools/{name}/: a pool's report; PATCH: enable or disable it.",
    ),
    rule(f"{RESOURCE_POOLS}:delete", ADMIN, "DELETE /api/resource-pools/{name}/: remove a pool."),
]
