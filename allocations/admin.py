"""Admin of projects, users, consumer types, consumers and allocations.

These rows are written by allocation requests (the API's ``PUT
/allocations/{consumer}``, ``POST /allocations``, the reshaper): the admin
shows them and can remove a consumer's allocations through the same service
as ``DELETE /allocations/{consumer}`` (provider generations left alone).
"""

from django.contrib import admin, messages
from django.http import HttpResponseRedirect

from placementsite.core.admin_base import CountedAdmin, NoWrites, ReadOnlyInline, ViewOnlyAdmin
from placementsite.core.exceptions import DomainError

from .models import Allocation, Consumer, ConsumerType, Project, User
from .services.allocations import allocation_delete


class ConsumerCounted(CountedAdmin):
    counts = {"consumer_count": ("consumers", "consumers")}


@admin.register(Project)
class ProjectAdmin(NoWrites, ConsumerCounted):
    list_display = ["external_id", "consumer_count", "created_at"]
    search_fields = ["external_id"]


@admin.register(User)
class UserAdmin(NoWrites, ConsumerCounted):
    list_display = ["external_id", "consumer_count", "created_at"]
    search_fields = ["external_id"]


@admin.register(ConsumerType)
class ConsumerTypeAdmin(NoWrites, ConsumerCounted):
    list_display = ["name", "consumer_count", "created_at"]
    search_fields = ["name"]


class AllocationInline(ReadOnlyInline):
    model = Allocation
    show_change_link = False
    fields = ["resource_provider", "resource_class", "used"]
    readonly_fields = fields

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("resource_provider", "resource_class")


@admin.register(Consumer)
class ConsumerAdmin(CountedAdmin):
    list_display = [
        "uuid",
        "project",
        "user",
        "consumer_type",
        "generation",
        "allocation_count",
        "updated_at",
    ]
    list_select_related = ["project", "user", "consumer_type"]
    list_filter = ["consumer_type"]
    search_fields = ["=uuid", "project__external_id", "user__external_id"]
    readonly_fields = ["uuid", "project", "user", "consumer_type", "generation", "created_at"]
    inlines = [AllocationInline]
    counts = {"allocation_count": ("allocations", "allocations")}

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def get_deleted_objects(self, objs, request):
        # Allocations are view-only on their own, but go with their consumer.
        deleted, model_count, _perms_needed, protected = super().get_deleted_objects(objs, request)
        return deleted, model_count, set(), protected

    def delete_model(self, request, obj):
        allocation_delete(consumer_uuid=str(obj.uuid))

    def delete_queryset(self, request, queryset):
        for consumer in queryset:
            try:
                allocation_delete(consumer_uuid=str(consumer.uuid))
            except DomainError as exc:
                self.message_user(request, exc.detail, messages.ERROR)

    def delete_view(self, request, object_id, extra_context=None):
        try:
            return super().delete_view(request, object_id, extra_context)
        except DomainError as exc:
            self.message_user(request, exc.detail, messages.ERROR)
            return HttpResponseRedirect(request.path)


@admin.register(Allocation)
class AllocationAdmin(ViewOnlyAdmin):
    list_display = ["consumer", "resource_provider", "resource_class", "used", "created_at"]
    list_select_related = ["consumer", "resource_provider", "resource_class"]
    list_filter = ["resource_class"]
    search_fields = ["=consumer__uuid", "resource_provider__name", "=resource_provider__uuid"]
    show_full_result_count = False
