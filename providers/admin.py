"""Admin of resource classes, traits, providers, inventories and aggregates.

The admin is one more edge, like the API: every write goes through the
services in ``providers/services`` (or, where a service is still missing, the
same rules: the capacity model and the generation helpers), inside the
admin's transaction. A ``PlacementError`` a service raises becomes a form
error, so an edit the API would refuse is refused here with the same
message, and nothing is written.

Forms apply their write in ``clean()``: that is the last moment an error can
still be shown on the form. The admin's ``save_model`` then has nothing left
to do. The inlines are read-only, so a form that passed ``clean()`` is never
rejected afterwards (which would keep a write the page says was not made).
"""

import importlib
import uuid as uuidlib

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Sum
from django.utils.html import format_html

from placementsite.api.errors import BadRequest, Conflict, PlacementError

from .models import (
    CUSTOM_NAME_RE,
    MAX_INT,
    Aggregate,
    Inventory,
    ResourceClass,
    ResourceProvider,
    ResourceProviderAggregate,
    ResourceProviderTrait,
    Trait,
)
from .services import generations
from .services import resource_classes as resource_class_services
from .services import traits as trait_services
from .services.aggregates import provider_aggregates_set


def optional_service(module, name):
    """``providers.services.<module>.<name>`` if another part of the project provides it."""
    try:
        found = importlib.import_module(f"providers.services.{module}")
    except ImportError:
        return None
    return getattr(found, name, None)


def as_form_error(exc):
    return ValidationError(exc.detail or str(exc))


class ServiceForm(forms.ModelForm):
    """A model form whose ``clean()`` performs the write through ``apply()``."""

    def clean(self):
        cleaned = super().clean()
        if self.errors:
            return cleaned
        try:
            with transaction.atomic():
                result = self.apply(cleaned)
        except PlacementError as exc:
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


class ServiceAdmin(admin.ModelAdmin):
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
        except PlacementError as exc:
            self.message_user(request, exc.detail, messages.ERROR)
            from django.http import HttpResponseRedirect

            return HttpResponseRedirect(request.path)

    def response_action(self, request, queryset):
        try:
            with transaction.atomic():
                return super().response_action(request, queryset)
        except PlacementError as exc:
            self.message_user(request, exc.detail, messages.ERROR)
            from django.http import HttpResponseRedirect

            return HttpResponseRedirect(request.get_full_path())


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


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


def require_custom_name(name):
    if len(name) > 255 or not CUSTOM_NAME_RE.fullmatch(name):
        raise BadRequest(
            f"Name {name!r} must start with CUSTOM_ and use only A-Z, 0-9 and _ "
            "(at most 255 characters)."
        )


# --- resource classes -------------------------------------------------------


class ResourceClassForm(ServiceForm):
    class Meta:
        model = ResourceClass
        fields = ["name"]

    def apply(self, cleaned):
        name = cleaned["name"]
        require_custom_name(name)
        if self.instance.pk is None:
            return resource_class_services.resource_class_create(name=name)
        if name == self.instance.name:
            return self.instance
        return resource_class_services.resource_class_rename(name=self.instance.name, new_name=name)


@admin.register(ResourceClass)
class ResourceClassAdmin(CustomOnlyMixin, ServiceAdmin):
    form = ResourceClassForm
    list_display = ["name", "custom", "inventory_count", "created_at"]
    list_filter = [StandardOrCustomFilter]
    search_fields = ["name"]
    ordering = ["id"]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_inventories=Count("inventories"))

    @admin.display(description="inventories", ordering="_inventories")
    def inventory_count(self, obj):
        return obj._inventories

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
            raise BadRequest("A trait cannot be renamed; create a new one instead.")
        trait, created = trait_services.trait_ensure(name=name)
        if self.instance.pk is None and not created:
            raise Conflict(f"Trait {name} already exists.")
        return trait


@admin.register(Trait)
class TraitAdmin(CustomOnlyMixin, ServiceAdmin):
    form = TraitForm
    list_display = ["name", "custom", "provider_count", "created_at"]
    list_filter = [StandardOrCustomFilter]
    search_fields = ["name"]
    ordering = ["id"]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_providers=Count("resource_providers"))

    @admin.display(description="providers", ordering="_providers")
    def provider_count(self, obj):
        return obj._providers

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
        return super().get_queryset(request).select_related("resource_class")

    @admin.display(description="capacity")
    def usable(self, obj):
        return obj.capacity.usable

    @admin.display(description="used")
    def used(self, obj):
        return used_of(obj)


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
        try:
            found.append(str(uuidlib.UUID(item)))
        except ValueError:
            raise ValidationError(f"{item!r} is not a UUID.") from None
    return found


