"""Admin of resource classes, traits, providers, inventories and aggregates.

Every write goes through the services in ``providers/services``, by the forms and admins
of :mod:`placementsite.core.admin_base` (``ServiceForm``, ``ServiceAdmin``): a domain error
is a form error, and nothing is written. The inlines are read-only, so a form that passed
``clean()`` is never rejected afterwards (which would keep a write the page says was not
made). What is the providers' own: standard resource classes and traits are read-only.
"""

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db.models import Exists, OuterRef
from django.utils.html import format_html

from placementsite.core import uuids
from placementsite.core.admin_base import (
    CountedAdmin,
    NoWrites,
    ReadOnlyInline,
    ServiceAdmin,
    ServiceForm,
    ViewOnlyAdmin,
)
from placementsite.core.exceptions import DuplicateName, InvalidRequest

from .capacity import Capacity
from .host_reports import REPORT_FIELDS
from .models import (
    Aggregate,
    ComputeNode,
    Inventory,
    InventoryChange,
    ResourceClass,
    ResourcePool,
    ResourceProvider,
    ResourceProviderAggregate,
    ResourceProviderTrait,
    Trait,
)
from .services import compute_nodes as compute_node_services
from .services import inventories as inventory_services
from .services import resource_classes as resource_class_services
from .services import resource_pools as resource_pool_services
from .services import resource_providers as provider_services
from .services import traits as trait_services
from .services.aggregates import provider_aggregates_set
from .usage import usage_subquery


class CustomOnlyMixin:
    """Standard names (os-resource-classes, os-traits) are read-only."""

    def has_change_permission(self, request, obj=None):
        if obj is not None and not obj.is_custom:
            return False
        return super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        if obj is not None and not obj.is_custom:
            return False
        return super().has_delete_permission(request, obj)

    @admin.display(boolean=True, description="custom", ordering="name")
    def custom(self, obj):
        return obj.is_custom


class StandardOrCustomFilter(admin.SimpleListFilter):
    title = "kind"
    parameter_name = "kind"

    def lookups(self, request, model_admin):
        return [("custom", "custom"), ("standard", "standard")]

    def queryset(self, request, queryset):
        if self.value() == "custom":
            return queryset.filter(name__startswith="CUSTOM_")
        if self.value() == "standard":
            return queryset.exclude(name__startswith="CUSTOM_")
        return queryset


# --- resource classes -------------------------------------------------------


class ResourceClassForm(ServiceForm):
    class Meta:
        model = ResourceClass
        fields = ["name", "kind", "unit", "description"]

    def apply(self, cleaned):
        name = cleaned["name"]
        if self.instance.pk is None:
            rc = resource_class_services.resource_class_create(name=name)
        elif name == self.instance.name:
            rc = self.instance
        else:
            rc = resource_class_services.resource_class_rename(
                name=self.instance.name, new_name=name
            )
        return resource_class_services.resource_class_describe(
            name=rc.name,
            kind=cleaned.get("kind") or ResourceClass.Kind.OTHER,
            unit=cleaned.get("unit", ""),
            description=cleaned.get("description", ""),
        )


@admin.register(ResourceClass)
class ResourceClassAdmin(CustomOnlyMixin, ServiceAdmin):
    form = ResourceClassForm
    list_display = ["name", "custom", "kind", "unit", "inventory_count", "created_at"]
    counts = {"inventory_count": ("inventories", "inventories")}
    list_filter = [StandardOrCustomFilter]
    search_fields = ["name"]
    ordering = ["id"]

    def delete_via_service(self, obj):
        resource_class_services.resource_class_delete(name=obj.name)


# --- traits -------------------------------------------------------------------


class TraitForm(ServiceForm):
    class Meta:
        model = Trait
        fields = ["name"]

    def apply(self, cleaned):
        name = cleaned["name"]
        if self.instance.pk is not None and name != self.instance.name:
            raise InvalidRequest("A trait cannot be renamed; create a new one instead.")
        trait, created = trait_services.trait_ensure(name=name)
        if self.instance.pk is None and not created:
            raise DuplicateName(f"Trait {name} already exists.")
        return trait


@admin.register(Trait)
class TraitAdmin(CustomOnlyMixin, ServiceAdmin):
    form = TraitForm
    list_display = ["name", "custom", "provider_count", "created_at"]
    counts = {"provider_count": ("resource_providers", "providers")}
    list_filter = [StandardOrCustomFilter]
    search_fields = ["name"]
    ordering = ["id"]

    def has_change_permission(self, request, obj=None):
        # Traits have nothing to edit but their name, which Placement never changes.
        if obj is not None:
            return False
        return super().has_change_permission(request, obj)

    def delete_via_service(self, obj):
        trait_services.trait_delete(name=obj.name)


