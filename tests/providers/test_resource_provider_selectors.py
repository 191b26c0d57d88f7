"""The provider filter engine used directly, as the candidates engine and dashboard will."""

import pytest

from providers.models import ResourceClass, ResourceProvider
from providers.selectors.resource_providers import (
    RequestGroup,
    UnknownResourceClass,
    UnknownTrait,
    inventories_that_fit,
    providers_matching,
    resolve,
    unmet_conditions,
)
from tests.conftest import new_uuid
from tests.factories import make_allocation, make_consumer, make_provider

pytestmark = pytest.mark.django_db


def test_group_with_nothing_matches_every_provider():
    make_provider("a")
    make_provider("b")
    assert [p.name for p in providers_matching(RequestGroup())] == ["a", "b"]


def test_matching_annotates_tree_uuids():
    root = make_provider("root")
    make_provider("child", parent=root)
    child = providers_matching(RequestGroup(), name="child").get()
    assert child.parent_provider_uuid == root.uuid
    assert child.root_provider_uuid == root.uuid


def test_resolve_reports_every_unknown_class():
    with pytest.raises(UnknownResourceClass) as exc:
        resolve(RequestGroup(resources={"CUSTOM_B": 1, "CUSTOM_A": 1, "VCPU": 1}))
    assert exc.value.names == ["CUSTOM_A", "CUSTOM_B"]


def test_resolve_reports_unknown_traits_required_or_forbidden():
    with pytest.raises(UnknownTrait) as exc:
        resolve(
            RequestGroup(
                required_traits=(frozenset({"CUSTOM_X", "HW_CPU_X86_AVX"}),),
                forbidden_traits=frozenset({"CUSTOM_Y"}),
            )
        )
    assert str(exc.value) == "No such trait(s): CUSTOM_X, CUSTOM_Y."


def test_inventories_that_fit_annotates_used_and_usable():
    p = make_provider("p", inventories={"VCPU": {"total": 8, "allocation_ratio": 2.0}})
    make_allocation(p, make_consumer(), {"VCPU": 5})
    vcpu = ResourceClass.objects.get(name="VCPU")
    row = inventories_that_fit(vcpu.id, 11).get()
    assert (row.used, row.usable) == (5, 16)
    assert not inventories_that_fit(vcpu.id, 12).exists()


def test_unmet_conditions_says_why_each_provider_does_not_match():
    agg = new_uuid()
    make_provider("fits", inventories={"VCPU": 8}, traits=["HW_CPU_X86_AVX"], aggregates=[agg])
    make_provider("small", inventories={"VCPU": 2}, traits=["HW_CPU_X86_AVX"], aggregates=[agg])
    make_provider("plain", inventories={"VCPU": 8})
    group = RequestGroup(
        resources={"VCPU": 4},
        required_traits=(frozenset({"HW_CPU_X86_AVX"}),),
        member_of=(frozenset({agg}),),
    )
    reasons = unmet_conditions(group, ResourceProvider.objects.all())
    by_name = {p.name: reasons[p.id] for p in ResourceProvider.objects.all()}
    assert by_name["fits"] == []
    assert by_name["small"] == ["no room for 4 VCPU"]
    assert by_name["plain"] == [
        "lacks trait HW_CPU_X86_AVX",
        f"not a member of any aggregate of {agg}",
    ]


def test_unmet_conditions_agrees_with_providers_matching():
    make_provider("a", inventories={"VCPU": 8}, traits=["HW_CPU_X86_SSE"])
    make_provider("b", inventories={"VCPU": 1})
    make_provider("c", traits=["HW_CPU_X86_AVX"])
    group = RequestGroup(resources={"VCPU": 2}, forbidden_traits=frozenset({"HW_CPU_X86_AVX"}))
    reasons = unmet_conditions(group, ResourceProvider.objects.all())
    assert {pk for pk, why in reasons.items() if not why} == {
        p.id for p in providers_matching(group)
    }
