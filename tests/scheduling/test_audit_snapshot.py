"""The audit reads in one snapshot: boots and deletes committing between its reads do not
make false findings (orphans, servers without allocations)."""

import threading

import pytest
from django.db import connection

from scheduling.models import LifecycleRecord
from scheduling.services import audit
from tests.conftest import PlacementClient
from tests.scheduling.move_helpers import boot_one, setup_hosts

pytestmark = [pytest.mark.postgresql, pytest.mark.django_db(transaction=True)]


def in_another_connection(work):
    """Run ``work()`` in a thread of its own (its own database connection), committed."""
    errors = []

    def run():
        try:
            work()
        except Exception as exc:  # surfaced below
            errors.append(exc)
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    assert not errors, errors


@pytest.fixture
def cloud():
    api = PlacementClient(version="latest")
    setup_hosts(api, names=("cn1", "cn2", "cn3"))
    return api, boot_one(api, name="steady")


def between_the_audits_reads(monkeypatch, work):
    """``work`` commits right after the audit has read the allocations."""
    read = audit._consumers_allocations

    def read_then_work():
        found = read()
        in_another_connection(work)
        return found

    monkeypatch.setattr(audit, "_consumers_allocations", read_then_work)


def test_a_boot_between_the_audits_reads_is_no_finding(cloud, monkeypatch):
    api, _server = cloud
    between_the_audits_reads(monkeypatch, lambda: boot_one(PlacementClient(version="latest")))
    result = audit.placement_audit()
    assert result.findings == []
    assert not LifecycleRecord.objects.exists()
    assert api.get("/api/servers/").json["count"] == 2


def test_a_delete_between_the_audits_reads_is_no_finding(cloud, monkeypatch):
    _api, server = cloud
    between_the_audits_reads(
        monkeypatch,
        lambda: PlacementClient(version="latest").delete(f"/api/servers/{server['id']}/"),
    )
    assert audit.placement_audit().findings == []


def test_a_move_between_the_audits_reads_is_no_finding(cloud, monkeypatch):
    _api, server = cloud
    between_the_audits_reads(
        monkeypatch,
        lambda: PlacementClient(version="latest").post(f"/api/servers/{server['id']}/migrate/", {}),
    )
    assert audit.placement_audit().findings == []
