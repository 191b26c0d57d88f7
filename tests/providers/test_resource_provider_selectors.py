"""The provider filter engine used directly, as the candidates engine and dashboard will."""

import pytest

from providers.models import ResourceClass
from providers.request_groups import RequestGroup
from providers.selectors.resource_providers import inventories_that_fit, providers_matching
from tests.factories import make_allocation, make_consumer, make_provider

pytestmark = pytest.mark.django_db


def test_group_with_nothing_matches_every_provider():
    make_provider("a")
    make_provider("b")
    assert [p.name for p in providers_matching(group=RequestGroup())] == ["a", "b"]


def test_matching_annotates_tree_uuids():
    root = make_provider("root")
    make_provider("child", parent=root)
    child = providers_matching(group=RequestGroup(), name="child").get()
    assert child.parent_provider_uuid == root.uuid
    assert child.root_provider_uuid == root.uuid


def test_inventories_that_fit_annotates_used_and_usable():
    p = make_provider("p", inventories={"VCPU": {"total": 8, "allocation_ratio": 2.0}})
    make_allocation(p, make_consumer(), {"VCPU": 5})
    vcpu = ResourceClass.objects.get(name="VCPU")
    row = inventories_that_fit(resource_class_id=vcpu.id, amount=11).get()
    assert (row.used, row.usable) == (5, 16)
    assert not inventories_that_fit(resource_class_id=vcpu.id, amount=12).exists()
