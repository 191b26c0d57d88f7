"""Keep the standard resource classes and traits in the database.

Run after every ``migrate``: an empty database gets every name from
os-resource-classes and os-traits, and after upgrading those packages the
new names are added. Nothing is ever removed (it may be in use).
"""

import os_resource_classes
import os_traits


def sync_standard_names(using="default", **_kwargs):
    from .models import ResourceClass, Trait

    _insert_missing(ResourceClass, list(os_resource_classes.STANDARDS), using)
    _insert_missing(Trait, sorted(os_traits.get_traits()), using)


def _insert_missing(model, names, using):
    existing = set(model.objects.using(using).filter(name__in=names).values_list("name", flat=True))
    missing = [model(name=name) for name in names if name not in existing]
    # bulk_create keeps the packages' order in the ids, which lists follow.
    model.objects.using(using).bulk_create(missing, batch_size=500, ignore_conflicts=True)
