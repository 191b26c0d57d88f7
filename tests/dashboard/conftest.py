"""Fixtures of the dashboard tests: logged-in browsers-by-proxy and a small cloud."""

import uuid

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.test import Client

from tests.factories import make_allocation, make_consumer, make_provider

AGG_A = uuid.UUID("aaaaaaaa-0000-4000-8000-000000000001")
AGG_B = uuid.UUID("bbbbbbbb-0000-4000-8000-000000000002")


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Real hashing costs a second a user on this machine; the tests do not test it."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def view_permissions():
    """Every view permission of the apps the dashboard shows."""
    return Permission.objects.filter(
        codename__startswith="view_", content_type__app_label__in=["providers", "allocations"]
    )


@pytest.fixture
def staff_user(db):
    """A staff user who may view everything the dashboard shows (through a group, as an
    operator would set it up)."""
    user = get_user_model().objects.create_user(
        "operator", password="operator-password-1", is_staff=True
    )
    viewers = Group.objects.create(name="dashboard viewers")
    viewers.permissions.set(view_permissions())
    user.groups.add(viewers)
    return user


@pytest.fixture
def staff(staff_user):
    """A Django test client logged in as a staff user."""
    client = Client()
    client.force_login(staff_user)
    return client


@pytest.fixture
def non_staff(db):
    user = get_user_model().objects.create_user("someone", password="someone-password-1")
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def cloud(db):
    """Two compute nodes (one with a NUMA child), an aggregate each, three consumers.

    cn1: VCPU 8 (ratio 2.0 -> 16), MEMORY_MB 4096 (reserved 512), AVX2, in AGG_A
      cn1-numa0: child of cn1 with PCPU 4
    cn2: VCPU 4 (max_unit 2), MEMORY_MB 2048, CUSTOM_MAINT, in AGG_B
    vm1 (project p1): VCPU 4 + MEMORY_MB 2048 on cn1
    vm2 (project p1): VCPU 2 + MEMORY_MB 1024 on cn2
    vm3 (project p2, type INSTANCE): PCPU 2 on cn1-numa0
    """
    cn1 = make_provider(
        "cn1",
        inventories={
            "VCPU": {"total": 8, "allocation_ratio": 2.0},
            "MEMORY_MB": {"total": 4096, "reserved": 512},
        },
        traits=["HW_CPU_X86_AVX2"],
        aggregates=[AGG_A],
    )
    numa = make_provider("cn1-numa0", parent=cn1, inventories={"PCPU": 4})
    cn2 = make_provider(
        "cn2",
        inventories={"VCPU": {"total": 4, "max_unit": 2}, "MEMORY_MB": 2048},
        traits=["CUSTOM_MAINT"],
        aggregates=[AGG_B],
    )
    vm1 = make_consumer(project="p1", user="alice")
    vm2 = make_consumer(project="p1", user="bob")
    vm3 = make_consumer(project="p2", user="carol", consumer_type="INSTANCE")
    make_allocation(cn1, vm1, {"VCPU": 4, "MEMORY_MB": 2048})
    make_allocation(cn2, vm2, {"VCPU": 2, "MEMORY_MB": 1024})
    make_allocation(numa, vm3, {"PCPU": 2})
    return {"cn1": cn1, "numa": numa, "cn2": cn2, "vm1": vm1, "vm2": vm2, "vm3": vm3}
