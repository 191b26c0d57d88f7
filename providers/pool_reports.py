"""A resource pool's report: the rules its fields are held to, in one place (the API's
serializer and the admin ask here)."""

from placementsite.core import uuids

from .capacity import Capacity
from .host_reports import hostname_valid
from .plugins import PluginLoadError
from .plugins.pools import pool_plugin
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


def member_valid(member: str) -> bool:
    """A member is a host name or an aggregate uuid."""
    return hostname_valid(member) or uuids.parse(member) is not None


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
        checked = inventory_checked(capacity)
    except (TypeError, ValueError) as exc:
        return str(exc)
    if checked.usable < 0:
        return "reserved is greater than total"
    return None
