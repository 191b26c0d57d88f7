"""Usage per provider and class: every form of the one rule gives the same numbers.

The selector (allocations.selectors.usage) has a correlated form, a joined form and a
bulk form; scheduling.queries keeps a raw-SQL form for speed. Each is checked against the
bulk form on the same data: several consumers, several classes, a provider with an
inventory but no allocations, and allocations on a class without inventory rows read.
"""

import pytest

from allocations.selectors.usage import (
    usage_by_class,
    usage_by_provider_and_class,
    usage_joined_rows,
    usage_subquery,
)
from providers import usage as providers_usage
from providers.models import Inventory, ResourceClass
from scheduling import queries
from tests.factories import make_allocation, make_consumer, make_provider

pytestmark = pytest.mark.django_db


@pytest.fixture
def cloud():
    busy = make_provider("busy", inventories={"VCPU": 16, "MEMORY_MB": 4096, "DISK_GB": 100})
    idle = make_provider("idle", inventories={"VCPU": 8, "MEMORY_MB": 1024})
    other = make_provider("other", inventories={"VCPU": 4})
    for amounts in ({"VCPU": 2, "MEMORY_MB": 512}, {"VCPU": 3}, {"MEMORY_MB": 256, "DISK_GB": 10}):
        make_allocation(busy, make_consumer(), amounts)
    make_allocation(other, make_consumer(), {"VCPU": 4})
    return {"busy": busy, "idle": idle, "other": other}


def class_id(name):
    return ResourceClass.objects.get(name=name).id


def test_bulk_form_sums_every_consumer_per_provider_and_class(cloud):
    used = usage_by_provider_and_class()
    assert used == {
        (cloud["busy"].id, class_id("VCPU")): 5,
        (cloud["busy"].id, class_id("MEMORY_MB")): 768,
        (cloud["busy"].id, class_id("DISK_GB")): 10,
        (cloud["other"].id, class_id("VCPU")): 4,
    }


def test_bulk_form_narrows_to_providers_and_classes(cloud):
    used = usage_by_provider_and_class(
        provider_ids=[cloud["busy"].id], class_ids=[class_id("MEMORY_MB")]
    )
    assert used == {(cloud["busy"].id, class_id("MEMORY_MB")): 768}


def test_usage_by_class_sums_over_providers(cloud):
    assert usage_by_class() == {
        class_id("VCPU"): 9,
        class_id("MEMORY_MB"): 768,
        class_id("DISK_GB"): 10,
    }


def per_inventory(rows):
    return {(rp, rc): used for rp, rc, used in rows}


def expected(cloud):
    bulk = usage_by_provider_and_class()
    return {
        (rp, rc): bulk.get((rp, rc), 0)
        for rp, rc in Inventory.objects.values_list("resource_provider_id", "resource_class_id")
    }


def test_subquery_form_agrees_with_bulk_form(cloud):
    rows = Inventory.objects.annotate(used=usage_subquery()).values_list(
        "resource_provider_id", "resource_class_id", "used"
    )
    assert per_inventory(rows) == expected(cloud)


def test_joined_form_agrees_with_bulk_form(cloud):
    rows = usage_joined_rows(inventories=Inventory.objects.all()).values_list(
        "resource_provider_id", "resource_class_id", "used"
    )
    assert per_inventory(rows) == expected(cloud)


def test_providers_read_the_same_selector_through_providers_usage(cloud):
    rows = Inventory.objects.annotate(used=providers_usage.usage_subquery()).values_list(
        "resource_provider_id", "resource_class_id", "used"
    )
    assert per_inventory(rows) == expected(cloud)
    assert providers_usage.usage_by_provider_and_class() == usage_by_provider_and_class()


def test_raw_sql_form_of_the_candidates_engine_agrees_with_bulk_form(cloud):
    names = dict(ResourceClass.objects.values_list("name", "id"))
    provider_ids = [p.id for p in cloud.values()]
    rows = queries.inventories_with_usage(provider_ids)
    from_sql = {(rp, names[name]): used for rp, name, *_fields, used in rows}
    assert from_sql == expected(cloud)


def test_every_form_answers_integers(cloud):
    # The usage rows are bigints, which PostgreSQL sums into numerics (Decimals in Python).
    busy = cloud["busy"]
    vcpu = class_id("VCPU")
    assert type(usage_by_class()[vcpu]) is int
    assert type(usage_by_provider_and_class()[(busy.id, vcpu)]) is int
    joined = usage_joined_rows(inventories=Inventory.objects.filter(resource_provider=busy))
    assert {type(used) for used in joined.values_list("used", flat=True)} == {int}
