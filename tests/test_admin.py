"""The Django admin: every model renders, and edits obey the API's rules."""

import uuid

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from allocations.models import Allocation, Consumer, ConsumerType, Project, User
from placementsite.models import Heartbeat
from providers.models import (
    Aggregate,
    Inventory,
    ResourceClass,
    ResourceProvider,
    ResourceProviderAggregate,
    ResourceProviderTrait,
    Trait,
)
from tests.factories import make_allocation, make_consumer, make_provider

pytestmark = pytest.mark.django_db

AGG = "11111111-2222-3333-4444-555555555555"


@pytest.fixture
def admin_client(db):
    user = get_user_model().objects.create_superuser("root", "", "pw-root-123")
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def world(db):
    parent = make_provider(
        "compute-1",
        inventories={"VCPU": {"total": 8, "allocation_ratio": 2.0}, "MEMORY_MB": 4096},
        traits=["HW_CPU_X86_AVX2", "CUSTOM_GOLD"],
        aggregates=[AGG],
    )
    child = make_provider("compute-1-numa0", parent=parent, inventories={"DISK_GB": 100})
    consumer = make_consumer(consumer_type="INSTANCE")
    make_allocation(parent, consumer, {"VCPU": 2, "MEMORY_MB": 512})
    Heartbeat.objects.create(name="heartbeat", last_run="2026-01-01T00:00:00Z", runs=3)
    return {"parent": parent, "child": child, "consumer": consumer}


def url_of(model, view, *args):
    meta = model._meta
    return reverse(f"admin:{meta.app_label}_{meta.model_name}_{view}", args=args)


ALL_MODELS = [
    ResourceClass,
    Trait,
    ResourceProvider,
    Inventory,
    Aggregate,
    ResourceProviderTrait,
    ResourceProviderAggregate,
    Project,
    User,
    ConsumerType,
    Consumer,
    Allocation,
    Heartbeat,
]


@pytest.mark.parametrize("model", ALL_MODELS, ids=lambda m: m.__name__)
def test_changelist_renders(admin_client, world, model):
    response = admin_client.get(url_of(model, "changelist"))
    assert response.status_code == 200
    assert response.context["cl"].result_count >= 1


@pytest.mark.parametrize("model", ALL_MODELS, ids=lambda m: m.__name__)
def test_change_page_renders(admin_client, world, model):
    obj = model.objects.order_by("-pk").first()
    response = admin_client.get(url_of(model, "change", obj.pk))
    assert response.status_code == 200


@pytest.mark.parametrize("model", [ResourceClass, Trait, ResourceProvider, Inventory])
def test_add_page_renders(admin_client, world, model):
    assert admin_client.get(url_of(model, "add")).status_code == 200


def test_changelist_search_finds_provider_by_uuid(admin_client, world):
    uuid_ = str(world["child"].uuid)
    response = admin_client.get(url_of(ResourceProvider, "changelist"), {"q": uuid_})
    assert [p.name for p in response.context["cl"].result_list] == ["compute-1-numa0"]


def test_inventory_list_shows_capacity_from_the_capacity_model(admin_client, world):
    response = admin_client.get(url_of(Inventory, "changelist"), {"q": "compute-1"})
    rows = {inv.resource_class.name: inv for inv in response.context["cl"].result_list}
    assert rows["VCPU"].capacity.usable == 16
    assert b'<td class="field-usable">16</td>' in response.content
    assert rows["VCPU"]._used == 2


def test_aggregate_list_counts_members(admin_client, world):
    response = admin_client.get(url_of(Aggregate, "changelist"))
    (aggregate,) = response.context["cl"].result_list
    assert aggregate._member_count == 1


def inventory_post(inventory, **changes):
    data = {
        "resource_provider": inventory.resource_provider_id,
        "resource_class": inventory.resource_class_id,
        "total": inventory.total,
        "reserved": inventory.reserved,
        "min_unit": inventory.min_unit,
        "max_unit": inventory.max_unit,
        "step_size": inventory.step_size,
        "allocation_ratio": inventory.allocation_ratio,
        "generation": inventory.resource_provider.generation,
    }
    data.update(changes)
    return data


def vcpu_of(provider):
    return Inventory.objects.get(resource_provider=provider, resource_class__name="VCPU")


def test_inventory_edit_bumps_provider_generation(admin_client, world):
    inventory = vcpu_of(world["parent"])
    response = admin_client.post(
        url_of(Inventory, "change", inventory.pk), inventory_post(inventory, total=32)
    )
    assert response.status_code == 302
    assert vcpu_of(world["parent"]).total == 32
    assert ResourceProvider.objects.get(pk=world["parent"].pk).generation == 1


