"""The policy engine: oslo.policy's ``Enforcer``, configured as Placement configures it.

Every rule is an oslo.policy ``RuleDefault``. Each app declares its own in its ``policies``
module (a list named ``rules``, as Placement's ``placement/policies/<resource>.py``); the
shared base rules they refer to (``admin_api``, ``service_api``, ...) and the rules of the
shared ``/api/`` plumbing are here. The site collects the apps' rules and hands them over once,
at startup (:func:`register_rules`, from ``PlacementSiteConfig.ready``).

``PLACEMENT_POLICY_DEFAULTS`` picks what the defaults mean:

- ``secure`` (default): the new defaults alone, as oslo.policy's ``enforce_new_defaults``
  (on by default since oslo.policy 4.4, so what Placement 16 applies out of the box);
- ``legacy``: each rule is its new default *or* its deprecated rule (admin only), as with
  ``enforce_new_defaults = False``: the ``service`` role and a project's own readers still
  pass where Placement lets them;
- ``admin-only``: the deprecated rules alone, so every rule Placement deprecated is
  admin only (this project's ``legacy`` before it followed Placement 16);
- ``open``: every rule but ``admin_api`` allows any authenticated caller.

An operator's policy file (``PLACEMENT_POLICY_FILE``, YAML or JSON mapping rule names to
check strings) overrides single rules; oslo.policy reads it again when it changes.

Scope is always enforced, as by oslo.policy 4.4 on: a rule registered with
``scope_types=['project']`` refuses a system- or domain-scoped token whatever its check
string says, in every flavour of defaults and whatever the policy file says.
"""

import functools
import logging
from pathlib import Path

from django.conf import settings
from oslo_config import cfg
from oslo_policy import opts as policy_opts
from oslo_policy import policy as oslo_policy

from .errors import HTTPForbidden

logger = logging.getLogger("placement.api")

DEFAULTS = ("secure", "legacy", "admin-only", "open")
PROJECT = ["project"]  # the scope of every rule but the unscoped root

# --- the shared base rules, as Placement's policies/base.py --------------------------------

ADMIN = "rule:admin_api"
SERVICE = "rule:service_api"
ADMIN_OR_SERVICE = "rule:admin_or_service_api"
ADMIN_OR_PROJECT_READER_OR_SERVICE = "rule:admin_or_project_reader_or_service_api"

DEPRECATED_REASON = (
    "Placement's policies have new defaults with roles and scope; the admin-only defaults "
    "are deprecated (PLACEMENT_POLICY_DEFAULTS=legacy keeps them beside the new ones)."
)
DEPRECATED_ADMIN = oslo_policy.DeprecatedRule(
    name="admin_api",
    check_str="role:admin",
    deprecated_reason=DEPRECATED_REASON,
    deprecated_since="W",
)

BASE_RULES = [
    oslo_policy.RuleDefault("admin_api", "role:admin", description="Admins.", scope_types=PROJECT),
    oslo_policy.RuleDefault(
        "service_api",
        "role:service",
        description="Services (the service role).",
        scope_types=PROJECT,
        deprecated_rule=DEPRECATED_ADMIN,
    ),
    oslo_policy.RuleDefault(
        "admin_or_service_api",
        "role:admin or role:service",
        description="Admins and services: most of the API.",
        scope_types=PROJECT,
        deprecated_rule=DEPRECATED_ADMIN,
    ),
    oslo_policy.RuleDefault(
        "project_reader_api",
        "role:reader and project_id:%(project_id)s",
        description="Readers of the project the request is about.",
        deprecated_rule=DEPRECATED_ADMIN,
    ),
    oslo_policy.RuleDefault(
        "admin_or_project_reader_or_service_api",
        "role:admin or rule:project_reader_api or role:service",
        description="Admins, services and the project's own readers.",
        scope_types=PROJECT,
        deprecated_rule=DEPRECATED_ADMIN,
    ),
]

# The rules of the plumbing every /api/ collection shares.
API_ROOT = "placement:api:root"
API_SCHEMA = "placement:api:schema"


def rule(name, check_str, description):
    """A rule as the apps declare theirs: project scoped, as every rule of Placement. Its
    ``legacy`` and ``admin-only`` meanings come from the base rule it names (its default
    ``rule:admin_or_service_api`` is admin only under ``admin-only``)."""
    return oslo_policy.RuleDefault(name, check_str, description=description, scope_types=PROJECT)


# Handed over by the site at startup: every app's rules and the site's own.
_contributed = []


def register_rules(rules):
    """The rules the apps and the site declare (the site calls this once, at startup)."""
    _contributed[:] = list(rules)
    enforcer_for.cache_clear()


def registered_rules():
    """The base rules, the shared plumbing's and those the site handed over."""
    return [
        *BASE_RULES,
        rule(API_ROOT, "@", "GET /api/: links to the collections."),
        rule(API_SCHEMA, "@", "GET /api/schema/: the OpenAPI document."),
        *_contributed,
    ]


def _as_defaults(rule_default, flavour):
    """``rule_default`` as registered under ``flavour`` (see the module docstring)."""
    if flavour == "open" and rule_default.name != "admin_api":
        return oslo_policy.RuleDefault(rule_default.name, "@", scope_types=rule_default.scope_types)
    if flavour == "admin-only" and rule_default.deprecated_rule is not None:
        return oslo_policy.RuleDefault(
            rule_default.name,
            rule_default.deprecated_rule.check_str,
            scope_types=rule_default.scope_types,
        )
    return rule_default


