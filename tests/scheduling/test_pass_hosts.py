"""The scheduler's host states: what filters and weighers read of a host, read for every
host of a pass at once and only when first asked for."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from providers.models import ResourceProvider
from providers.request_groups import CandidateRequest, RequestGroup
from scheduling.candidates import find_candidates
from scheduling.selectors.pass_hosts import hosts_of_pass
from tests.factories import make_allocation, make_consumer, make_provider

pytestmark = pytest.mark.django_db

AGGREGATE = "11111111-1111-4111-8111-111111111111"


def _states(**resources):
    request = CandidateRequest(groups={"": RequestGroup(resources=resources)})
    return {host.name: host for host in hosts_of_pass(found=find_candidates(request))}


@pytest.fixture
def cloud():
    """A flat host, a host whose VCPU and memory are on two NUMA children, and a storage
    pool shared with both."""
    flat = make_provider(
        "flat",
        inventories={"VCPU": 8, "MEMORY_MB": 4096},
        traits=["CUSTOM_GOLD", "HW_CPU_X86_AVX2"],
    )
    numa = make_provider("numa", aggregates=[AGGREGATE])
    cells = [
        make_provider(
            f"numa_cell{i}",
            parent=numa,
            inventories={"VCPU": 4, "MEMORY_MB": {"total": 2048, "allocation_ratio": 1.5}},
            traits=["HW_NUMA_ROOT"],
        )
        for i in range(2)
    ]
    make_provider(
        "pool",
        inventories={"DISK_GB": 1000},
        traits=["MISC_SHARES_VIA_AGGREGATE"],
        aggregates=[AGGREGATE],
    )
    flat.aggregates.add(*numa.aggregates.all())
    make_allocation(cells[0], make_consumer(), {"VCPU": 3, "MEMORY_MB": 1000})
    return flat, numa, cells


def test_a_host_sums_capacity_and_usage_over_its_tree(cloud):
    hosts = _states(VCPU=1, DISK_GB=10)

    assert set(hosts) == {"flat", "numa"}  # the pool is no host: it is shared with them
    numa = hosts["numa"]
    assert numa.capacity("VCPU") == 8 and numa.used("VCPU") == 3 and numa.free("VCPU") == 5
    assert numa.capacity("MEMORY_MB") == 6144 and numa.free("MEMORY_MB") == 5144
    assert numa.free("DISK_GB") == 0  # on the pool, not in the host's tree
    assert numa.resource_classes == ["MEMORY_MB", "VCPU"]
    assert hosts["flat"].free("VCPU") == 8


def test_a_host_lists_its_providers_inventories_and_traits(cloud):
    flat, numa, cells = cloud
    host = _states(VCPU=1)["numa"]

    assert host.uuid == str(numa.uuid) and host.id == numa.id
    assert host.providers == [
        (str(numa.uuid), None),
        (str(cells[0].uuid), str(numa.uuid)),
        (str(cells[1].uuid), str(numa.uuid)),
    ]
    assert host.inventories[str(numa.uuid)] == {}
    assert host.inventories[str(cells[0].uuid)]["MEMORY_MB"] == {"capacity": 3072, "used": 1000}
    assert host.traits[str(cells[1].uuid)] == ["HW_NUMA_ROOT"]
    # Standard traits first, then custom ones.
    assert _states(VCPU=1)["flat"].traits[str(flat.uuid)] == ["HW_CPU_X86_AVX2", "CUSTOM_GOLD"]
    assert host.aggregates == {AGGREGATE}


def test_candidates_land_on_their_host_with_the_shared_pool(cloud):
    flat, numa, cells = cloud
    pool = str(ResourceProvider.objects.get(name="pool").uuid)

    host = _states(VCPU=2, DISK_GB=10)["numa"]

    # Cell 0 has 1 VCPU left of 4 after the allocation: only cell 1 can take 2.
    assert host.candidates == [
        (
            {str(cells[1].uuid): {"VCPU": 2}, pool: {"DISK_GB": 10}},
            {"": [str(cells[1].uuid), pool]},
        )
    ]


def test_each_fact_is_read_once_for_every_host_and_only_when_asked(cloud):
    for index in range(10):
        make_provider(f"more-{index}", inventories={"VCPU": 8, "MEMORY_MB": 4096})

    with CaptureQueriesContext(connection) as built:
        hosts = list(_states(VCPU=1).values())
    with CaptureQueriesContext(connection) as read:
        for host in hosts:
            host.free("VCPU"), host.inventories, host.traits, host.providers, host.report
    with CaptureQueriesContext(connection) as again:
        for host in hosts:
            host.free("VCPU"), host.inventories, host.traits, host.providers, host.report

    assert len(hosts) == 12
    # Inventories with usage, the tree members, their traits, the reports: one query each.
    assert len(read.captured_queries) == 4
    assert len(again.captured_queries) == 0
    assert len(built.captured_queries) < 12
