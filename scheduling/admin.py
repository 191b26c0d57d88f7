"""Admin of flavors (extra specs checked by the same rules as /api/flavors/), servers (deleted
through the service that frees their allocations), aggregate metadata, and of moves and what
the cleanup and the audit recorded (read-only: every change goes through the services)."""

from django import forms
from django.contrib import admin

from placementsite.core.admin_base import ReadOnlyInline, ViewOnlyAdmin

from .extra_specs import InvalidExtraSpec, validate
from .flavor_snapshots import size_changes
from .models import (
    AggregateMetadata,
    Flavor,
    FlavorAccess,
    LifecycleRecord,
    Migration,
    Server,
    ServerGroup,
    ServerGroupMember,
)
from .services.servers import server_delete


class FlavorForm(forms.ModelForm):
    class Meta:
        model = Flavor
        fields = [
            "name",
            "vcpus",
            "ram",
            "disk",
            "ephemeral",
            "swap",
            "extra_specs",
            "is_public",
            "disabled",
        ]

    def clean(self):
        data = super().clean()
        if self.instance.pk is not None:
            for size in size_changes(self.instance, data):
                self.add_error(size, "A flavor's sizes cannot change; create a new flavor.")
        amounts = ("vcpus", "ram", "disk", "ephemeral", "swap")
        if all(data.get(name) is not None for name in amounts):
            try:
                validate(
                    **{name: data[name] for name in amounts},
                    extra_specs=data.get("extra_specs") or {},
                )
            except InvalidExtraSpec as exc:
                self.add_error("extra_specs", exc.detail)
        return data


class FlavorAccessInline(admin.TabularInline):
    """The projects a private flavor is given to (as /api/flavors/{id}/access/)."""

    model = FlavorAccess
    fields = ["project_id", "created_at"]
    readonly_fields = ["created_at"]
    extra = 0


@admin.register(Flavor)
class FlavorAdmin(admin.ModelAdmin):
    form = FlavorForm
    inlines = [FlavorAccessInline]
    list_display = ["name", "vcpus", "ram", "disk", "ephemeral", "swap", "is_public", "disabled"]
    list_filter = ["is_public", "disabled"]
    search_fields = ["name"]


@admin.register(Server)
class ServerAdmin(admin.ModelAdmin):
    list_display = ["name", "uuid", "flavor", "host", "project_id", "created_at"]
    list_select_related = ["flavor", "host"]
    list_filter = ["flavor"]
    search_fields = ["name", "=uuid", "project_id", "host__name"]
    readonly_fields = [f.name for f in Server._meta.fields]

    def has_add_permission(self, request):
        return False  # servers are made by the scheduler (POST /api/servers/)

    def delete_model(self, request, obj):
        server_delete(server=obj)

    def delete_queryset(self, request, queryset):
        for server in queryset:
            server_delete(server=server)


class ServerGroupMemberInline(ReadOnlyInline):
    model = ServerGroupMember
    show_change_link = False
    fields = ["server", "created_at"]
    readonly_fields = fields


@admin.register(ServerGroup)
class ServerGroupAdmin(ViewOnlyAdmin):
    """Server groups (made and deleted through /api/server-groups/), with their members."""

    list_display = ["name", "uuid", "policy", "project_id", "created_at"]
    list_filter = ["policy"]
    search_fields = ["name", "=uuid", "project_id"]
    inlines = [ServerGroupMemberInline]


@admin.register(AggregateMetadata)
class AggregateMetadataAdmin(admin.ModelAdmin):
    list_display = ["__str__", "availability_zone", "aggregate"]
    search_fields = ["name", "availability_zone", "=aggregate__uuid"]
    raw_id_fields = ["aggregate"]


class RecordInline(ReadOnlyInline):
    model = LifecycleRecord
    show_change_link = False
    fields = ["created_at", "action", "origin", "allocations", "detail"]
    readonly_fields = fields


@admin.register(Migration)
class MigrationAdmin(ViewOnlyAdmin):
    list_display = ["uuid", "kind", "status", "server_uuid", "source", "dest", "created_at"]
    list_filter = ["status", "kind"]
    search_fields = ["uuid", "server_uuid", "source__name", "dest__name"]
    list_select_related = ["source", "dest"]
    date_hierarchy = "created_at"
    inlines = [RecordInline]


@admin.register(LifecycleRecord)
class LifecycleRecordAdmin(ViewOnlyAdmin):
    list_display = ["created_at", "action", "origin", "consumer_uuid", "migration", "detail"]
    list_filter = ["action", "origin"]
    search_fields = ["consumer_uuid", "run", "detail"]
    list_select_related = ["migration"]
    date_hierarchy = "created_at"