def _config(flavour):
    conf = cfg.ConfigOpts()
    conf([], project="placement", default_config_files=[], default_config_dirs=[])
    policy_opts._register(conf)
    conf.set_override("enforce_new_defaults", flavour != "legacy", group="oslo_policy")
    # Only the file the operator names: no policy.d directories looked up by relative path.
    conf.set_override("policy_dirs", [], group="oslo_policy")
    return conf


class _Enforcer(oslo_policy.Enforcer):
    """oslo.policy's enforcer reading the one file named, never another found by searching
    oslo.config's directories and the working directory (a stray ``policy.yaml``, or
    ``/etc/placement/policy.yaml`` of a Placement on the same host)."""

    def __init__(self, conf, policy_file):
        super().__init__(conf, policy_file=policy_file or None)
        self._named_file = policy_file
        self.decisions = {}

    def _get_policy_path(self, path):
        if self._named_file and Path(self._named_file).is_file():
            return self._named_file
        raise cfg.ConfigFilesNotFoundError((path,))

    def remembers_decisions(self):
        """Whether a decision may be answered again from :attr:`decisions`: the rules are the
        defaults registered in code (no policy file, which oslo.policy reads again when it
        changes and whose checks may ask a server), and oslo.policy is not logging each
        enforcement (its debug log)."""
        return not self._named_file and not oslo_policy.LOG.isEnabledFor(logging.DEBUG)

    # Any change of the rules forgets the decisions taken under the old ones.
    def register_default(self, default):
        self.decisions.clear()
        super().register_default(default)

    def set_rules(self, *args, **kwargs):
        self.decisions.clear()
        super().set_rules(*args, **kwargs)

    def clear(self):
        self.decisions.clear()
        super().clear()


@functools.lru_cache(maxsize=8)
def enforcer_for(flavour, policy_file):
    """The enforcer of these defaults and this policy file (one per process)."""
    if flavour not in DEFAULTS:
        raise RuntimeError(f"Unknown PLACEMENT_POLICY_DEFAULTS {flavour!r}")
    path = str(Path(policy_file).resolve()) if policy_file else ""
    enforcer = _Enforcer(_config(flavour), path)
    # The deprecation warnings are the operator's choice of defaults, not news at each start.
    enforcer.suppress_default_change_warnings = True
    enforcer.suppress_deprecation_warnings = True
    enforcer.register_defaults([_as_defaults(r, flavour) for r in registered_rules()])
    enforcer.load_rules()
    return enforcer


def enforcer():
    """The enforcer in force; an edited policy file is read again, as oslo.policy does."""
    return enforcer_for(settings.PLACEMENT_POLICY_DEFAULTS, settings.PLACEMENT_POLICY_FILE)


def read_policy_file(path):
    """The rules of an operator's policy file, parsed as oslo.policy parses it; raises
    OSError when it cannot be read and ValueError when it is not a mapping of rules."""
    text = Path(path).read_text()
    try:
        rules = oslo_policy.parse_file_contents(text)
    except Exception as exc:  # yaml's errors and oslo's ValueError alike
        raise ValueError(f"not valid YAML or JSON: {exc}") from None
    if not isinstance(rules, dict):
        raise ValueError("must map rule names to check strings")
    return rules


def check(rule_name, context, target=None):
    """True when the caller's context satisfies ``rule_name``.

    Without a target the caller's own project and user are the target (as Placement's
    ``context.can``); an explicit target is used as given, never filled in, so a check on a
    key it lacks (``user_id:%(user_id)s`` for project usages) fails.
    """
    if target is None:
        target = {"project_id": context.project_id, "user_id": context.user_id}
    engine = enforcer()
    if rule_name not in engine.registered_rules:
        # A rule no app declares (a mistake, or a test's): admins only unless the policy file
        # says otherwise, project scoped like every rule; and say so.
        logger.error("Policy rule %s is not registered; its default is admin_api", rule_name)
        engine.register_default(oslo_policy.RuleDefault(rule_name, ADMIN, scope_types=PROJECT))
    key = _decision_key(rule_name, context, target) if engine.remembers_decisions() else None
    if key is None:
        return bool(engine.authorize(rule_name, target, context.credentials()))
    # oslo.policy takes about 0.1 ms a decision (it checks its rules are loaded and inspects
    # each check's signature): the same caller asking the same rule is answered once.
    decision = engine.decisions.get(key)
    if decision is None:
        decision = bool(engine.authorize(rule_name, target, context.credentials()))
        if len(engine.decisions) >= _DECISIONS_KEPT:
            engine.decisions.clear()
        engine.decisions[key] = decision
    return decision


_DECISIONS_KEPT = 4096  # callers x rules x targets remembered per enforcer, then forgotten


def _decision_key(rule_name, context, target):
    """What a decision of the registered defaults depends on, or None when a target value
    does not hash (never remembered)."""
    credentials = (
        context.user_id,
        context.project_id,
        tuple(context.roles),
        context.system_scope,
        context.domain_id,
        tuple(context.service_roles),
    )
    key = (rule_name, credentials, tuple(sorted(target.items())))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def authorize(request, rule_name, target=None):
    if not check(rule_name, request.context, target):
        raise HTTPForbidden(f"Policy does not allow {rule_name} to be performed.")
