"""The one seam between providers and allocations (providers/allocations_port.py): installed
by the allocations app, complete, and what it answers and writes."""

import ast
import inspect
import uuid
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from allocations import port as implementation
from placementsite.core.exceptions import ConcurrentUpdate
from providers import allocations_port
from providers.allocations_port import AllocationsPort, ConsumerHoldings, port
from providers.capacity import Capacity
from providers.services.inventories import ProviderInventories
from scheduling.services.claims import ClaimFailed, allocation_claim
from tests.factories import make_allocation, make_consumer, make_provider

ROOT = Path(__file__).resolve().parents[2]


def _members(protocol):
    return {
        name
        for name, value in vars(protocol).items()
        if callable(value) and not name.startswith("_")
    }


def test_the_allocations_app_installs_an_implementation_of_every_member():
    assert port() is implementation
    for name in _members(AllocationsPort):
        offered = getattr(implementation, name, None)
        assert callable(offered), name
        declared = inspect.signature(getattr(AllocationsPort, name))
        expected = [p for p in declared.parameters if p != "self"]
        assert list(inspect.signature(offered).parameters) == expected, name


def test_without_the_allocations_app_providers_say_so(monkeypatch):
    monkeypatch.setattr(allocations_port, "_installed", None)
    with pytest.raises(ImproperlyConfigured, match="allocations app"):
        port()


@pytest.mark.django_db
def test_consumers_holding_answers_all_a_consumer_holds_with_its_generation():
    host = make_provider("host", inventories={"VCPU": 8, "MEMORY_MB": 4096})
    shared = make_provider("shared", inventories={"DISK_GB": 100})
    elsewhere = make_provider("elsewhere", inventories={"VCPU": 8})
    server = make_consumer()
    make_allocation(host, server, {"VCPU": 2, "MEMORY_MB": 512})
    make_allocation(shared, server, {"DISK_GB": 10})
    make_allocation(elsewhere, make_consumer(), {"VCPU": 1})

    [held] = port().consumers_holding(provider_ids=[host.id])

    assert held.consumer_uuid == str(server.uuid)
    assert held.generation == server.generation
    assert held.allocations == {
        str(host.uuid): {"VCPU": 2, "MEMORY_MB": 512},
        str(shared.uuid): {"DISK_GB": 10},
    }


@pytest.mark.django_db
def test_holdings_move_checks_each_consumers_generation_and_writes_nothing_when_stale():
    old = make_provider("old", inventories={"VCPU": 8})
    new = make_provider("new")
    server = make_consumer()
    make_allocation(old, server, {"VCPU": 2})
    [held] = port().consumers_holding(provider_ids=[old.id])
    stale = held._replace(generation=held.generation + 1, allocations={str(new.uuid): {"VCPU": 2}})
    inventories = {str(new.uuid): ProviderInventories(new.generation, {"VCPU": Capacity(8)})}

    with pytest.raises(ConcurrentUpdate):
        port().holdings_move(inventories=inventories, consumers=[stale])
    assert not new.inventories.exists()

    moved = held._replace(allocations={str(new.uuid): {"VCPU": 2}})
    port().holdings_move(inventories=inventories, consumers=[moved])
    [after] = port().consumers_holding(provider_ids=[new.id])
    assert after.allocations == {str(new.uuid): {"VCPU": 2}}
    assert isinstance(after, ConsumerHoldings)


@pytest.mark.django_db
def test_a_claim_on_a_provider_a_sync_deleted_is_a_failed_claim_not_a_bad_request():
    with pytest.raises(ClaimFailed, match="does not exist"):
        allocation_claim(
            consumer_uuid=uuid.uuid4(),
            allocations={str(uuid.uuid4()): {"VCPU": 1}},
            project_id="p",
            user_id="u",
        )


@pytest.mark.parametrize("module", ["providers/tree_diff.py", "providers/allocation_moves.py"])
def test_the_diff_is_pure_it_imports_no_database(module):
    imported = set()
    for node in ast.walk(ast.parse((ROOT / module).read_text())):
        if isinstance(node, ast.ImportFrom):
            imported.add("." * node.level + (node.module or ""))
        elif isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
    assert not [m for m in imported if m.startswith("django") or m.endswith("models")], imported
