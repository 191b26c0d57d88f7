"""Per-endpoint policy rules, in oslo.policy's check-string language.

``PLACEMENT_POLICY_DEFAULTS`` picks the defaults:

- ``legacy``: Placement's historical defaults, every rule is ``rule:admin_api``.
- ``secure``: Placement's secure-RBAC defaults (admin or service; readers of
  their own project for usages; service alone for the reshaper).
- ``open``: every rule but ``admin_api`` allowed to any authenticated caller.

An operator's policy file (``PLACEMENT_POLICY_FILE``, YAML or JSON mapping
rule names to check strings) overrides individual rules.

Every rule but ``placement:root`` is project scoped, as Placement registers
them (``scope_types=['project']``, enforced by oslo.policy): a system-scoped
token is refused whatever the check string, in every flavour of defaults.
"""

import functools
import re
from pathlib import Path

from django.conf import settings

from .errors import Forbidden

ADMIN = "role:admin"
ADMIN_OR_SERVICE = "role:admin or role:service"
SERVICE = "role:service"
PROJECT_READER = "role:admin or role:service or (role:reader and project_id:%(project_id)s)"
UNSCOPED_RULES = {"placement:root"}

# rule name -> (secure default, description)
RULES = {
    "placement:root": ("@", "GET / (always allowed)"),
    "placement:resource_providers:list": (ADMIN_OR_SERVICE, "List resource providers"),
    "placement:resource_providers:create": (ADMIN_OR_SERVICE, "Create resource provider"),
    "placement:resource_providers:show": (ADMIN_OR_SERVICE, "Show resource provider"),
    "placement:resource_providers:update": (ADMIN_OR_SERVICE, "Update resource provider"),
    "placement:resource_providers:delete": (ADMIN_OR_SERVICE, "Delete resource provider"),
    "placement:resource_classes:list": (ADMIN_OR_SERVICE, "List resource classes"),
    "placement:resource_classes:create": (ADMIN_OR_SERVICE, "Create resource class"),
    "placement:resource_classes:show": (ADMIN_OR_SERVICE, "Show resource class"),
    "placement:resource_classes:update": (ADMIN_OR_SERVICE, "Update resource class"),
    "placement:resource_classes:delete": (ADMIN_OR_SERVICE, "Delete resource class"),
    "placement:resource_providers:inventories:list": (ADMIN_OR_SERVICE, "List inventories"),
    "placement:resource_providers:inventories:create": (ADMIN_OR_SERVICE, "Create inventory"),
    "placement:resource_providers:inventories:show": (ADMIN_OR_SERVICE, "Show inventory"),
    "placement:resource_providers:inventories:update": (ADMIN_OR_SERVICE, "Update inventory"),
    "placement:resource_providers:inventories:delete": (ADMIN_OR_SERVICE, "Delete inventory"),
    "placement:resource_providers:aggregates:list": (ADMIN_OR_SERVICE, "List aggregates"),
    "placement:resource_providers:aggregates:update": (ADMIN_OR_SERVICE, "Update aggregates"),
    "placement:resource_providers:usages": (ADMIN_OR_SERVICE, "Show provider usages"),
    "placement:usages": (PROJECT_READER, "Show usages of a project or user"),
    "placement:traits:list": (ADMIN_OR_SERVICE, "List traits"),
    "placement:traits:show": (ADMIN_OR_SERVICE, "Show trait"),
    "placement:traits:update": (ADMIN_OR_SERVICE, "Create trait"),
    "placement:traits:delete": (ADMIN_OR_SERVICE, "Delete trait"),
    "placement:resource_providers:traits:list": (ADMIN_OR_SERVICE, "List provider traits"),
    "placement:resource_providers:traits:update": (ADMIN_OR_SERVICE, "Update provider traits"),
    "placement:resource_providers:traits:delete": (ADMIN_OR_SERVICE, "Delete provider traits"),
    "placement:allocations:manage": (ADMIN_OR_SERVICE, "Write allocations of many consumers"),
    "placement:allocations:list": (ADMIN_OR_SERVICE, "List allocations of a consumer"),
    "placement:allocations:update": (ADMIN_OR_SERVICE, "Update allocations of a consumer"),
    "placement:allocations:delete": (ADMIN_OR_SERVICE, "Delete allocations of a consumer"),
    "placement:resource_providers:allocations:list": (ADMIN_OR_SERVICE, "Provider allocations"),
    "placement:allocation_candidates:list": (ADMIN_OR_SERVICE, "List allocation candidates"),
    "placement:reshaper:reshape": (SERVICE, "Reshape provider trees"),
}


