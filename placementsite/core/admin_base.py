"""What every app's admin shares: read-only permissions, counted columns, and forms and
admins that write through an app's services.

The admin is one more edge, like the API: an app's admin writes through its services, inside
the admin's transaction. A domain error (``placementsite.core.exceptions``) a service raises
becomes a form error (or, for a delete or an action, an error message), so an edit the API
would refuse is refused here with the same message, and nothing is written.

Plumbing like ``placementsite.core.api``: it imports no app, so every app's ``admin.py`` may use it.
"""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count
from django.http import HttpResponseRedirect

from placementsite.core.exceptions import DomainError


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


def as_form_error(exc):
    """A domain error as the form error that shows its message."""
    return ValidationError(exc.detail or str(exc))


class ServiceForm(forms.ModelForm):
    """A model form whose ``clean()`` performs the write through ``apply()`` (a service call):
    that is the last moment an error can still be shown on the form, so the admin's
    ``save_model`` has nothing left to do."""

    def clean(self):
        cleaned = super().clean()
        if self.errors:
            return cleaned
        try:
            with transaction.atomic():
                result = self.apply(cleaned)
        except DomainError as exc:
            raise as_form_error(exc) from None
        if result is not None:
            self.instance = result
        return cleaned

    def _post_clean(self):
        # The service wrote the row; the model's own validation (which would
        # see a unique name as taken by the row just written) is not wanted.
        if self.errors:
            return super()._post_clean()

    def save(self, commit=True):
        return self.instance

    def save_m2m(self):
        pass

    def apply(self, cleaned):  # pragma: no cover - every form defines it
        raise NotImplementedError


class ServiceAdmin(CountedAdmin):
    """Saves happen in the form; deletes go through ``delete_via_service``."""

    def save_model(self, request, obj, form, change):
        pass  # written by the form's service call

    def delete_model(self, request, obj):
        self.delete_via_service(obj)

    def delete_queryset(self, request, queryset):
        for obj in queryset:
            self.delete_via_service(obj)

    def delete_via_service(self, obj):  # pragma: no cover - overridden
        raise NotImplementedError

    def delete_view(self, request, object_id, extra_context=None):
        try:
            with transaction.atomic():
                return super().delete_view(request, object_id, extra_context)
        except DomainError as exc:
            self.message_user(request, exc.detail, messages.ERROR)
            return HttpResponseRedirect(request.path)

    def response_action(self, request, queryset):
        try:
            with transaction.atomic():
                return super().response_action(request, queryset)
        except DomainError as exc:
            self.message_user(request, exc.detail, messages.ERROR)
            return HttpResponseRedirect(request.get_full_path())
