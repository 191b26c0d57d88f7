"""The audit and device assignments: units assigned beyond a consumer's allocation, or a
server short of the units of what it is allocated, are reported by ``placement_audit`` and
brought in step by ``--heal``. On PostgreSQL, driven through HTTP where HTTP can make the
mismatch."""

import io

import pytest
from django.core.management import call_command

from allocations.models import Consumer, DeviceAssignment
from providers.models import DeviceUnit
from tests.providers.devices import PLUGINS, boot, host_report, pf, provider_uuid, report_and_sync
from tests.scheduling.scheduler_helpers import make_flavor

pytestmark = [pytest.mark.django_db, pytest.mark.postgresql]

VFS = ["0000:81:00.1", "0000:81:00.2", "0000:81:00.3"]


@pytest.fixture(autouse=True)
def plugins(settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = PLUGINS


@pytest.fixture
def server(api):
    report_and_sync(api, "d1", host_report([pf(vfs=VFS)]))
    make_flavor(api, "vf.f", vcpus=1, ram=512, disk=1, extra_specs={"resources:SRIOV_NET_VF": "1"})
    return boot(api, "vf.f").json["servers"][0]


def audit(*args):
    out = io.StringIO()
    call_command("placement_audit", *args, stdout=out)
    return out.getvalue()


def devices(api, server):
    return api.get(f"/api/servers/{server['id']}/").json["devices"]


def test_a_consistent_cloud_has_no_device_finding(api, server):
    assert "device_mismatch" not in audit()


def test_a_server_given_a_vf_by_a_placement_api_write_is_short_of_a_unit_and_heal_assigns_it(
    api, server
):
    """A Placement API write (Nova's, say) raises the server's VFs to 2: it is assigned no
    unit for the second (Placement API writes assign nothing); the audit says so and
    ``--heal`` assigns it."""
    device = provider_uuid(api, "d1_pci_0000_81_00_0")
    allocations = api.get(f"/allocations/{server['id']}").json
    body = {
        "allocations": {
            rp: {"resources": dict(a["resources"])} for rp, a in allocations["allocations"].items()
        },
        "project_id": "p1",
        "user_id": "u1",
        "consumer_generation": allocations["consumer_generation"],
        "consumer_type": "INSTANCE",
    }
    body["allocations"][device]["resources"]["SRIOV_NET_VF"] = 2
    assert api.put(f"/allocations/{server['id']}", body).status == 204
    assert len(devices(api, server)) == 1

    found = audit()
    assert (
        f"device_mismatch: {server['id']} 1 SRIOV_NET_VF units assigned on provider {device}"
        in (found)
    )
    assert "2 allocated" in found

    healed = audit("--heal")
    assert f"devices_healed: {server['id']} 0 units freed, 1 assigned" in healed
    assert len(devices(api, server)) == 2
    assert "device_mismatch" not in audit()


def test_units_assigned_beyond_the_allocation_are_reported_and_freed_by_heal(api, server):
    held = devices(api, server)[0]["address"]
    spare = DeviceUnit.objects.exclude(address=held).order_by("address").first()
    # A unit recorded by hand (a restored backup, a manual fix gone wrong).
    DeviceAssignment.objects.create(unit=spare, consumer=Consumer.objects.get(uuid=server["id"]))
    assert len(devices(api, server)) == 2

    found = audit()
    assert f"device_mismatch: {server['id']} 2 SRIOV_NET_VF units assigned" in found
    assert "1 allocated" in found

    healed = audit("--heal")
    assert f"devices_healed: {server['id']} 1 units freed, 0 assigned" in healed
    assert len(devices(api, server)) == 1
    assert "device_mismatch" not in audit()
    assert DeviceAssignment.objects.count() == 1