# --- resource providers -------------------------------------------------------


class InventoryInline(ReadOnlyInline):
    model = Inventory
    fields = ["resource_class", "total", "reserved", "allocation_ratio", "usable", "used"]
    readonly_fields = fields

    def get_queryset(self, request):
        # Usage in the same query as the rows (no query per inventory).
        return (
            super()
            .get_queryset(request)
            .select_related("resource_class")
            .annotate(_used=usage_subquery())
        )

    @admin.display(description="capacity")
    def usable(self, obj):
        return obj.capacity.usable

    @admin.display(description="used")
    def used(self, obj):
        return obj._used


class ChildInline(ReadOnlyInline):
    model = ResourceProvider
    fk_name = "parent"
    fields = ["name", "uuid", "generation"]
    readonly_fields = fields
    verbose_name = "child provider"
    verbose_name_plural = "child providers"


def split_uuids(text):
    found = []
    for item in text.replace(",", " ").split():
        named = uuids.parse(item)
        if named is None:
            raise ValidationError(f"{item!r} is not a UUID.")
        found.append(named)
    return found


class ResourceProviderForm(ServiceForm):
    # Not named "traits": the model's traits field has a through model, which
    # the admin refuses to edit directly (admin.E013).
    provider_traits = forms.ModelMultipleChoiceField(
        label="Traits",
        queryset=Trait.objects.order_by("name"),
        required=False,
        widget=admin.widgets.FilteredSelectMultiple("traits", is_stacked=False),
    )
    aggregate_uuids = forms.CharField(
        label="Aggregates",
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Aggregate UUIDs the provider is a member of, one per line.",
    )

    class Meta:
        model = ResourceProvider
        fields = ["name", "uuid", "parent", "generation"]
        widgets = {"generation": forms.HiddenInput}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["generation"].required = False
        if self.instance.pk is not None:
            self.fields["provider_traits"].initial = list(self.instance.traits.all())
            self.fields["aggregate_uuids"].initial = "\n".join(
                str(u) for u in self.instance.aggregates.values_list("uuid", flat=True)
            )
            self.fields["uuid"].disabled = True
            self.fields["parent"].queryset = ResourceProvider.objects.exclude(pk=self.instance.pk)

    def clean_aggregate_uuids(self):
        return split_uuids(self.cleaned_data.get("aggregate_uuids", ""))

    def apply(self, cleaned):
        parent = cleaned.get("parent")
        parent_uuid = parent.uuid if parent else None
        if self.instance.pk is None:
            provider = provider_services.resource_provider_create(
                name=cleaned["name"], uuid=cleaned["uuid"], parent_uuid=parent_uuid
            )
        else:  # 1.37 rules: reparenting allowed, never into its own subtree
            provider = provider_services.resource_provider_update(
                uuid=self.instance.uuid,
                name=cleaned["name"],
                parent_uuid=parent_uuid,
                allow_reparenting=True,
                generation=cleaned.get("generation"),
            )
        trait_names = [t.name for t in cleaned.get("provider_traits") or []]
        if set(trait_names) != set(provider.traits.values_list("name", flat=True)):
            provider, _ = trait_services.provider_traits_set(
                provider_uuid=provider.uuid, traits=trait_names, generation=provider.generation
            )
        aggregates = cleaned.get("aggregate_uuids") or []
        current = {str(u) for u in provider.aggregates.values_list("uuid", flat=True)}
        if set(aggregates) != current:
            provider, _ = provider_aggregates_set(
                provider_uuid=provider.uuid, aggregates=aggregates, generation=provider.generation
            )
        return provider


class IsRootFilter(admin.SimpleListFilter):
    title = "position in tree"
    parameter_name = "tree"

    def lookups(self, request, model_admin):
        return [("root", "roots"), ("child", "children")]

    def queryset(self, request, queryset):
        if self.value() == "root":
            return queryset.filter(parent__isnull=True)
        if self.value() == "child":
            return queryset.filter(parent__isnull=False)
        return queryset


