"""Which hosts are disabled or stale, as the scheduler asks (providers.selectors.compute_nodes)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from providers.models import ComputeNode, ResourceClass
from providers.selectors.compute_nodes import host_availability_by_root, unavailable_root_ids
from tests.factories import make_provider

pytestmark = pytest.mark.django_db


def _host(name, *, enabled=True, silent_for=timedelta(0), child=False):
    root = make_provider(name)
    provider = make_provider(f"{name}_child", parent=root) if child else root
    ComputeNode.objects.create(
        hostname=name,
        provider=root,
        enabled=enabled,
        reported_at=timezone.now() - silent_for,
    )
    return root, provider


def test_disabled_and_stale_hosts_are_unavailable_and_fresh_enabled_ones_are_not(settings):
    settings.PLACEMENT_HOST_STALE_SECONDS = 600
    fresh, _ = _host("fresh")
    disabled, _ = _host("disabled", enabled=False)
    stale, _ = _host("stale", silent_for=timedelta(minutes=11))
    almost, _ = _host("almost", silent_for=timedelta(minutes=9))
    hand_made = make_provider("no-host-reports-for-me")

    ids = set(unavailable_root_ids())

    assert ids == {disabled.id, stale.id}
    assert fresh.id not in ids and almost.id not in ids and hand_made.id not in ids


def test_stale_limit_comes_from_the_setting(settings):
    root, _ = _host("slow", silent_for=timedelta(minutes=3))
    settings.PLACEMENT_HOST_STALE_SECONDS = 60
    assert set(unavailable_root_ids()) == {root.id}


def test_host_states_answer_for_a_child_through_its_root():
    root, child = _host("h1", child=True, enabled=False)
    states = host_availability_by_root(provider_ids=[root.id])
    assert states == {
        root.id: {
            "hostname": "h1",
            "enabled": False,
            "disabled_reason": "",
            "forced_down": False,
            "stale": False,
        }
    }


def test_forced_down_hosts_are_unavailable_and_down():
    from providers.selectors.compute_nodes import host_is_down

    down, _ = _host("down")
    up, _ = _host("up")
    ComputeNode.objects.filter(hostname="down").update(forced_down=True)
    hand_made = make_provider("hand-made")
    assert set(unavailable_root_ids()) == {down.id}
    assert host_is_down(root_provider_id=down.id)
    assert not host_is_down(root_provider_id=up.id)
    assert not host_is_down(root_provider_id=hand_made.id)


def test_standard_classes_carry_a_unit_type_and_description():
    memory = ResourceClass.objects.get(name="MEMORY_MB")
    vcpu = ResourceClass.objects.get(name="VCPU")
    assert (memory.unit, memory.kind) == ("MB", "memory")
    assert vcpu.unit == "vCPU" and vcpu.description


@pytest.mark.parametrize("due_only", [True, False])
def test_needs_sync_in_python_and_in_sql_agree(due_only):
    """The rule's two forms (the sync asks the Python one of the row it locked)."""
    from itertools import product

    from providers.selectors.compute_nodes import needs_sync, needs_sync_q

    now = timezone.now()
    cases = product(
        ["same", "other"],  # synced hash
        ["sig", "old"],  # synced plugins
        ["ok", "blocked", "failed", "partial", "pending"],
        [None, now - timedelta(seconds=1), now + timedelta(seconds=60)],  # next_sync_at
        [True, False],  # has a provider
    )
    for index, (synced, plugins, status, retry_at, has_provider) in enumerate(cases):
        ComputeNode.objects.create(
            hostname=f"h{index}",
            provider=make_provider(f"p{index}") if has_provider else None,
            report_hash="same",
            synced_hash=synced,
            synced_plugins=plugins,
            sync_status=status,
            next_sync_at=retry_at,
            reported_at=now,
        )
    in_sql = set(
        ComputeNode.objects.filter(
            needs_sync_q(signature="sig", now=now, due_only=due_only)
        ).values_list("hostname", flat=True)
    )
    in_python = {
        node.hostname
        for node in ComputeNode.objects.all()
        if needs_sync(node=node, signature="sig", now=now, due_only=due_only)
    }
    assert in_sql == in_python
    assert 0 < len(in_sql) < ComputeNode.objects.count()
