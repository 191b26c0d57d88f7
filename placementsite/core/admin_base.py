"""What every app's admin shares: read-only permissions and counted columns.

Plumbing like ``placementsite.core.api``: it imports no app, so every app's ``admin.py`` may use it.
"""

from django.contrib import admin
from django.db.models import Count


class NoWrites:
    """Rows the admin shows but never adds, changes or deletes (the API's services write them)."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ViewOnlyAdmin(NoWrites, admin.ModelAdmin):
    pass


class ReadOnlyInline(NoWrites, admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = True


def _count_display(column, description):
    @admin.display(description=description, ordering=f"_{column}")
    def show(self, obj):
        return getattr(obj, f"_{column}")

    show.__name__ = column
    return show


class CountedAdmin(admin.ModelAdmin):
    """``counts`` maps a column name (for ``list_display``) to ``(relation, description)``:
    the column shows how many related rows each row has, counted in the changelist's own
    query (annotated as ``_<column>``) and sortable."""

    counts = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for column, (_relation, description) in cls.counts.items():
            setattr(cls, column, _count_display(column, description))

    def get_queryset(self, request):
        queryset = super().get_queryset(request)
        if not self.counts:
            return queryset
        return queryset.annotate(
            **{f"_{column}": Count(relation) for column, (relation, _d) in self.counts.items()}
        )
