"""The real ``openstack`` CLI (osc-placement): allocations and usages."""

import uuid

import pytest

from tests.factories import make_provider

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]


def by_provider(rows):
    return {row["resource_provider"]: row for row in rows}


def usage_rows(rows):
    return {row["resource_class"]: row["usage"] for row in rows}


@pytest.fixture
def providers():
    first = make_provider("osc-alloc-1", inventories={"VCPU": 8, "MEMORY_MB": 2048})
    second = make_provider("osc-alloc-2", inventories={"VCPU": 4})
    return str(first.uuid), str(second.uuid)


def test_allocation_set_show_unset_delete(osc, providers):
    first, second = providers
    consumer = str(uuid.uuid4())
    rows = osc(
        "resource", "provider", "allocation", "set", consumer,
        "--allocation", f"rp={first},VCPU=2,MEMORY_MB=512",
        "--allocation", f"rp={second},VCPU=1",
        "--project-id", "osc-project", "--user-id", "osc-user",
        "--consumer-type", "INSTANCE",
    )  # fmt: skip
    assert by_provider(rows)[first]["resources"] == {"VCPU": 2, "MEMORY_MB": 512}

    shown = by_provider(osc("resource", "provider", "allocation", "show", consumer))
    assert set(shown) == {first, second}
    assert shown[second]["resources"] == {"VCPU": 1}
    assert shown[first]["project_id"] == "osc-project"
    assert shown[first]["user_id"] == "osc-user"
    assert shown[first]["consumer_type"] == "INSTANCE"

    remaining = osc(
        "resource", "provider", "allocation", "unset", consumer, "--provider", second
    )  # fmt: skip
    assert set(by_provider(remaining)) == {first}
    assert set(by_provider(osc("resource", "provider", "allocation", "show", consumer))) == {first}

    assert osc("resource", "provider", "allocation", "delete", consumer, fmt=None) == ""
    assert osc("resource", "provider", "allocation", "show", consumer) == []


def test_allocation_set_over_capacity_is_refused(osc, providers):
    _first, second = providers
    error = osc.fails(
        "resource", "provider", "allocation", "set", str(uuid.uuid4()),
        "--allocation", f"rp={second},VCPU=5",
        "--project-id", "p", "--user-id", "u", "--consumer-type", "INSTANCE",
    )  # fmt: skip
    assert "would exceed the capacity" in error.stderr


def test_resource_provider_usage_show(osc, providers):
    first, _second = providers
    osc(
        "resource", "provider", "allocation", "set", str(uuid.uuid4()),
        "--allocation", f"rp={first},VCPU=3",
        "--project-id", "p", "--user-id", "u", "--consumer-type", "INSTANCE",
    )  # fmt: skip
    rows = osc("resource", "provider", "usage", "show", first)
    assert usage_rows(rows) == {"VCPU": 3, "MEMORY_MB": 0}


def test_resource_usage_show_for_project_and_user(osc, providers):
    first, second = providers
    for project, user, rp, vcpu in (
        ("usage-p", "usage-u1", first, 2),
        ("usage-p", "usage-u2", second, 1),
        ("other-p", "usage-u1", first, 4),
    ):
        osc(
            "resource", "provider", "allocation", "set", str(uuid.uuid4()),
            "--allocation", f"rp={rp},VCPU={vcpu}",
            "--project-id", project, "--user-id", user, "--consumer-type", "INSTANCE",
        )  # fmt: skip
    project_rows = osc("resource", "usage", "show", "usage-p", version="1.9")
    assert usage_rows(project_rows) == {"VCPU": 3}
    user_rows = osc(
        "resource", "usage", "show", "usage-p", "--user-id", "usage-u1",
        version="1.9",
    )  # fmt: skip
    assert usage_rows(user_rows) == {"VCPU": 2}
