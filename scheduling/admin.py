"""Admin of moves and of what the cleanup and the audit recorded (read-only: every change
goes through the services)."""

from django.contrib import admin

from .models import LifecycleRecord, Migration


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class RecordInline(admin.TabularInline):
    model = LifecycleRecord
    fields = ["created_at", "action", "origin", "allocations", "detail"]
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Migration)
class MigrationAdmin(ReadOnlyAdmin):
    list_display = ["uuid", "kind", "status", "server_uuid", "source", "dest", "created_at"]
    list_filter = ["status", "kind"]
    search_fields = ["uuid", "server_uuid", "source__name", "dest__name"]
    list_select_related = ["source", "dest"]
    date_hierarchy = "created_at"
    inlines = [RecordInline]


@admin.register(LifecycleRecord)
class LifecycleRecordAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "action", "origin", "consumer_uuid", "migration", "detail"]
    list_filter = ["action", "origin"]
    search_fields = ["consumer_uuid", "run", "detail"]
    list_select_related = ["migration"]
    date_hierarchy = "created_at"
