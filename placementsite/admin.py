"""Admin of the service's own bookkeeping: when the periodic tasks last ran."""

from django.contrib import admin

from .models import Heartbeat


@admin.register(Heartbeat)
class HeartbeatAdmin(admin.ModelAdmin):
    list_display = ["name", "last_run", "runs", "hostname"]
    search_fields = ["name", "hostname"]
    ordering = ["name"]
    readonly_fields = ["name", "last_run", "runs", "hostname"]

    def has_add_permission(self, request):
        return False  # only the task writes heartbeats
