"""The policy rules of the scheduling app: Placement's allocation candidates, and ``/api/``
flavors, servers, moves, migrations, explain and capacity.

Rules on one project's rows (a server, a migration) are checked with that row's
``project_id`` as the target; creating one with the project it is for. A list holds the
caller's own project's rows unless ``...:all_projects`` allows it every project's, as Nova's
``get_all_tenants``. A private flavor is listed and used only by the projects given access
(``/api/flavors/{id}/access/``) or by callers ``placement:api:flavors:all_projects`` allows.
"""

from placementsite.core.api.policy import (
    ADMIN,
    ADMIN_OR_PROJECT_READER_OR_SERVICE,
    ADMIN_OR_SERVICE,
    rule,
)

ALLOCATION_CANDIDATES_LIST = "placement:allocation_candidates:list"

FLAVORS = "placement:api:flavors"
FLAVORS_ALL_PROJECTS = "placement:api:flavors:all_projects"
FLAVOR_ACCESS = "placement:api:flavors:access"
SERVERS = "placement:api:servers"
SERVERS_ALL_PROJECTS = "placement:api:servers:all_projects"
MIGRATIONS = "placement:api:migrations"
MIGRATIONS_ALL_PROJECTS = "placement:api:migrations:all_projects"
SCHEDULER = "placement:api:scheduler"
CAPACITY = "placement:api:capacity"
SERVER_GROUPS = "placement:api:server_groups"
SERVER_GROUPS_ALL_PROJECTS = "placement:api:server_groups:all_projects"
# A project's members manage its own groups, as Nova's defaults; admins and services any.
PROJECT_MEMBER = "rule:admin_or_service_api or (role:member and project_id:%(project_id)s)"
# Served by this app (it moves servers) under the providers' /api/compute-nodes/.
COMPUTE_NODES = "placement:api:compute_nodes"
AGGREGATES = "placement:api:aggregates"

MOVES = {
    "migrate": "move a server to another host",
    "resize": "move a server to a new flavor",
    "live_migrate": "live-migrate a server",
    "evacuate": "rebuild a server of a down host elsewhere",
}
SETTLEMENTS = {
    "confirm": "keep the destination, free the source",
    "revert": "back to the source, free the destination",
    "finish": "the move is done (a live migration completes), awaiting confirm or revert",
    "fail": "the move failed: revert",
}

rules = [
    rule(ALLOCATION_CANDIDATES_LIST, ADMIN_OR_SERVICE, "List allocation candidates."),
    # Any authenticated caller lists flavors: the public ones and the private ones its
    # project was given access to.
    rule(f"{FLAVORS}:list", "@", "GET /api/flavors/: the flavors the caller may use."),
    rule(f"{FLAVORS}:show", "@", "GET /api/flavors/{id}/: a flavor the caller may use."),
    rule(f"{FLAVORS}:create", ADMIN, "POST /api/flavors/."),
    rule(f"{FLAVORS}:update", ADMIN, "PUT/PATCH /api/flavors/{id}/."),
    rule(f"{FLAVORS}:delete", ADMIN, "DELETE /api/flavors/{id}/."),
    rule(
        FLAVORS_ALL_PROJECTS,
        ADMIN_OR_SERVICE,
        "See and use every private flavor, whatever projects it was given to.",
    ),
    rule(f"{FLAVOR_ACCESS}:list", ADMIN, "GET /api/flavors/{id}/access/: who may use it."),
    rule(f"{FLAVOR_ACCESS}:add", ADMIN, "POST /api/flavors/{id}/access/: give a project."),
    rule(f"{FLAVOR_ACCESS}:remove", ADMIN, "DELETE /api/flavors/{id}/access/{project}/."),
    rule(f"{SERVERS}:list", ADMIN_OR_SERVICE, "GET /api/servers/."),
    rule(
        SERVERS_ALL_PROJECTS,
        ADMIN_OR_SERVICE,
        "GET /api/servers/ lists every project's servers (else the caller's project's).",
    ),
    rule(f"{SERVERS}:show", ADMIN_OR_SERVICE, "GET /api/servers/{id}/ (target: its project)."),
    rule(
        f"{SERVERS}:create",
        ADMIN_OR_SERVICE,
        "POST /api/servers/: schedule and claim servers (target: the project they are for).",
    ),
    rule(
        f"{SERVERS}:delete",
        ADMIN_OR_SERVICE,
        "DELETE /api/servers/{id}/: free a server's allocations (target: its project).",
    ),
    *(
        rule(
            f"{SERVERS}:{verb}",
            ADMIN_OR_SERVICE,
            f"POST /api/servers/{{id}}/{verb.replace('_', '-')}/: {what} (target: its project).",
        )
        for verb, what in MOVES.items()
    ),
    rule(f"{MIGRATIONS}:list", ADMIN_OR_SERVICE, "GET /api/migrations/."),
    rule(
        MIGRATIONS_ALL_PROJECTS,
        ADMIN_OR_SERVICE,
        "GET /api/migrations/ lists every project's moves (else the caller's project's).",
    ),
    rule(
        f"{MIGRATIONS}:show", ADMIN_OR_SERVICE, "GET /api/migrations/{id}/ (target: its project)."
    ),
    *(
        rule(
            f"{MIGRATIONS}:{verb}",
            ADMIN_OR_SERVICE,
            f"POST /api/migrations/{{id}}/{verb}/: {what} (target: its project).",
        )
        for verb, what in SETTLEMENTS.items()
    ),
    rule(
        f"{SCHEDULER}:explain",
        ADMIN_OR_SERVICE,
        "POST /api/scheduler/explain/: the scheduler's funnel, claiming nothing.",
    ),
    rule(f"{CAPACITY}:list", ADMIN_OR_SERVICE, "GET /api/capacity/?flavor=: how many more fit."),
    rule(
        f"{SERVER_GROUPS}:list",
        ADMIN_OR_PROJECT_READER_OR_SERVICE,
        "GET /api/server-groups/: the caller's project's groups.",
    ),
    rule(
        SERVER_GROUPS_ALL_PROJECTS,
        ADMIN_OR_SERVICE,
        "GET /api/server-groups/ lists every project's groups, and boots may join any of them.",
    ),
    rule(
        f"{SERVER_GROUPS}:show",
        ADMIN_OR_PROJECT_READER_OR_SERVICE,
        "GET /api/server-groups/{id}/ (target: its project).",
    ),
    rule(
        f"{SERVER_GROUPS}:create",
        PROJECT_MEMBER,
        "POST /api/server-groups/ (target: the project it is for).",
    ),
    rule(
        f"{SERVER_GROUPS}:delete",
        PROJECT_MEMBER,
        "DELETE /api/server-groups/{id}/ (target: its project).",
    ),
    rule(
        f"{COMPUTE_NODES}:drain",
        ADMIN,
        "POST /api/compute-nodes/{name}/drain/: disable a host and move every server off it.",
    ),
    rule(f"{AGGREGATES}:list", ADMIN_OR_SERVICE, "GET /api/aggregates/."),
    rule(f"{AGGREGATES}:show", ADMIN_OR_SERVICE, "GET /api/aggregates/{id}/."),
    rule(f"{AGGREGATES}:create", ADMIN, "POST /api/aggregates/: name, zone, metadata."),
    rule(f"{AGGREGATES}:update", ADMIN, "PUT/PATCH /api/aggregates/{id}/."),
    rule(f"{AGGREGATES}:delete", ADMIN, "DELETE /api/aggregates/{id}/: forget its metadata."),
]
