"""The admin site's names and links, and the admin of the service's own bookkeeping."""

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseRedirect
from django.urls import reverse
from knox.models import AuthToken

from .core.admin_base import ViewOnlyAdmin
from .core.api.tokens import token_create
from .models import Heartbeat, ServiceProcess, TaskRun

# "View site" leads to the operator dashboard (/ is the Placement API's version document).
admin.site.site_url = "/dashboard/"
admin.site.site_header = "Placement administration"
admin.site.site_title = "Placement admin"
admin.site.index_title = "Placement data"


@admin.register(Heartbeat)
class HeartbeatAdmin(admin.ModelAdmin):
    list_display = ["name", "last_run", "runs", "hostname"]
    search_fields = ["name", "hostname"]
    ordering = ["name"]
    readonly_fields = ["name", "last_run", "runs", "hostname"]

    def has_add_permission(self, request):
        return False  # only the task writes heartbeats


@admin.register(TaskRun)
class TaskRunAdmin(ViewOnlyAdmin):
    """Every Celery task run, from its start; ``lost``: its worker was killed during it."""

    list_display = ["task", "state", "worker", "started_at", "finished_at"]
    list_filter = ["state", "task"]
    search_fields = ["task", "task_id", "worker"]
    date_hierarchy = "started_at"


@admin.register(ServiceProcess)
class ServiceProcessAdmin(ViewOnlyAdmin):
    """The Celery workers and beats last seen alive."""

    list_display = ["kind", "name", "started_at", "last_seen"]
    list_filter = ["kind"]


class ApiTokenCreateForm(forms.ModelForm):
    days = forms.IntegerField(
        min_value=0,
        initial=settings.PLACEMENT_TOKEN_TTL_DAYS,
        help_text="Days before the token expires (0: never).",
    )
    rotate = forms.BooleanField(
        required=False, help_text="Delete the user's other tokens (rotation)."
    )

    class Meta:
        model = AuthToken
        fields = ["user"]


# knox's own admin lists the digests and full-text search on them; this one shows the first
# characters of a token only, and a new token once, to the operator who created it.
# A token acts as its user, so only a superuser mints tokens for other users: staff with the
# "add auth token" permission mint their own.
admin.site.unregister(AuthToken)


@admin.register(AuthToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ["prefix", "user", "created", "expiry"]
    list_filter = ["expiry"]
    search_fields = ["token_key", "user__username"]
    ordering = ["-created"]
    raw_id_fields = ["user"]

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "user" and not request.user.is_superuser:
            kwargs["queryset"] = get_user_model().objects.filter(pk=request.user.pk)
            kwargs["initial"] = request.user.pk
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    @admin.display(description="token starts with")
    def prefix(self, token):
        return f"{token.token_key[:8]}…"

    def get_fields(self, request, obj=None):
        return (
            ["user", "days", "rotate"] if obj is None else ["prefix", "user", "created", "expiry"]
        )

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else ["prefix", "user", "created", "expiry"]

    def get_form(self, request, obj=None, **kwargs):
        if obj is None:
            kwargs["form"] = ApiTokenCreateForm
        return super().get_form(request, obj, **kwargs)

    def save_model(self, request, obj, form, change):
        if change:
            return  # nothing of a token is editable
        if form.cleaned_data["user"] != request.user and not request.user.is_superuser:
            raise PermissionDenied("Only a superuser creates tokens for other users.")
        created, token = token_create(
            user=form.cleaned_data["user"],
            days=form.cleaned_data["days"],
            rotate=form.cleaned_data["rotate"],
        )
        self.message_user(
            request,
            f"API token for {created.user}: {token} (shown only this once; send it as "
            "X-Auth-Token)",
            messages.SUCCESS,
        )

    def response_add(self, request, obj, post_url_continue=None):
        # Back to the list (the token's own page would name it by its digest).
        return HttpResponseRedirect(reverse("admin:knox_authtoken_changelist"))