class TraitNameFilter(admin.SimpleListFilter):
    """Providers having a trait, typed in a search box: a list of every trait (~300 standard
    ones) would make the sidebar thousands of pixels tall."""

    title = "trait"
    parameter_name = "trait"
    template = "admin/text_filter.html"

    def lookups(self, request, model_admin):
        return []

    def has_output(self):
        return True

    def choices(self, changelist):
        # The box's form keeps every other filter and the search in hidden fields.
        kept = [
            (name, value)
            for name, values in changelist.get_filters_params().items()
            if name != self.parameter_name
            for value in (values if isinstance(values, list) else [values])
        ]
        if changelist.query:
            kept.append(("q", changelist.query))
        yield {
            "value": self.value() or "",
            "parameter_name": self.parameter_name,
            "kept": kept,
            "clear_url": changelist.get_query_string(remove=[self.parameter_name]),
        }

    def queryset(self, request, queryset):
        name = (self.value() or "").strip().upper()
        if not name:
            return queryset
        return queryset.filter(
            Exists(
                ResourceProviderTrait.objects.filter(
                    resource_provider_id=OuterRef("pk"), trait__name=name
                )
            )
        )


@admin.register(ResourceProvider)
class ResourceProviderAdmin(ServiceAdmin):
    form = ResourceProviderForm
    list_display = ["name", "uuid", "parent", "root", "generation", "inventory_count"]
    counts = {"inventory_count": ("inventories", "inventories")}
    list_select_related = ["parent", "root"]
    list_filter = [IsRootFilter, TraitNameFilter, "inventories__resource_class"]
    search_fields = ["name", "uuid", "parent__name", "root__name"]
    readonly_fields = ["root", "created_at", "updated_at"]
    fields = [
        "name",
        "uuid",
        "parent",
        "root",
        "generation",
        "provider_traits",
        "aggregate_uuids",
        "created_at",
        "updated_at",
    ]
    autocomplete_fields = ["parent"]
    inlines = [InventoryInline, ChildInline]
    ordering = ["id"]

    def delete_via_service(self, obj):
        provider_services.resource_provider_delete(uuid=obj.uuid)


# --- inventories ----------------------------------------------------------------


INVENTORY_FIELDS = ["total", "reserved", "min_unit", "max_unit", "step_size", "allocation_ratio"]


class InventoryForm(ServiceForm):
    generation = forms.IntegerField(widget=forms.HiddenInput, required=False)

    class Meta:
        model = Inventory
        fields = ["resource_provider", "resource_class", *INVENTORY_FIELDS]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk is not None:
            self.fields["resource_provider"].disabled = True
            self.fields["resource_class"].disabled = True
            self.fields["generation"].initial = self.instance.resource_provider.generation

    def apply(self, cleaned):
        # The add page creates (a class the provider has is a conflict), the change page
        # updates with the generation it was rendered with.
        provider, resource_class = cleaned["resource_provider"], cleaned["resource_class"]
        fields = Capacity(**{name: cleaned[name] for name in INVENTORY_FIELDS})
        if self.instance.pk is None:
            _provider, inventory = inventory_services.inventory_create(
                provider_uuid=provider.uuid,
                resource_class=resource_class.name,
                inventory=fields,
                allow_reserved_equal_total=True,
            )
            return inventory
        generation = cleaned.get("generation")
        _provider, inventory = inventory_services.inventory_update(
            provider_uuid=provider.uuid,
            resource_class=resource_class.name,
            generation=provider.generation if generation is None else generation,
            inventory=fields,
            allow_reserved_equal_total=True,
        )
        return inventory


@admin.register(Inventory)
class InventoryAdmin(ServiceAdmin):
    form = InventoryForm
    list_display = [
        "resource_provider",
        "resource_class",
        "total",
        "reserved",
        "allocation_ratio",
        "usable",
        "used",
        "fullness",
    ]
    list_select_related = ["resource_provider", "resource_class"]
    list_filter = ["resource_class"]
    search_fields = ["resource_provider__name", "=resource_provider__uuid", "resource_class__name"]
    autocomplete_fields = ["resource_provider"]
    ordering = ["resource_provider_id", "resource_class_id"]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_used=usage_subquery())

    @admin.display(description="capacity")
    def usable(self, obj):
        return obj.capacity.usable

    @admin.display(description="used", ordering="_used")
    def used(self, obj):
        return obj._used

    @admin.display(description="full")
    def fullness(self, obj):
        usable = obj.capacity.usable
        if usable <= 0:
            return "-"
        percent = 100 * obj._used / usable
        return format_html("{}%", f"{percent:.0f}")

    def delete_via_service(self, obj):
        inventory_services.inventory_delete(
            provider_uuid=obj.resource_provider.uuid, resource_class=obj.resource_class.name
        )


# --- aggregates and the provider links ----------------------------------------


class MemberInline(ReadOnlyInline):
    model = ResourceProviderAggregate
    fields = ["resource_provider"]
    readonly_fields = fields
    verbose_name = "member"
    verbose_name_plural = "members"


