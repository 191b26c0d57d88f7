"""The allocation audit on seeded orphans, missing and mismatched allocations."""

import io
import uuid

from django.core.management import call_command

from scheduling.models import LifecycleRecord
from tests.scheduling.move_helpers import boot_one, resources_of, setup_hosts, used


def _audit(*args):
    out = io.StringIO()
    call_command("placement_audit", *args, stdout=out)
    return out.getvalue()


def _orphan(api, host, vcpus=1):
    consumer = str(uuid.uuid4())
    response = api.put(
        f"/allocations/{consumer}",
        {
            "allocations": {host: {"resources": {"VCPU": vcpus}}},
            "project_id": "p",
            "user_id": "u",
            "consumer_generation": None,
            "consumer_type": "INSTANCE",
        },
    )
    assert response.status == 204, response
    return consumer


def test_orphans_are_reported_and_deleted_only_past_the_grace_period(api, settings):
    hosts = setup_hosts(api)
    host = hosts["cn1"]
    orphan = _orphan(api, host, vcpus=3)
    out = _audit()
    assert f"orphan: {orphan}" in out
    assert used(api, host) == 3

    # Written just now: within the grace period, --delete keeps it.
    _audit("--delete")
    assert used(api, host) == 3

    settings.PLACEMENT_AUDIT_ORPHAN_GRACE_SECONDS = 0
    out = _audit("--delete")
    assert f"orphan_deleted: {orphan}" in out
    assert used(api, host) == 0
    (deleted,) = LifecycleRecord.objects.filter(action="orphan_deleted")
    assert deleted.allocations == {host: {"VCPU": 3}}
    assert "orphan" not in _audit()


def test_servers_and_migrations_are_not_orphans(api):
    setup_hosts(api)
    server = boot_one(api)
    assert api.post(f"/api/servers/{server['id']}/migrate/", {}).status == 201
    out = _audit()
    assert out.startswith("0 findings")
    assert not LifecycleRecord.objects.exists()


def test_missing_allocations_are_reported_and_healed(api):
    setup_hosts(api)
    server = boot_one(api)
    before = resources_of(api, server["id"])
    assert api.delete(f"/allocations/{server['id']}").status == 204
    assert f"missing: {server['id']}" in _audit()
    assert resources_of(api, server["id"]) == {}

    out = _audit("--heal")
    assert f"healed: {server['id']}" in out
    assert resources_of(api, server["id"]) == before
    assert LifecycleRecord.objects.filter(action="healed").count() == 1
    assert "missing" not in _audit()


def test_heal_that_no_longer_fits_is_recorded_as_failed(api):
    hosts = setup_hosts(api, names=("cn1",))
    server = boot_one(api)
    assert api.delete(f"/allocations/{server['id']}").status == 204
    _orphan(api, hosts["cn1"], vcpus=8)  # the host is full meanwhile
    out = _audit("--heal")
    assert f"heal_failed: {server['id']}" in out
    assert resources_of(api, server["id"]) == {}


def test_allocations_not_matching_the_flavor_are_reported(api):
    setup_hosts(api)
    server = boot_one(api)
    current = api.get(f"/allocations/{server['id']}").json
    response = api.put(
        f"/allocations/{server['id']}",
        {
            "allocations": {server["host_uuid"]: {"resources": {"VCPU": 1}}},
            "project_id": "p1",
            "user_id": "u1",
            "consumer_generation": current["consumer_generation"],
            "consumer_type": "INSTANCE",
        },
    )
    assert response.status == 204, response
    out = _audit()
    assert f"mismatch: {server['id']}" in out
    record = LifecycleRecord.objects.get(action="mismatch")
    assert record.allocations == {server["host_uuid"]: {"VCPU": 1}}
    assert LifecycleRecord.objects.get(action="audit_run").detail == "1 mismatch"


def test_a_usage_row_out_of_step_is_reported_and_repaired_by_heal(api):
    from allocations.models import ProviderUsage

    setup_hosts(api)
    server = boot_one(api)
    assert _audit().startswith("0 findings")
    row = ProviderUsage.objects.filter(resource_class__name="VCPU", used__gt=0).get()
    host, held = str(row.resource_provider.uuid), row.used
    ProviderUsage.objects.filter(pk=row.pk).update(used=held + 7)  # drift
    assert used(api, host) == held + 7  # readers take the row

    out = _audit()
    assert (
        f"usage_drift: - VCPU on provider {host}: usage row {held + 7}, allocations sum {held}"
        in out
    )
    assert "usage_repaired" not in out
    out = _audit("--heal")
    assert (
        f"usage_repaired: - VCPU on provider {host}: usage row set to {held} (was {held + 7})"
        in out
    )
    assert used(api, host) == held
    (found, *_) = LifecycleRecord.objects.filter(action="usage_drift")
    assert found.consumer_uuid is None and found.allocations == {host: {"VCPU": held}}
    assert _audit().startswith("0 findings")
    assert server["id"]