class ResourceProviderForm(ServiceForm):
    traits = forms.ModelMultipleChoiceField(
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
            self.fields["traits"].initial = list(self.instance.traits.all())
            self.fields["aggregate_uuids"].initial = "\n".join(
                str(u) for u in self.instance.aggregates.values_list("uuid", flat=True)
            )
            self.fields["uuid"].disabled = True
            self.fields["parent"].queryset = ResourceProvider.objects.exclude(pk=self.instance.pk)

    def clean_aggregate_uuids(self):
        return split_uuids(self.cleaned_data.get("aggregate_uuids", ""))

    def apply(self, cleaned):
        if self.instance.pk is None:
            provider = provider_create(
                name=cleaned["name"], uuid=cleaned["uuid"], parent=cleaned.get("parent")
            )
        else:
            provider = provider_update(
                uuid=self.instance.uuid,
                name=cleaned["name"],
                parent=cleaned.get("parent"),
                generation=cleaned.get("generation"),
            )
        trait_names = [t.name for t in cleaned.get("traits") or []]
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


def provider_create(*, name, uuid, parent):
    service = optional_service("resource_providers", "resource_provider_create")
    if service is not None:
        return service(name=name, uuid=uuid, parent_uuid=parent.uuid if parent else None)
    with transaction.atomic():
        if ResourceProvider.objects.filter(name=name).exists():
            raise Conflict(f"Conflicting resource provider name: {name} already exists.")
        if ResourceProvider.objects.filter(uuid=uuid).exists():
            raise Conflict(f"Conflicting resource provider uuid: {uuid} already exists.")
        if parent is not None:
            parent = generations.provider_for_update(parent.uuid)
        provider = ResourceProvider.objects.create(
            name=name, uuid=uuid, parent=parent, root=parent.root if parent else None
        )
        if parent is None:
            provider.root = provider
            provider.save(update_fields=["root"])
        return provider


def _subtree_ids(provider):
    ids, frontier = {provider.pk}, [provider.pk]
    while frontier:
        frontier = list(
            ResourceProvider.objects.filter(parent_id__in=frontier).values_list("pk", flat=True)
        )
        ids.update(frontier)
    return ids


def provider_update(*, uuid, name, parent, generation):
    service = optional_service("resource_providers", "resource_provider_update")
    if service is not None:
        return service(uuid=uuid, name=name, parent_uuid=parent.uuid if parent else None)
    with transaction.atomic():
        provider = generations.provider_for_update(uuid)
        if generation is not None:
            generations.check_generation(provider, generation)
        if ResourceProvider.objects.filter(name=name).exclude(pk=provider.pk).exists():
            raise Conflict(f"Conflicting resource provider name: {name} already exists.")
        subtree = _subtree_ids(provider)
        if parent is not None and parent.pk in subtree:
            raise BadRequest("creating loop in the provider tree is not allowed.")
        changed = name != provider.name or (parent and parent.pk) != provider.parent_id
        if not changed:
            return provider
        new_root_id = parent.root_id if parent is not None else provider.pk
        provider.name = name
        provider.parent = parent
        provider.save(update_fields=["name", "parent", "updated_at"])
        if new_root_id != provider.root_id:
            ResourceProvider.objects.filter(pk__in=subtree).update(root_id=new_root_id)
            provider.root_id = new_root_id
        generations.bump_generation(provider)
        return provider


def provider_delete(*, uuid):
    service = optional_service("resource_providers", "resource_provider_delete")
    if service is not None:
        return service(uuid=uuid)
    with transaction.atomic():
        provider = generations.provider_for_update(uuid)
        if provider.children.exists():
            raise Conflict(
                f"Unable to delete parent resource provider {uuid}: It has child resource "
                "providers.",
                code="placement.resource_provider.cannot_delete_parent",
            )
        if provider.allocations.exists():
            raise Conflict(
                f"Unable to delete resource provider {uuid}: Resource provider has allocations.",
                code="placement.resource_provider.inuse",
            )
        ResourceProvider.objects.filter(pk=provider.pk, root_id=provider.pk).update(root=None)
        provider.delete()


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


@admin.register(ResourceProvider)
class ResourceProviderAdmin(ServiceAdmin):
    form = ResourceProviderForm
    list_display = ["name", "uuid", "parent", "root", "generation", "inventory_count"]
    list_select_related = ["parent", "root"]
    list_filter = [IsRootFilter, "traits", "inventories__resource_class"]
    search_fields = ["name", "uuid", "parent__name", "root__name"]
    readonly_fields = ["root", "created_at", "updated_at"]
    fields = [
        "name",
        "uuid",
        "parent",
        "root",
        "generation",
        "traits",
        "aggregate_uuids",
        "created_at",
        "updated_at",
    ]
    raw_id_fields = ["parent"]
    inlines = [InventoryInline, ChildInline]
    ordering = ["id"]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_inventories=Count("inventories"))

    @admin.display(description="inventories", ordering="_inventories")
    def inventory_count(self, obj):
        return obj._inventories

    def delete_via_service(self, obj):
        provider_delete(uuid=obj.uuid)


# --- inventories ----------------------------------------------------------------


