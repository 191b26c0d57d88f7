"""Who is calling: the request context built by the auth strategy.

``noauth2`` behaves like Placement's: the ``X-Auth-Token`` is ``admin`` or
``user:project``; an ``X-Project-Id`` header overrides the project (as
oslo.context reads it), ``X-Roles`` (comma separated) gives the roles (else
``admin`` for the ``admin`` token and none for others) and
``OpenStack-System-Scope: all`` marks a system-scoped token, which has no
project from the token; an ``X-Domain-Id`` header (as oslo.context reads it) makes the
request domain scoped.

``token`` (the default) looks the ``X-Auth-Token`` up among the hashed API
tokens (placementsite.core.api.tokens) of
active Django users. Roles are the user's group names (``admin``,
``service``, ``member``, ``reader``; a superuser is an admin), a group
``project:<id>`` gives the project, and a group ``system-scope`` marks the
user as system scoped. Placement's rules are all project scoped, so a
system-scoped token is refused everywhere: superusers are not system scoped.

``keystone`` reads what keystonemiddleware's auth_token (``placementsite.core.api.keystone``,
wrapped around the WSGI application) validated: user, project, roles and scope of the user
token, and the roles of a valid service token. A request that did not pass the middleware is
refused whatever its headers say, so they cannot be forged.
"""

import logging
from dataclasses import dataclass, field

from django.conf import settings

from .errors import HTTPUnauthorized, KeystoneUnauthorized

logger = logging.getLogger("placement.api")

TOKEN_HEADER = "HTTP_X_AUTH_TOKEN"
ROLES_HEADER = "HTTP_X_ROLES"
PROJECT_HEADER = "HTTP_X_PROJECT_ID"
SYSTEM_SCOPE_HEADER = "HTTP_OPENSTACK_SYSTEM_SCOPE"
DOMAIN_HEADER = "HTTP_X_DOMAIN_ID"
PROJECT_GROUP_PREFIX = "project:"
SYSTEM_SCOPE_GROUP = "system-scope"


@dataclass
class RequestContext:
    user_id: str
    project_id: str | None
    roles: list = field(default_factory=list)
    system_scope: str | None = None
    # Roles of a valid service token sent beside the user's (X-Service-Token), as oslo.context.
    service_roles: list = field(default_factory=list)
    # The domain of a domain-scoped token: project-scoped rules refuse it (oslo.policy's scope).
    domain_id: str | None = None

    @property
    def is_admin(self):
        return "admin" in self.roles

    def credentials(self):
        return {
            "user_id": self.user_id,
            "project_id": self.project_id,
            "roles": self.roles,
            "system_scope": self.system_scope,
            "domain_id": self.domain_id,
            "service_roles": self.service_roles,
            "is_admin": self.is_admin,
        }


def _header_roles(meta):
    raw = meta.get(ROLES_HEADER)
    if raw is None:
        return None
    return [role.strip().lower() for role in raw.split(",") if role.strip()]


def noauth2_context(meta):
    token = meta.get(TOKEN_HEADER)
    if not token:
        raise HTTPUnauthorized("Authentication required")
    user_id, _sep, project_id = token.partition(":")
    system_scope = meta.get(SYSTEM_SCOPE_HEADER) or None
    # Placement's noauth2 sets the token's project only on a project-scoped request;
    # oslo.context then prefers an explicit X-Project-Id header.
    project_id = None if system_scope else (project_id or user_id)
    project_id = meta.get(PROJECT_HEADER) or project_id
    roles = _header_roles(meta)
    if roles is None:
        roles = ["admin"] if user_id == "admin" else []
    return RequestContext(
        user_id=user_id,
        project_id=project_id,
        roles=roles,
        system_scope=system_scope,
        domain_id=meta.get(DOMAIN_HEADER) or None,
    )


def token_context(meta):
    from .tokens import token_identity

    key = meta.get(TOKEN_HEADER)
    if not key:
        raise HTTPUnauthorized("Authentication required")
    # The token, its user and the user's groups in one statement (a round trip per request).
    identity = token_identity(key)
    if identity is None:
        raise HTTPUnauthorized("Invalid authentication token")
    return _groups_context(*identity)


def user_context(user):
    """The context of a Django ``user``'s API token: the ``token`` strategy's, and the
    dashboard's when it checks a policy rule for a logged-in operator, so that an action there
    is allowed exactly when the same user's token may take it through the API."""
    groups = list(user.groups.values_list("name", flat=True))
    return _groups_context(user.username, user.is_superuser, groups)


def _groups_context(username, is_superuser, groups):
    """The context of a user by its name, superuser flag and group names (see the module
    docstring: roles, project and system scope come from the groups)."""
    roles = {name.lower() for name in groups if ":" not in name and name != SYSTEM_SCOPE_GROUP}
    if is_superuser:
        roles.add("admin")
    if "admin" in roles:
        roles.update({"member", "reader"})
    if "member" in roles:
        roles.add("reader")
    projects = [
        g[len(PROJECT_GROUP_PREFIX) :] for g in groups if g.startswith(PROJECT_GROUP_PREFIX)
    ]
    return RequestContext(
        user_id=username,
        project_id=projects[0] if projects else None,
        roles=sorted(roles),
        system_scope="all" if SYSTEM_SCOPE_GROUP in groups else None,
    )


KEYSTONE_TOKEN_AUTH = "keystone.token_auth"  # set by auth_token; no client header can reach it
IDENTITY_STATUS = "HTTP_X_IDENTITY_STATUS"
SERVICE_IDENTITY_STATUS = "HTTP_X_SERVICE_IDENTITY_STATUS"


def keystone_context(meta):
    token_auth = meta.get(KEYSTONE_TOKEN_AUTH)
    if token_auth is None:
        logger.error(
            "PLACEMENT_AUTH_STRATEGY=keystone but the request did not pass keystonemiddleware: "
            "serve placementsite.wsgi:application (gunicorn), which wraps it"
        )
        raise KeystoneUnauthorized("Authentication required")
    # With a service token, auth_token says whether it was valid (and had a service role).
    if meta.get(SERVICE_IDENTITY_STATUS, "Confirmed") != "Confirmed":
        raise KeystoneUnauthorized("Invalid service token")
    if meta.get(IDENTITY_STATUS) != "Confirmed" or not token_auth.has_user_token:
        if not meta.get(TOKEN_HEADER):
            raise KeystoneUnauthorized("Authentication required")
        raise KeystoneUnauthorized("Invalid authentication token")
    user = token_auth.user
    system_scope = "all" if user.system_scoped and (user.system or {}).get("all") else None
    domain_id = user.domain_id if user.domain_scoped else None
    service_roles = token_auth.service.role_names if token_auth.has_service_token else []
    return RequestContext(
        user_id=user.user_id,
        project_id=None if system_scope else user.project_id,
        roles=sorted({role.lower() for role in user.role_names}),
        system_scope=system_scope,
        domain_id=domain_id,
        service_roles=sorted({role.lower() for role in service_roles}),
    )


STRATEGIES = {"noauth2": noauth2_context, "token": token_context, "keystone": keystone_context}


def authenticate(request):
    strategy = STRATEGIES.get(settings.PLACEMENT_AUTH_STRATEGY)
    if strategy is None:
        raise RuntimeError(f"Unknown PLACEMENT_AUTH_STRATEGY {settings.PLACEMENT_AUTH_STRATEGY!r}")
    return strategy(request.META)
