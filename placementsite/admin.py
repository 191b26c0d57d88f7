"""The admin site's names and links, and the admin of the service's own bookkeeping."""

from django.contrib import admin

from .models import Heartbeat

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