@admin.register(Aggregate)
class AggregateAdmin(NoWrites, CountedAdmin):
    """Aggregates exist through their members: edit membership on the provider."""

    list_display = ["uuid", "member_count", "created_at"]
    counts = {"member_count": ("resource_providers", "members")}
    search_fields = ["uuid"]
    readonly_fields = ["uuid", "created_at"]
    inlines = [MemberInline]


class LinkAdmin(ViewOnlyAdmin):
    """Provider-trait and provider-aggregate links: listed here, edited on the provider."""


@admin.register(ResourceProviderTrait)
class ResourceProviderTraitAdmin(LinkAdmin):
    list_display = ["resource_provider", "trait"]
    list_select_related = ["resource_provider", "trait"]
    list_filter = ["trait"]
    search_fields = ["resource_provider__name", "=resource_provider__uuid", "trait__name"]


@admin.register(ResourceProviderAggregate)
class ResourceProviderAggregateAdmin(LinkAdmin):
    list_display = ["resource_provider", "aggregate"]
    list_select_related = ["resource_provider", "aggregate"]
    search_fields = ["resource_provider__name", "=resource_provider__uuid", "=aggregate__uuid"]


# --- compute hosts ------------------------------------------------------------


@admin.register(ComputeNode)
class ComputeNodeAdmin(ServiceAdmin):
    """Hosts are written by their reports and the sync; an operator enables or disables one
    (saying why), or decommissions it (refused while anything is allocated on its tree)."""

    list_display = [
        "hostname",
        "enabled",
        "vcpus",
        "memory_mb",
        "local_gb",
        "reported_at",
        "synced_at",
        "sync_status",
    ]
    list_filter = ["enabled", "sync_status", "hypervisor_type"]
    search_fields = ["hostname"]
    list_editable = ["enabled"]
    fields = [
        "hostname",
        "provider",
        "enabled",
        "disabled_reason",
        "forced_down",
        *REPORT_FIELDS,
        "reported_at",
        "synced_at",
        "sync_status",
        "sync_error",
        "plugin_errors",
        "sync_attempts",
        "next_sync_at",
    ]
    readonly_fields = [f for f in fields if f not in ("enabled", "disabled_reason", "forced_down")]

    def has_add_permission(self, request):
        return False

    def save_model(self, request, obj, form, change):
        if "forced_down" in form.changed_data:
            compute_node_services.compute_node_force_down(
                hostname=obj.hostname, forced_down=obj.forced_down
            )
        reason = "" if obj.enabled else obj.disabled_reason
        compute_node_services.compute_node_set_enabled(
            hostname=obj.hostname, enabled=obj.enabled, reason=reason
        )

    def delete_via_service(self, obj):
        compute_node_services.compute_node_delete(hostname=obj.hostname)


@admin.register(ResourcePool)
class ResourcePoolAdmin(ServiceAdmin):
    """Pools are written by their reports and the sync; an operator enables or disables one
    (saying why), or deletes it (refused while anything is allocated on its provider)."""

    list_display = ["name", "kind", "enabled", "reported_at", "synced_at", "sync_status"]
    list_filter = ["enabled", "sync_status", "kind"]
    search_fields = ["name"]
    list_editable = ["enabled"]
    fields = [
        "name",
        "kind",
        "provider",
        "aggregate_uuid",
        "enabled",
        "disabled_reason",
        "inventories",
        "members",
        "traits",
        "stats",
        "reported_at",
        "synced_at",
        "sync_status",
        "sync_error",
        "plugin_errors",
        "sync_attempts",
        "next_sync_at",
    ]
    readonly_fields = [f for f in fields if f not in ("enabled", "disabled_reason")]

    def has_add_permission(self, request):
        return False

    def save_model(self, request, obj, form, change):
        reason = "" if obj.enabled else obj.disabled_reason
        resource_pool_services.resource_pool_set_enabled(
            name=obj.name, enabled=obj.enabled, reason=reason
        )

    def delete_via_service(self, obj):
        resource_pool_services.resource_pool_delete(name=obj.name)


@admin.register(InventoryChange)
class InventoryChangeAdmin(admin.ModelAdmin):
    """The drift history: read-only."""

    list_display = [
        "changed_at",
        "provider",
        "resource_class",
        "old_total",
        "new_total",
        "old_reserved",
        "new_reserved",
        "old_allocation_ratio",
        "new_allocation_ratio",
    ]
    list_filter = ["resource_class"]
    search_fields = ["provider__name"]
    list_select_related = ["provider", "resource_class"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
