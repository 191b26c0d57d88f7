"""The capacity rules as SQL agree with the Python capacity model."""

import itertools

import pytest
from django.db.models import Value

from providers.capacity import Capacity, can_provide_q, usable_expression
from providers.models import Inventory
from tests.factories import make_provider

pytestmark = pytest.mark.django_db

INVENTORIES = [
    {"total": 8},
    {"total": 4, "reserved": 1, "allocation_ratio": 2.5},
    {"total": 3, "allocation_ratio": 1.5},
    {"total": 10, "reserved": 10},
    {"total": 5, "reserved": 7},
    {"total": 100, "min_unit": 5, "max_unit": 50, "step_size": 5},
    {"total": 7, "allocation_ratio": 0.3},
    {"total": 2147483647, "allocation_ratio": 16.0},
    {"total": 1024, "reserved": 512, "allocation_ratio": 1.1},
    {"total": 9, "step_size": 3, "min_unit": 3},
]


@pytest.fixture
def inventories():
    for index, fields in enumerate(INVENTORIES):
        make_provider(f"p{index}", inventories={"VCPU": fields})
    return list(Inventory.objects.order_by("id"))


def test_usable_expression_matches_capacity_usable(inventories):
    from_sql = dict(
        Inventory.objects.annotate(usable=usable_expression()).values_list("id", "usable")
    )
    for inventory in inventories:
        assert from_sql[inventory.id] == inventory.capacity.usable, INVENTORIES


def test_usable_expression_through_a_relation(inventories):
    from providers.models import ResourceProvider

    rows = ResourceProvider.objects.annotate(usable=usable_expression("inventories__"))
    by_provider = {inv.resource_provider_id: inv.capacity.usable for inv in inventories}
    assert {p.id: p.usable for p in rows} == by_provider


@pytest.mark.parametrize(
    "amount, used", list(itertools.product([1, 2, 3, 5, 7, 8, 10, 25, 51], [0, 3]))
)
def test_can_provide_q_matches_capacity_can_provide(inventories, amount, used):
    fitting = set(
        Inventory.objects.filter(can_provide_q(amount, used=Value(used))).values_list(
            "id", flat=True
        )
    )
    expected = {inv.id for inv in inventories if inv.capacity.can_provide(amount, used)}
    assert fitting == expected


def test_can_provide_q_treats_zero_step_size_as_no_constraint_like_capacity(db):
    make_provider("p", inventories={"VCPU": {"total": 8, "step_size": 0}})
    assert Capacity(total=8, step_size=0).can_provide(3)
    assert Inventory.objects.filter(can_provide_q(3)).count() == 1
