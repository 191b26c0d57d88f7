"""Dashboard: the Hosts page and the history charts (provider page, overview)."""

from dataclasses import replace
from datetime import timedelta

import pytest
from django.utils import timezone

from allocations.tasks import sample_usage
from providers.models import ComputeNode, InventoryChange, UsageSample
from providers.services.compute_nodes import compute_node_disable, compute_node_report
from providers.services.host_sync import compute_nodes_sync
from providers.services.inventories import inventory_update
from tests.factories import make_allocation, make_consumer
from tests.providers.hosts import report

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def plugins(settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = ["vcpu", "memory", "disk"]
    settings.PLACEMENT_HOST_STALE_SECONDS = 600


def _host(name, **kw):
    compute_node_report(hostname=name, report=report(**kw))


def test_hosts_page_shows_synced_stale_disabled_and_errors(staff):
    _host("good")
    _host("quiet")
    _host("off")
    compute_nodes_sync()
    _host("new-one")  # reported, not synced yet
    ComputeNode.objects.filter(hostname="quiet").update(
        reported_at=timezone.now() - timedelta(minutes=30)
    )
    ComputeNode.objects.filter(hostname="off").update(enabled=False)
    ComputeNode.objects.filter(hostname="good").update(
        plugin_errors={"pci": "ValueError: bad bus"}, sync_status="partial"
    )

    page = staff.get("/dashboard/hosts/")
    assert page.status_code == 200
    html = page.content.decode()
    row = {
        name: html.split(f'data-host="{name}"')[1].split("</tr>")[0]
        for name in ("good", "quiet", "off", "new-one")
    }
    assert "plugin pci: ValueError: bad bus" in row["good"]
    assert "stale" in row["quiet"]
    assert "disabled" in row["off"]
    assert "report not synced yet" in row["new-one"]
    assert "/dashboard/providers/" in row["good"]

    stale = staff.get("/dashboard/hosts/?state=stale").content.decode()
    assert 'data-host="quiet"' in stale and 'data-host="good"' not in stale


def test_hosts_page_flags_a_host_whose_usage_exceeds_a_lowered_inventory(staff, settings):
    settings.PLACEMENT_ALLOCATION_RATIOS = {"VCPU": 1.0}
    _host("shrinking", vcpus=4)
    compute_nodes_sync()
    node = ComputeNode.objects.get()
    make_allocation(node.provider, make_consumer(), {"VCPU": 4})
    # An operator lowers the inventory below its usage (Placement allows it).
    node.provider.refresh_from_db()
    vcpu = node.provider.inventories.get(resource_class__name="VCPU")
    inventory_update(
        provider_uuid=str(node.provider.uuid),
        resource_class="VCPU",
        generation=node.provider.generation,
        inventory=replace(vcpu.capacity, total=2, max_unit=2),
        allow_reserved_equal_total=True,
    )

    html = staff.get("/dashboard/hosts/").content.decode()
    assert "over capacity: VCPU: 4 used of 2" in html


def test_hosts_page_shows_a_blocked_host_with_its_reason_and_a_disabled_one_with_why(
    staff, settings
):
    settings.PLACEMENT_ALLOCATION_RATIOS = {"VCPU": 1.0}
    _host("shrinking", vcpus=4)
    compute_nodes_sync()
    node = ComputeNode.objects.get()
    make_allocation(node.provider, make_consumer(), {"VCPU": 4})
    _host("shrinking", vcpus=2)
    compute_nodes_sync()
    compute_node_disable(hostname="shrinking", reason="memory errors on DIMM 3")

    html = staff.get("/dashboard/hosts/").content.decode()
    row = html.split('data-host="shrinking"')[1].split("</tr>")[0]
    assert "blocked" in row
    assert "shrinking: VCPU 4 allocated, more than the 2 the new report leaves there" in row
    assert "memory errors on DIMM 3" in row
    errors = staff.get("/dashboard/hosts/?state=errors").content.decode()
    assert 'data-host="shrinking"' in errors


def test_provider_page_draws_the_hosts_history(staff):
    _host("charted", vcpus=8)
    compute_nodes_sync()
    node = ComputeNode.objects.get()
    make_allocation(node.provider, make_consumer(), {"VCPU": 3})
    sample_usage.apply()
    UsageSample.objects.update(sampled_at=timezone.now() - timedelta(hours=1))
    sample_usage.apply()
    _host("charted", vcpus=12)
    compute_nodes_sync()

    html = staff.get(f"/dashboard/providers/{node.provider.uuid}/").content.decode()
    assert 'data-class="VCPU"' in html
    assert "<polyline" in html
    vcpu = html.split('data-class="VCPU"')[1].split("</figure>")[0]
    # The label's peak is usage's (3 VCPU), not capacity's (8 x 16).
    assert "used 3 of 128 (usage peak 3; 2 samples)" in vcpu
    assert 'id="inventory-changes"' in html
    assert "8 → 12" in html
    assert InventoryChange.objects.filter(new_total=12).exists()


def test_overview_draws_the_cloud_wide_history(staff):
    _host("a", vcpus=8)
    _host("b", vcpus=8)
    compute_nodes_sync()
    sample_usage.apply()

    html = staff.get("/dashboard/").content.decode()
    assert "Cloud capacity and usage over time" in html
    chart = html.split('data-class="MEMORY_MB"')[1].split("</figure>")[0]
    # Two hosts of 65536 MB less 512 reserved, ratio 1.5, in the class's unit (MB as GiB).
    assert "used 0 MiB of 190 GiB (one sample so far)" in chart


def test_a_single_sample_is_drawn_as_dots_not_an_empty_box(staff):
    _host("lonely", vcpus=8)
    compute_nodes_sync()
    node = ComputeNode.objects.get()
    make_allocation(node.provider, make_consumer(), {"VCPU": 4})
    sample_usage.apply()
    html = staff.get(f"/dashboard/providers/{node.provider.uuid}/").content.decode()
    chart = html.split('data-class="VCPU"')[1].split("</figure>")[0]
    assert "<polyline" not in chart  # a one-point line draws nothing
    assert 'class="dot-capacity"' in chart and 'class="dot-used"' in chart
    # Both dots in the middle; usage at 4 of 128 near the bottom, capacity at the top.
    assert 'cx="280.0" cy="0.0"' in chart and 'cx="280.0" cy="116.2"' in chart
    assert "a line needs a second sample" in chart


def test_hosts_page_needs_the_view_permissions(non_staff):
    assert non_staff.get("/dashboard/hosts/").status_code == 403