def used_of(inventory):
    """Units of the inventory's class allocated on its provider."""
    from allocations.models import Allocation

    return (
        Allocation.objects.filter(
            resource_provider_id=inventory.resource_provider_id,
            resource_class_id=inventory.resource_class_id,
        ).aggregate(total=Sum("used"))["total"]
        or 0
    )


INVENTORY_FIELDS = ["total", "reserved", "min_unit", "max_unit", "step_size", "allocation_ratio"]


def inventory_write(*, provider_uuid, resource_class, fields, generation=None):
    """Create or replace one inventory record; the API's rules, the capacity model's numbers."""
    service = optional_service("inventories", "inventory_set")
    if service is not None:
        return service(
            provider_uuid=provider_uuid,
            resource_class=resource_class.name,
            generation=generation,
            **fields,
        )
    with transaction.atomic():
        provider = generations.provider_for_update(provider_uuid)
        if generation is not None:
            generations.check_generation(provider, generation)
        validate_inventory(provider, resource_class, fields)
        inventory, _ = Inventory.objects.update_or_create(
            resource_provider=provider, resource_class=resource_class, defaults=fields
        )
        generations.bump_generation(provider)
        return inventory


def validate_inventory(provider, resource_class, fields):
    capacity = Inventory(**fields).capacity
    where = f"'{resource_class.name}' on resource provider '{provider.uuid}'"
    if capacity.reserved > capacity.total:
        raise BadRequest(
            f"Unable to update inventory for resource provider {provider.uuid}: Invalid "
            f"inventory for {where}. The reserved value is greater than total."
        )
    if capacity.min_unit > capacity.max_unit:
        raise BadRequest(
            f"Unable to update inventory for resource provider {provider.uuid}: Invalid "
            f"inventory for {where}. The min_unit value is greater than max_unit."
        )
    if capacity.usable < 0:
        raise BadRequest(f"Invalid inventory for {where}: no usable capacity.")


def inventory_remove(*, inventory):
    service = optional_service("inventories", "inventory_delete")
    if service is not None:
        return service(
            provider_uuid=inventory.resource_provider.uuid,
            resource_class=inventory.resource_class.name,
        )
    with transaction.atomic():
        provider = generations.provider_for_update(inventory.resource_provider.uuid)
        if used_of(inventory):
            raise Conflict(
                f"Inventory for {inventory.resource_class.name} on resource provider "
                f"{provider.uuid} in use.",
                code="placement.inventory.inuse",
            )
        Inventory.objects.filter(pk=inventory.pk).delete()
        generations.bump_generation(provider)


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

    def clean(self):
        cleaned = self.cleaned_data
        for name in ["total", "reserved", "min_unit", "max_unit", "step_size"]:
            value = cleaned.get(name)
            low = 0 if name == "reserved" else 1
            if value is not None and not low <= value <= MAX_INT:
                self.add_error(name, f"Must be between {low} and {MAX_INT}.")
        ratio = cleaned.get("allocation_ratio")
        if ratio is not None and not ratio > 0:
            self.add_error("allocation_ratio", "Must be greater than 0.")
        return super().clean()

    def apply(self, cleaned):
        return inventory_write(
            provider_uuid=cleaned["resource_provider"].uuid,
            resource_class=cleaned["resource_class"],
            fields={name: cleaned[name] for name in INVENTORY_FIELDS},
            generation=cleaned.get("generation"),
        )


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
    raw_id_fields = ["resource_provider"]
    ordering = ["resource_provider_id", "resource_class_id"]

    def get_queryset(self, request):
        from django.db.models import IntegerField, OuterRef, Subquery
        from django.db.models.functions import Coalesce

        from allocations.models import Allocation

        used = (
            Allocation.objects.filter(
                resource_provider_id=OuterRef("resource_provider_id"),
                resource_class_id=OuterRef("resource_class_id"),
            )
            .values("resource_provider_id")
            .annotate(total=Sum("used"))
            .values("total")
        )
        return (
            super()
            .get_queryset(request)
            .annotate(_used=Coalesce(Subquery(used, output_field=IntegerField()), 0))
        )

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
        inventory_remove(inventory=obj)


# --- aggregates and the provider links ----------------------------------------


class MemberInline(ReadOnlyInline):
    model = ResourceProviderAggregate
    fields = ["resource_provider"]
    readonly_fields = fields
    verbose_name = "member"
    verbose_name_plural = "members"


@admin.register(Aggregate)
class AggregateAdmin(admin.ModelAdmin):
    """Aggregates exist through their members: edit membership on the provider."""

    list_display = ["uuid", "member_count", "created_at"]
    search_fields = ["uuid"]
    readonly_fields = ["uuid", "created_at"]
    inlines = [MemberInline]

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_members=Count("resource_providers"))

    @admin.display(description="members", ordering="_members")
    def member_count(self, obj):
        return obj._members

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class LinkAdmin(admin.ModelAdmin):
    """Provider-trait and provider-aggregate links: listed here, edited on the provider."""

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


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
