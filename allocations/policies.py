"""The policy rules of the allocations app: Placement's rules for allocations, usages and the
reshaper (defaults as Placement 16's; ``placementsite.core.api.policy`` explains how they apply)."""

from placementsite.core.api.policy import (
    ADMIN_OR_PROJECT_READER_OR_SERVICE,
    ADMIN_OR_SERVICE,
    SERVICE,
    rule,
)

ALLOCATIONS_MANAGE = "placement:allocations:manage"
ALLOCATIONS_LIST = "placement:allocations:list"
ALLOCATIONS_UPDATE = "placement:allocations:update"
ALLOCATIONS_DELETE = "placement:allocations:delete"
PROVIDER_ALLOCATIONS_LIST = "placement:resource_providers:allocations:list"
PROVIDER_USAGES = "placement:resource_providers:usages"
USAGES = "placement:usages"
RESHAPE = "placement:reshaper:reshape"

rules = [
    rule(ALLOCATIONS_MANAGE, ADMIN_OR_SERVICE, "Manage allocations (POST /allocations)."),
    rule(ALLOCATIONS_LIST, ADMIN_OR_SERVICE, "List allocations of a consumer."),
    rule(ALLOCATIONS_UPDATE, ADMIN_OR_SERVICE, "Update allocations of a consumer."),
    rule(ALLOCATIONS_DELETE, ADMIN_OR_SERVICE, "Delete allocations of a consumer."),
    rule(PROVIDER_ALLOCATIONS_LIST, ADMIN_OR_SERVICE, "List resource provider allocations."),
    rule(PROVIDER_USAGES, ADMIN_OR_SERVICE, "List resource provider usages."),
    # Admins and services read any project's usages; a project's readers their own.
    rule(USAGES, ADMIN_OR_PROJECT_READER_OR_SERVICE, "List total usages of a project."),
    rule(RESHAPE, SERVICE, "Reshape inventories and allocations."),
]
