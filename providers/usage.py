"""Usage (units allocated per provider and class) as the providers app reads it.

The rule belongs to the allocations (:mod:`allocations.selectors.usage`); providers reach it
through the one seam between the two apps, :mod:`providers.allocations_port`. Providers'
capacity checks, "why not" reports, admin and "in use" refusals call the functions below,
which forward to it.
"""

from .allocations_port import port


def usage_subquery(provider="resource_provider_id", resource_class="resource_class_id"):
    return port().usage_subquery(provider=provider, resource_class=resource_class)


def usage_joined_rows(inventories, name="used"):
    return port().usage_joined_rows(inventories=inventories, name=name)


def usage_by_provider_and_class(*, provider_ids=None, class_ids=None):
    return port().usage_by_provider_and_class(provider_ids=provider_ids, class_ids=class_ids)


def classes_in_use(*, provider_id=None, class_ids=None):
    return port().classes_in_use(provider_id=provider_id, class_ids=class_ids)
