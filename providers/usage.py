"""Usage (units allocated per provider and class) as the providers app reads it.

The rule belongs to the allocations (:mod:`allocations.selectors.usage`), and
the providers app imports neither allocations nor scheduling: the allocations
app hands its usage selector in when Django starts
(``AllocationsConfig.ready``), and providers' capacity checks, "why not"
reports and admin call the functions below, which forward to it.
"""

from django.core.exceptions import ImproperlyConfigured

_selector = None


def install(selector):
    """Called once by the allocations app: ``selector`` is its usage module."""
    global _selector
    _selector = selector


def _installed():
    if _selector is None:
        raise ImproperlyConfigured("Usage needs the allocations app in INSTALLED_APPS.")
    return _selector


def usage_subquery(provider="resource_provider_id", resource_class="resource_class_id"):
    return _installed().usage_subquery(provider, resource_class)


def usage_joined(inventories, *group_by, name="used"):
    return _installed().usage_joined(inventories, *group_by, name=name)


def usage_by_provider_and_class(*, provider_ids=None, class_ids=None):
    return _installed().usage_by_provider_and_class(provider_ids=provider_ids, class_ids=class_ids)
