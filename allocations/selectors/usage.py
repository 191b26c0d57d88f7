"""Usage: the units of a resource class allocated on a provider, the sum of its allocations.

The one home of the rule, in its three forms:

* :func:`usage_subquery`: a correlated expression on any row that has a
  provider id and a class id (an inventory row, typically), 0 when nothing is
  allocated;
* :func:`usage_joined`: the same sum over a join, for an Inventory queryset
  grouped per row (each row's usage is computed once, where a correlated
  subquery used both as a column and in a condition is evaluated twice);
* :func:`usage_by_provider_and_class` / :func:`usage_rows`: the bulk form,
  one grouped query for many providers and classes.

``scheduling.queries`` keeps a raw-SQL copy for speed; a test checks it
against :func:`usage_by_provider_and_class`. The providers app reads usage
through :mod:`providers.usage`, to which the allocations app hands this
module at startup (providers does not import allocations).
"""

from django.db.models import BigIntegerField, F, FilteredRelation, OuterRef, Q, Subquery, Sum, Value
from django.db.models.functions import Coalesce

from ..models import Allocation


def usage_subquery(provider="resource_provider_id", resource_class="resource_class_id"):
    """Units allocated of the outer row's class on its provider (0 if none).

    ``provider`` and ``resource_class`` name the outer row's columns.
    """
    used = (
        Allocation.objects.filter(
            resource_provider_id=OuterRef(provider), resource_class_id=OuterRef(resource_class)
        )
        .order_by()
        .values("resource_provider_id")
        .annotate(total=Sum("used"))
        .values("total")
    )
    return Coalesce(Subquery(used, output_field=BigIntegerField()), Value(0))


def usage_joined(inventories, *group_by, name="used"):
    """``inventories`` (an Inventory queryset) grouped by the columns ``group_by`` (which
    should include ``"id"``: one group per row) and annotated with ``name``: the row's
    usage, as a LEFT JOIN on its provider's allocations of its class, summed per group."""
    return (
        inventories.annotate(
            _class_allocations=FilteredRelation(
                "resource_provider__allocations",
                condition=Q(
                    resource_provider__allocations__resource_class_id=F("resource_class_id")
                ),
            )
        )
        .values(*group_by)
        .annotate(
            **{
                name: Coalesce(
                    Sum("_class_allocations__used"), Value(0), output_field=BigIntegerField()
                )
            }
        )
    )


def usage_grouped(*group_by, **filters):
    """``(*keys, used)`` rows: usage summed per ``group_by`` (Allocation columns or paths,
    e.g. ``"resource_provider__root_id"``) over the allocations matching ``filters``."""
    return (
        Allocation.objects.filter(**filters)
        .order_by()
        .values(*group_by)
        .annotate(used=Sum("used"))
        .values_list(*group_by, "used")
    )


def usage_rows(*, provider_ids=None, class_ids=None):
    """``(provider id, class id, used)`` rows, one per pair with allocations (a queryset)."""
    filters = {}
    if provider_ids is not None:
        filters["resource_provider_id__in"] = provider_ids
    if class_ids is not None:
        filters["resource_class_id__in"] = class_ids
    return usage_grouped("resource_provider_id", "resource_class_id", **filters)


def usage_by_provider_and_class(*, provider_ids=None, class_ids=None):
    """``{(provider id, class id): used}`` for the pairs with allocations (others: 0)."""
    return {
        (provider_id, class_id): used
        for provider_id, class_id, used in usage_rows(
            provider_ids=provider_ids, class_ids=class_ids
        )
    }


def usage_by_class(**filters):
    """``{class id: used}`` summed over the providers of the allocations matching ``filters``
    (every provider by default)."""
    return dict(usage_grouped("resource_class_id", **filters))


def usage_by_root_and_class(root_ids):
    """``{(root id, class id): used}`` summed over each whole tree."""
    return {
        (root, class_id): used
        for root, class_id, used in usage_grouped(
            "resource_provider__root_id",
            "resource_class_id",
            resource_provider__root_id__in=root_ids,
        )
    }
