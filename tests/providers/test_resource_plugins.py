"""Resource plugins: chosen by name, loaded from entry points or dotted paths, contained."""

import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from providers.apps import ProvidersConfig
from providers.plugins import InventorySpec, available_plugins
from tests.providers.hosts import report, sync, tree

ROOT = Path(__file__).resolve().parents[2]

PLUGIN_MODULE = '''
from providers.plugins import InventorySpec, ResourcePlugin


class LicensePlugin(ResourcePlugin):
    """Software licence seats: a resource the core has never heard of."""

    resource_classes = ("CUSTOM_LICENSE_SEAT",)
    class_metadata = {"CUSTOM_LICENSE_SEAT": ("other", "seat", "A licence seat")}

    def contribute(self, report, tree):
        seats = int(report.stats.get("license_seats", 0))
        if seats:
            tree.root.inventories["CUSTOM_LICENSE_SEAT"] = InventorySpec(seats)
            tree.root.traits.add("CUSTOM_LICENSED")
'''


@pytest.fixture
def plugin_package(tmp_path, monkeypatch):
    """An installed distribution (as pip leaves one) registering ``licenses`` as an entry point."""
    (tmp_path / "acme_licenses.py").write_text(PLUGIN_MODULE)
    dist = tmp_path / "acme_licenses-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-licenses\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[placement.resource_plugins]\nlicenses = acme_licenses:LicensePlugin\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


@pytest.mark.django_db
def test_a_plugin_from_an_entry_point_adds_a_resource_without_core_changes(
    api, settings, plugin_package
):
    assert "licenses" in available_plugins()
    settings.PLACEMENT_RESOURCE_PLUGINS = ["vcpu", "licenses"]
    api.put("/api/compute-nodes/host-1/", report(stats={"license_seats": 5}))
    sync()

    root = tree(api, "host-1")["host-1"]
    assert root["inventories"]["CUSTOM_LICENSE_SEAT"]["total"] == 5
    assert root["traits"] == ["CUSTOM_LICENSED"]
    seat = api.get("/api/resource-classes/CUSTOM_LICENSE_SEAT/").json
    assert (seat["unit"], seat["type"]) == ("seat", "other")


def test_unknown_plugin_name_stops_startup_listing_the_available_ones(settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = ["vcpu", "warp_drive"]
    config = ProvidersConfig("providers", sys.modules["providers"])
    with pytest.raises(ImproperlyConfigured) as raised:
        config.ready()
    message = str(raised.value)
    assert "warp_drive" in message
    for name in ("compute_units", "disk", "memory", "numa", "pci", "vcpu"):
        assert name in message


def test_unknown_plugin_name_stops_manage_py():
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env={
            "PATH": "/usr/bin:/bin",
            "PLACEMENT_RESOURCE_PLUGINS": "vcpu,nope",
            "DATABASE_URL": "sqlite:///:memory:",
        },
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "Unknown resource plugin 'nope'" in result.stderr
    assert "available: compute_units, disk" in result.stderr


def test_dotted_path_that_is_not_a_plugin_is_refused(settings):
    from providers.plugins import PluginLoadError, load_plugins

    with pytest.raises(PluginLoadError, match="not a ResourcePlugin"):
        load_plugins(["tests.providers.hosts:report"])
    with pytest.raises(PluginLoadError, match="cannot be loaded"):
        load_plugins(["no_such_module.Plugin"])


def test_inventory_spec_capacity_is_the_shared_capacity_model():
    capacity = InventorySpec(total=10, reserved=2, allocation_ratio=1.5).capacity()
    assert capacity.usable == 12
    assert capacity.max_unit == 10
