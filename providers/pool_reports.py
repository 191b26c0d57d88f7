"""A resource pool's report: the rules its fields are held to, in one place (the API's
serializer and the admin ask here)."""

from .capacity import Capacity
from .host_reports import HOSTNAME_RULE
from .plugins import PluginLoadError
from .plugins.pools import pool_plugin
from .selectors.pool_members import pool_members
from .services.inventories import inventory_checked


def pool_kind_problem(kind: str) -> str | None:
    """Why ``kind`` names no loadable pool plugin (None when it does)."""
    try:
        pool_plugin(kind)
    except PluginLoadError as exc:
        return str(exc)
    return None


def pool_class_problem(kind: str, resource_class: str) -> str | None:
    """Why a pool of ``kind`` cannot have ``resource_class`` (None when it can)."""
    try:
        return pool_plugin(kind).refuses(resource_class)
    except PluginLoadError:
        return None  # the kind's own error is reported


def members_problem(members) -> str | None:
    """Why a pool's ``members`` cannot be stored (None when they can): a member that is no
    aggregate's uuid or name and cannot be a host's name (see
    :mod:`providers.selectors.pool_members`)."""
    unknown = pool_members(members=members).unknown
    if unknown:
        return (
            f"{unknown[0]!r} names no aggregate (by uuid or name) and is not a host name "
            f"({HOSTNAME_RULE})."
        )
    return None


def inventory_problem(values: dict) -> str | None:
    """Why a pool's stated inventory cannot be a provider's (None when it can)."""
    total = values["total"]
    capacity = Capacity(
        total=total,
        reserved=values.get("reserved", 0),
        min_unit=values.get("min_unit", 1),
        max_unit=values.get("max_unit", total),
        step_size=values.get("step_size", 1),
        allocation_ratio=1.0,
    )
    try:
        checked = inventory_checked(inventory=capacity)
    except (TypeError, ValueError) as exc:
        return str(exc)
    if checked.usable < 0:
        return "reserved is greater than total"
    return None