def test_inventory_edit_with_reserved_above_total_is_refused(admin_client, world):
    inventory = vcpu_of(world["parent"])
    response = admin_client.post(
        url_of(Inventory, "change", inventory.pk), inventory_post(inventory, reserved=9)
    )
    assert response.status_code == 200
    assert "reserved" in str(response.context["adminform"].form.non_field_errors())
    assert vcpu_of(world["parent"]).reserved == 0
    assert ResourceProvider.objects.get(pk=world["parent"].pk).generation == 0


def test_inventory_edit_with_zero_total_is_refused(admin_client, world):
    inventory = vcpu_of(world["parent"])
    response = admin_client.post(
        url_of(Inventory, "change", inventory.pk), inventory_post(inventory, total=0)
    )
    assert response.status_code == 200
    assert "does not validate" in str(response.context["adminform"].form.non_field_errors())
    assert vcpu_of(world["parent"]).total == 8


def test_inventory_edit_with_stale_generation_is_refused(admin_client, world):
    inventory = vcpu_of(world["parent"])
    data = inventory_post(inventory, total=10)
    ResourceProvider.objects.filter(pk=world["parent"].pk).update(generation=5)
    response = admin_client.post(url_of(Inventory, "change", inventory.pk), data)
    assert response.status_code == 200
    assert "generation" in str(response.context["adminform"].form.non_field_errors())
    assert vcpu_of(world["parent"]).total == 8


def test_inventory_in_use_cannot_be_deleted(admin_client, world):
    inventory = vcpu_of(world["parent"])
    response = admin_client.post(url_of(Inventory, "delete", inventory.pk), {"post": "yes"})
    assert response.status_code == 302
    assert Inventory.objects.filter(pk=inventory.pk).exists()


def test_inventory_is_added_to_a_provider(admin_client, world):
    child = world["child"]
    vcpu = ResourceClass.objects.get(name="VCPU")
    response = admin_client.post(
        url_of(Inventory, "add"),
        {
            "resource_provider": child.pk,
            "resource_class": vcpu.pk,
            "total": 4,
            "reserved": 0,
            "min_unit": 1,
            "max_unit": 4,
            "step_size": 1,
            "allocation_ratio": 1.0,
        },
    )
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert vcpu_of(child).total == 4
    assert ResourceProvider.objects.get(pk=child.pk).generation == 1


def test_unused_inventory_is_deleted_and_generation_bumped(admin_client, world):
    inventory = Inventory.objects.get(resource_provider=world["child"])
    response = admin_client.post(url_of(Inventory, "delete", inventory.pk), {"post": "yes"})
    assert response.status_code == 302
    assert not Inventory.objects.filter(pk=inventory.pk).exists()
    assert ResourceProvider.objects.get(pk=world["child"].pk).generation == 1


def test_standard_resource_class_is_read_only(admin_client, world):
    vcpu = ResourceClass.objects.get(name="VCPU")
    response = admin_client.post(url_of(ResourceClass, "change", vcpu.pk), {"name": "CUSTOM_X"})
    assert response.status_code == 403
    assert ResourceClass.objects.filter(name="VCPU").exists()


def test_standard_trait_cannot_be_deleted(admin_client, world):
    trait = Trait.objects.get(name="HW_CPU_X86_AVX2")
    response = admin_client.post(url_of(Trait, "delete", trait.pk), {"post": "yes"})
    assert response.status_code == 403
    assert Trait.objects.filter(pk=trait.pk).exists()


def test_custom_resource_class_is_created(admin_client, world):
    response = admin_client.post(url_of(ResourceClass, "add"), {"name": "CUSTOM_FPGA"})
    assert response.status_code == 302
    assert ResourceClass.objects.filter(name="CUSTOM_FPGA").exists()


def test_resource_class_without_custom_prefix_is_refused(admin_client, world):
    response = admin_client.post(url_of(ResourceClass, "add"), {"name": "MY_THING"})
    assert response.status_code == 200
    assert response.context["adminform"].form.errors
    assert not ResourceClass.objects.filter(name="MY_THING").exists()


def test_resource_class_in_use_cannot_be_deleted(admin_client, world):
    rc = ResourceClass.objects.create(name="CUSTOM_USED")
    Inventory.objects.create(resource_provider=world["child"], resource_class=rc, total=1)
    response = admin_client.post(url_of(ResourceClass, "delete", rc.pk), {"post": "yes"})
    assert response.status_code in (200, 302)  # protected-objects page or service refusal
    assert ResourceClass.objects.filter(pk=rc.pk).exists()


def test_trait_in_use_cannot_be_deleted(admin_client, world):
    trait = Trait.objects.get(name="CUSTOM_GOLD")
    response = admin_client.post(url_of(Trait, "delete", trait.pk), {"post": "yes"})
    assert response.status_code in (200, 302)  # protected-objects page or service refusal
    assert Trait.objects.filter(pk=trait.pk).exists()


