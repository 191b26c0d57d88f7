"""A host's report and what the plugins make of it: the one home of the report's rules.

- the report's fields (:data:`REPORT_FIELDS`, from :class:`~providers.plugins.HostReport`),
  the hostname rule and the report's digest;
- :func:`desired_tree`: the operator's plugins run over a report, each plugin contained (one
  that raises is left out, its half-made contribution dropped, its error kept), the
  operator's default ratios and reserved amounts filled in. The host sync diffs this tree
  against the record (providers.tree_diff);
- :func:`tree_problems`: what in a report would make a provider the database cannot hold
  (a name over 200 characters, a malformed class or trait), by the report field it comes
  from, so that ``PUT /api/compute-nodes/`` refuses it up front instead of the sync failing
  on it every run.
"""

import hashlib
import json
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

import os_resource_classes
import os_traits
from django.conf import settings

from placementsite.core.exceptions import DomainError, InvalidRequest

from .capacity import Capacity
from .models import CUSTOM_NAME_RE, ResourceProvider
from .plugins import HostReport, HostTree
from .plugins.base import FIELDS
from .services.inventories import inventory_checked

logger = logging.getLogger("placement.hosts")

REPORT_FIELDS = FIELDS
HOSTNAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,149}$"
HOSTNAME_RULE = "letters, digits, '.', '_' and '-', at most 150 characters"
PROVIDER_NAME_MAX = ResourceProvider._meta.get_field("name").max_length
_STANDARD_CLASSES = frozenset(os_resource_classes.STANDARDS)
_STANDARD_TRAITS = frozenset(os_traits.get_traits())


def hostname_valid(hostname: str) -> bool:
    return re.fullmatch(HOSTNAME_PATTERN, hostname or "") is not None


def report_digest(report: Mapping) -> str:
    """A digest of a report's content: equal reports, equal digests."""
    content = {k: report.get(k) for k in REPORT_FIELDS}
    if not content.get("disk_pool"):
        del content["disk_pool"]  # as before the field existed: unchanged hosts stay synced
    canonical = json.dumps(content, sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def resource_class_problem(name: str) -> str | None:
    """Why ``name`` cannot be a resource class a plugin gives (None when it can)."""
    if name in _STANDARD_CLASSES or (len(name) <= 255 and CUSTOM_NAME_RE.fullmatch(name)):
        return None
    return f"{name[:60]} is neither a standard resource class nor CUSTOM_[A-Z0-9_]+"


def trait_problem(name):
    if name in _STANDARD_TRAITS or (len(name) <= 255 and CUSTOM_NAME_RE.fullmatch(name)):
        return None
    return f"{name[:60]} is neither a standard trait nor CUSTOM_[A-Z0-9_]+ (255 at most)"


# --- the desired tree -------------------------------------------------------------------------


@dataclass
class DesiredTree:
    """The plugins' answer for one report: the tree, which plugin gave each class of each
    provider (``{(key, class): plugin name}``), and the plugins that raised, with their
    errors."""

    tree: HostTree
    owners: dict = field(default_factory=dict)
    plugin_errors: dict = field(default_factory=dict)

    def providers(self):
        return self.tree.providers()


def desired_tree(report: HostReport, plugins) -> DesiredTree:
    """Run every plugin over ``report``; a plugin that raises is left out, with its error."""
    tree = HostTree(report.hostname, [p.name for p in plugins])
    owners, errors = {}, {}
    for plugin in plugins:
        before = tree.copy()
        try:
            plugin.contribute(report, tree)
            added = contribution_checked(before, tree)
        except Exception as exc:  # a plugin is third-party code: contain whatever it raises
            logger.warning(
                "resource plugin %s failed on host %s: %s",
                plugin.name,
                report.hostname,
                exc,
                exc_info=not isinstance(exc, DomainError),
            )
            errors[plugin.name] = f"{type(exc).__name__}: {getattr(exc, 'detail', None) or exc}"
            tree = before
            continue
        owners.update(dict.fromkeys(added, plugin.name))
    apply_defaults(tree)
    return DesiredTree(tree=tree, owners=owners, plugin_errors=errors)


def contribution_checked(before, after):
    """The ``(key, class)`` inventories a plugin added to the tree; an inventory it set that
    no provider may have (Placement's limits, reserved above total) raises InvalidRequest,
    so that the plugin is contained as if it had raised."""
    had = {(s.key, name): inv for s in before.specs() for name, inv in s.inventories.items()}
    added = []
    for spec in after.specs():
        for name, inventory in spec.inventories.items():
            if had.get((spec.key, name)) == inventory:
                continue
            try:
                checked = inventory_checked(inventory=inventory.capacity())
            except (TypeError, ValueError) as exc:
                raise InvalidRequest(f"{spec.name}: {name}: {exc}") from None
            if checked.usable < 0:
                raise InvalidRequest(f"{spec.name}: {name}: reserved is greater than total")
            if (spec.key, name) not in had:
                added.append((spec.key, name))
    return added


def apply_defaults(tree):
    """The operator's default ratio on every inventory; default reserved on the first holder
    that is not a NUMA cell. A class the cells alone hold keeps its full amount on each cell:
    the host's reservation is held for the host as a whole (scheduling.host_limits), never
    carved out of one cell."""
    ratios = settings.PLACEMENT_ALLOCATION_RATIOS
    reserved = settings.PLACEMENT_RESERVED
    seen = set()
    for spec in tree.providers():
        cell = spec.source == "numa_topology"
        for name, inventory in spec.inventories.items():
            if inventory.allocation_ratio is None:
                inventory.allocation_ratio = float(ratios.get(name, 1.0))
            if inventory.reserved is None:
                amount = int(reserved.get(name, 0)) if name not in seen and not cell else 0
                inventory.reserved = min(amount, inventory.total)
            if inventory.max_unit is None:
                inventory.max_unit = inventory.total
            seen.add(name)


def inventories_of(spec) -> dict[str, Capacity]:
    """A provider spec's inventories as the capacity model holds them (defaults applied)."""
    return {name: inventory.capacity() for name, inventory in spec.inventories.items()}


def tree_problems(tree: HostTree) -> dict[str, str]:
    """``{report field: why}`` for every provider of ``tree`` the database could not hold."""
    problems = {}
    for spec in tree.providers():
        where = spec.source or "hostname"
        if len(spec.name) > PROVIDER_NAME_MAX:
            problems[where] = (
                f"would make a provider named {spec.name[:40]}... of {len(spec.name)} "
                f"characters (at most {PROVIDER_NAME_MAX})"
            )
        for name in spec.inventories:
            problem = resource_class_problem(name)
            if problem:
                problems.setdefault(where, problem)
        for name in spec.traits:
            problem = trait_problem(name)
            if problem:
                problems.setdefault(where, problem)
    return problems