# Rules of the project's own API under /api/ (placementsite.core.rest), which Placement does not
# define: rule name -> (secure default, legacy default, description). Placement's legacy
# defaults are admin-only; these say so explicitly where a service (a host agent) must write.
API_RULES = {
    "placement:api:root": ("@", "@", "GET /api/: links to the collections"),
    "placement:api:schema": ("@", "@", "GET /api/schema/: the OpenAPI document"),
    "placement:api:flavors:list": ("@", "@", "GET /api/flavors/: list flavors"),
    "placement:api:flavors:show": ("@", "@", "GET /api/flavors/{id}/: show a flavor"),
    "placement:api:flavors:create": (ADMIN, "rule:admin_api", "POST /api/flavors/"),
    "placement:api:flavors:update": (ADMIN, "rule:admin_api", "PUT/PATCH /api/flavors/{id}/"),
    "placement:api:flavors:delete": (ADMIN, "rule:admin_api", "DELETE /api/flavors/{id}/"),
    "placement:api:servers:list": (ADMIN_OR_SERVICE, "rule:admin_api", "GET /api/servers/"),
    "placement:api:servers:show": (ADMIN_OR_SERVICE, "rule:admin_api", "GET /api/servers/{id}/"),
    "placement:api:servers:create": (
        ADMIN_OR_SERVICE,
        "rule:admin_api",
        "POST /api/servers/: schedule and claim servers",
    ),
    "placement:api:servers:delete": (
        ADMIN_OR_SERVICE,
        "rule:admin_api",
        "DELETE /api/servers/{id}/: free a server's allocations",
    ),
    **{
        f"placement:api:servers:{verb}": (
            ADMIN_OR_SERVICE,
            "rule:admin_api",
            f"POST /api/servers/{{id}}/{verb.replace('_', '-')}/: {what}",
        )
        for verb, what in (
            ("migrate", "move a server to another host"),
            ("resize", "move a server to a new flavor"),
            ("live_migrate", "live-migrate a server"),
            ("evacuate", "rebuild a server of a down host elsewhere"),
        )
    },
    "placement:api:migrations:list": (ADMIN_OR_SERVICE, "rule:admin_api", "GET /api/migrations/"),
    "placement:api:migrations:show": (
        ADMIN_OR_SERVICE,
        "rule:admin_api",
        "GET /api/migrations/{id}/",
    ),
    **{
        f"placement:api:migrations:{verb}": (
            ADMIN_OR_SERVICE,
            "rule:admin_api",
            f"POST /api/migrations/{{id}}/{verb}/: {what}",
        )
        for verb, what in (
            ("confirm", "keep the destination, free the source"),
            ("revert", "back to the source, free the destination"),
            ("finish", "the move is done, awaiting confirm or revert"),
            ("fail", "the move failed: revert"),
        )
    },
    "placement:api:scheduler:explain": (
        ADMIN_OR_SERVICE,
        "rule:admin_api",
        "POST /api/scheduler/explain/: the scheduler's funnel, claiming nothing",
    ),
    "placement:api:capacity:list": (
        ADMIN_OR_SERVICE,
        "rule:admin_api",
        "GET /api/capacity/?flavor=: how many more instances fit",
    ),
    "placement:api:compute_nodes:list": (ADMIN_OR_SERVICE, "rule:admin_api", "List compute hosts"),
    "placement:api:compute_nodes:show": (ADMIN_OR_SERVICE, "rule:admin_api", "Show a compute host"),
    "placement:api:compute_nodes:update": (
        ADMIN_OR_SERVICE,
        ADMIN_OR_SERVICE,
        "Report a host (PUT) or enable/disable it (PATCH)",
    ),
    "placement:api:compute_nodes:delete": (ADMIN, "rule:admin_api", "Forget a compute host"),
    "placement:api:resource_classes:list": (
        ADMIN_OR_SERVICE,
        "rule:admin_api",
        "List class metadata",
    ),
    "placement:api:resource_classes:show": (
        ADMIN_OR_SERVICE,
        "rule:admin_api",
        "Show class metadata",
    ),
    "placement:api:resource_classes:update": (
        ADMIN,
        ADMIN,
        "Edit a custom class's type, unit and description",
    ),
}