def provider_post(provider, **changes):
    data = {
        "name": provider.name,
        "parent": provider.parent_id or "",
        "generation": provider.generation,
        "provider_traits": list(provider.traits.values_list("pk", flat=True)),
        "aggregate_uuids": "\n".join(
            str(u) for u in provider.aggregates.values_list("uuid", flat=True)
        ),
        "inventories-TOTAL_FORMS": 0,
        "inventories-INITIAL_FORMS": provider.inventories.count(),
        "children-TOTAL_FORMS": 0,
        "children-INITIAL_FORMS": provider.children.count(),
    }
    data.update(changes)
    return data


def test_provider_is_created_as_a_root(admin_client, world):
    new = str(uuid.uuid4())
    response = admin_client.post(
        url_of(ResourceProvider, "add"),
        {
            "name": "compute-2",
            "uuid": new,
            "parent": "",
            "provider_traits": [],
            "aggregate_uuids": "",
            "inventories-TOTAL_FORMS": 0,
            "inventories-INITIAL_FORMS": 0,
            "children-TOTAL_FORMS": 0,
            "children-INITIAL_FORMS": 0,
        },
    )
    assert response.status_code == 302, response.context["adminform"].form.errors
    provider = ResourceProvider.objects.get(uuid=new)
    assert provider.root_id == provider.pk


def test_provider_traits_edit_bumps_generation(admin_client, world):
    child = world["child"]
    silver = Trait.objects.create(name="CUSTOM_SILVER")
    response = admin_client.post(
        url_of(ResourceProvider, "change", child.pk),
        provider_post(child, provider_traits=[silver.pk]),
    )
    assert response.status_code == 302, response.context["adminform"].form.errors
    child.refresh_from_db()
    assert list(child.traits.values_list("name", flat=True)) == ["CUSTOM_SILVER"]
    assert child.generation == 1


def test_provider_aggregates_edit_sets_membership(admin_client, world):
    child = world["child"]
    response = admin_client.post(
        url_of(ResourceProvider, "change", child.pk), provider_post(child, aggregate_uuids=AGG)
    )
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert [str(u) for u in child.aggregates.values_list("uuid", flat=True)] == [AGG]


def test_provider_rename_to_a_taken_name_is_refused(admin_client, world):
    child = world["child"]
    response = admin_client.post(
        url_of(ResourceProvider, "change", child.pk), provider_post(child, name="compute-1")
    )
    assert response.status_code == 200
    assert response.context["adminform"].form.errors
    assert ResourceProvider.objects.get(pk=child.pk).name == "compute-1-numa0"


def test_provider_cannot_become_its_own_descendant(admin_client, world):
    parent, child = world["parent"], world["child"]
    response = admin_client.post(
        url_of(ResourceProvider, "change", parent.pk), provider_post(parent, parent=child.pk)
    )
    assert response.status_code == 200
    assert response.context["adminform"].form.errors
    assert ResourceProvider.objects.get(pk=parent.pk).parent_id is None


def test_provider_with_children_cannot_be_deleted(admin_client, world):
    parent = world["parent"]
    response = admin_client.post(url_of(ResourceProvider, "delete", parent.pk), {"post": "yes"})
    assert response.status_code in (200, 302)  # protected-objects page or service refusal
    assert ResourceProvider.objects.filter(pk=parent.pk).exists()


def test_leaf_provider_without_allocations_is_deleted(admin_client, world):
    child = world["child"]
    response = admin_client.post(url_of(ResourceProvider, "delete", child.pk), {"post": "yes"})
    assert response.status_code == 302
    assert not ResourceProvider.objects.filter(pk=child.pk).exists()


def test_deleting_a_consumer_goes_through_the_allocation_delete_service(admin_client, world):
    # Same result as DELETE /allocations/{consumer}: allocations and consumer
    # gone, provider generations left alone.
    consumer = world["consumer"]
    before = ResourceProvider.objects.get(pk=world["parent"].pk).generation
    response = admin_client.post(url_of(Consumer, "delete", consumer.pk), {"post": "yes"})
    assert response.status_code == 302
    assert not Allocation.objects.filter(consumer_id=consumer.pk).exists()
    assert not Consumer.objects.filter(pk=consumer.pk).exists()
    assert ResourceProvider.objects.get(pk=world["parent"].pk).generation == before


def test_allocations_are_view_only(admin_client, world):
    allocation = Allocation.objects.first()
    response = admin_client.post(url_of(Allocation, "change", allocation.pk), {"used": 1})
    assert response.status_code == 403
    assert Allocation.objects.get(pk=allocation.pk).used == allocation.used


def test_heartbeat_shows_last_run(admin_client, world):
    response = admin_client.get(url_of(Heartbeat, "changelist"))
    assert b"field-last_run" in response.content
