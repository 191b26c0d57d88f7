"""migrate seeds every standard resource class and trait, and adds new ones after an upgrade."""

import os_resource_classes
import os_traits
import pytest
from django.core.management import call_command

from providers.models import ResourceClass, Trait

pytestmark = pytest.mark.django_db


def test_every_standard_name_is_in_the_database():
    assert set(os_resource_classes.STANDARDS) <= set(
        ResourceClass.objects.values_list("name", flat=True)
    )
    assert set(os_traits.get_traits()) <= set(Trait.objects.values_list("name", flat=True))


def test_standard_classes_keep_the_packages_order():
    first = list(ResourceClass.objects.order_by("id").values_list("name", flat=True)[:3])
    assert first == list(os_resource_classes.STANDARDS[:3])


def test_a_later_migrate_adds_names_of_an_upgraded_package(monkeypatch):
    monkeypatch.setattr(
        os_resource_classes, "STANDARDS", [*os_resource_classes.STANDARDS, "NEW_STANDARD_RC"]
    )
    real = os_traits.get_traits
    monkeypatch.setattr(os_traits, "get_traits", lambda *a, **k: [*real(*a, **k), "HW_NEW_ONE"])
    ResourceClass.objects.create(name="CUSTOM_KEEP")

    call_command("migrate", verbosity=0, interactive=False)

    assert ResourceClass.objects.filter(name="NEW_STANDARD_RC").exists()
    assert Trait.objects.filter(name="HW_NEW_ONE").exists()
    assert ResourceClass.objects.filter(name="CUSTOM_KEEP").exists()  # nothing removed
    assert ResourceClass.objects.filter(name="NEW_STANDARD_RC").count() == 1
