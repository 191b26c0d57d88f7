"""Names to ids: the one resolver of classes and traits every edge uses."""

import pytest

from providers.request_groups import (
    RequestGroup,
    UnknownResourceClass,
    UnknownTrait,
    resolve,
    resolve_groups,
    resolve_names,
)

pytestmark = pytest.mark.django_db


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


def test_resolve_groups_keeps_each_groups_own_names(django_assert_num_queries):
    groups = {
        "": RequestGroup(resources={"VCPU": 1}, required_traits=(frozenset({"HW_CPU_X86_AVX"}),)),
        "1": RequestGroup(
            resources={"MEMORY_MB": 64}, forbidden_traits=frozenset({"HW_CPU_X86_SSE"})
        ),
    }
    with django_assert_num_queries(2):
        resolved = resolve_groups(groups)
    assert list(resolved[""].class_names.values()) == ["VCPU"]
    assert list(resolved[""].trait_names.values()) == ["HW_CPU_X86_AVX"]
    assert list(resolved["1"].class_names.values()) == ["MEMORY_MB"]
    assert list(resolved["1"].trait_names.values()) == ["HW_CPU_X86_SSE"]


def test_resolve_names_looks_up_extra_traits_too():
    names = resolve_names([RequestGroup(resources={"VCPU": 1})], traits={"HW_CPU_X86_AVX"})
    assert set(names.trait_ids) == {"HW_CPU_X86_AVX"}
    with pytest.raises(UnknownTrait):
        resolve_names([RequestGroup()], traits={"CUSTOM_NOPE"})
