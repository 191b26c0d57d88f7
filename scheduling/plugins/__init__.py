"""Filter and weigher plugins: found by name, loaded once, checked at startup.

``PLACEMENT_SCHEDULER_FILTERS`` and ``PLACEMENT_SCHEDULER_WEIGHERS`` are comma-separated lists
of ``NAME[:ARG...][=MULTIPLIER]`` (the multiplier for weighers only), e.g.
``ram=1.0,resource:CUSTOM_CU:ratio=-2``. A NAME is a built-in, an entry point of the group
``placement.scheduler.filters`` / ``placement.scheduler.weighers`` (a package installs its own),
or a dotted path to a class. An unknown name, or arguments a plugin refuses, stop startup with
the list of what is available.
"""

import functools
from importlib.metadata import entry_points

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from . import filters, weighers
from .base import (
    BaseFilter,
    BaseWeigher,
    Code,
    CycleState,
    HostState,
    PluginFailed,
    Status,
    normalise,
)

__all__ = [
    "BaseFilter",
    "BaseWeigher",
    "Code",
    "CycleState",
    "HostState",
    "PluginFailed",
    "Status",
    "configured_filters",
    "configured_weighers",
    "load_filters",
    "load_weighers",
    "normalise",
]

FILTER_GROUP = "placement.scheduler.filters"
WEIGHER_GROUP = "placement.scheduler.weighers"


def available(group):
    """``{name: class}``: the built-ins and every installed entry point of ``group``."""
    found = dict(filters.BUILTIN if group == FILTER_GROUP else weighers.BUILTIN)
    for entry in entry_points(group=group):
        found.setdefault(entry.name, entry)
    return found


def _parse(text, *, weighted):
    items = []
    for raw in (text or "").split(","):
        item = raw.strip()
        if not item:
            continue
        multiplier = 1.0
        if "=" in item:
            if not weighted:
                raise ImproperlyConfigured(f"Scheduler filter {item!r}: filters take no multiplier")
            item, _, number = item.partition("=")
            try:
                multiplier = float(number)
            except ValueError:
                raise ImproperlyConfigured(
                    f"Scheduler weigher {raw.strip()!r}: multiplier {number!r} is not a number"
                ) from None
        name, *args = item.split(":")
        items.append((name.strip(), [a.strip() for a in args], multiplier))
    return items


def _load(text, group, base, kind):
    choices = available(group)
    loaded = []
    for name, args, multiplier in _parse(text, weighted=base is BaseWeigher):
        target = choices.get(name)
        if target is None and "." in name:
            try:
                target = import_string(name)
            except ImportError:
                target = None
        elif target is not None and not isinstance(target, type):
            target = target.load()  # an entry point
        if not isinstance(target, type) or not issubclass(target, base):
            raise ImproperlyConfigured(
                f"Unknown scheduler {kind} {name!r}. Available: {', '.join(sorted(choices))} "
                f"(or a dotted path to a {base.__name__} subclass)"
            )
        try:
            plugin = target(*args)
        except (TypeError, ValueError) as exc:
            raise ImproperlyConfigured(f"Scheduler {kind} {name!r}: {exc}") from None
        plugin.name = name + "".join(f":{a}" for a in args)
        if base is BaseWeigher:
            plugin.multiplier = multiplier
        loaded.append(plugin)
    return tuple(loaded)


@functools.lru_cache(maxsize=16)
def load_filters(text):
    return _load(text, FILTER_GROUP, BaseFilter, "filter")


@functools.lru_cache(maxsize=16)
def load_weighers(text):
    return _load(text, WEIGHER_GROUP, BaseWeigher, "weigher")


def configured_filters():
    return load_filters(settings.PLACEMENT_SCHEDULER_FILTERS)


def configured_weighers():
    return load_weighers(settings.PLACEMENT_SCHEDULER_WEIGHERS)


def check_configuration():
    """Load both lists now, so that a typo stops startup rather than the first boot."""
    configured_filters()
    configured_weighers()