def default_rules(flavour):
    if flavour == "secure":
        rules = {name: check for name, (check, _doc) in RULES.items()}
        rules.update({name: secure for name, (secure, _legacy, _doc) in API_RULES.items()})
    elif flavour == "open":
        rules = {name: "@" for name in [*RULES, *API_RULES]}
    elif flavour == "legacy":
        rules = {name: "rule:admin_api" for name in RULES}
        rules["placement:root"] = "@"
        rules.update({name: legacy for name, (_secure, legacy, _doc) in API_RULES.items()})
    else:
        raise RuntimeError(f"Unknown PLACEMENT_POLICY_DEFAULTS {flavour!r}")
    rules["admin_api"] = ADMIN
    return rules


def load_policy_file(path):
    import yaml

    try:
        data = yaml.safe_load(Path(path).read_text()) or {}
    except yaml.YAMLError as exc:
        raise RuntimeError(f"Policy file {path} is not valid YAML or JSON: {exc}") from None
    if not isinstance(data, dict):
        raise RuntimeError(f"Policy file {path} must map rule names to check strings")
    return {str(name): str(check) for name, check in data.items()}


@functools.lru_cache(maxsize=8)
def _rules(flavour, policy_file, _file_mtime):
    rules = default_rules(flavour)
    if policy_file:
        rules.update(load_policy_file(policy_file))
    return rules


def _mtime(path):
    try:
        return Path(path).stat().st_mtime_ns
    except OSError:
        return None


def current_rules():
    """The rules in force; an edited policy file is read again, as oslo.policy does."""
    policy_file = settings.PLACEMENT_POLICY_FILE
    mtime = _mtime(policy_file) if policy_file else None
    return _rules(settings.PLACEMENT_POLICY_DEFAULTS, policy_file, mtime)


# --- the check-string language --------------------------------------------

_TOKEN_RE = re.compile(r"\s*(\(|\)|(?:%\([^)]*\)|[^\s()])+)")  # "%(name)s" stays in its token


def _tokens(check):
    return [t for t in _TOKEN_RE.findall(check) if t]


class _Evaluator:
    """Recursive descent over ``or`` / ``and`` / ``not`` and parentheses."""

    def __init__(self, rules, target, creds, depth=0):
        self.rules, self.target, self.creds, self.depth = rules, target, creds, depth

    def evaluate(self, check):
        if self.depth > 20:
            return False
        self.tokens = _tokens(check)
        self.pos = 0
        if not self.tokens:
            return True  # an empty rule, as in oslo.policy, always passes
        result = self._or()
        return result and self.pos == len(self.tokens)

    def _peek(self):
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def _or(self):
        result = self._and()
        while self._peek() == "or":
            self.pos += 1
            result = self._and() or result
        return result

    def _and(self):
        result = self._not()
        while self._peek() == "and":
            self.pos += 1
            result = self._not() and result
        return result

    def _not(self):
        if self._peek() == "not":
            self.pos += 1
            return not self._not()
        return self._atom()

    def _atom(self):
        token = self._peek()
        self.pos += 1
        if token == "(":
            result = self._or()
            if self._peek() == ")":
                self.pos += 1
            return result
        return self._check(token or "!")

    def _check(self, token):
        if token == "@":
            return True
        if token == "!":
            return False
        kind, _sep, match = token.partition(":")
        if kind == "rule":
            sub = self.rules.get(match)
            if sub is None:
                return False
            return _Evaluator(self.rules, self.target, self.creds, self.depth + 1).evaluate(sub)
        if kind == "role":
            # Role names, as in oslo.policy, are the one case-insensitive comparison.
            return match.lower() in [r.lower() for r in self.creds.get("roles", [])]
        try:
            expected = match % self.target
        except (KeyError, TypeError, ValueError):
            return False
        value = self.creds.get(kind)
        if value is None:
            return False
        # Exactly, as oslo.policy: project "P1" is not project "p1".
        return str(value) == expected


def check(rule, context, target=None):
    """True when the caller's context satisfies ``rule``.

    Without a target the caller's own project and user are the target (as Placement's
    ``context.can``); an explicit target is used as given, never filled in, so a check on a
    key it lacks (``user_id:%(user_id)s`` for project usages) fails.
    """
    if context.system_scope and rule not in UNSCOPED_RULES:
        return False
    rules = current_rules()
    check_string = rules.get(rule, "rule:admin_api")
    if target is None:
        target = {"project_id": context.project_id, "user_id": context.user_id}
    return _Evaluator(rules, target, context.credentials()).evaluate(check_string)


def authorize(request, rule, target=None):
    if not check(rule, request.context, target):
        raise Forbidden(f"Policy does not allow {rule} to be performed.")
