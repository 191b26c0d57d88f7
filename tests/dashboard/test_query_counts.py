"""Each page costs a fixed number of queries, whether the cloud has one row or many (no N+1)."""

import uuid

import pytest

from tests.factories import make_allocation, make_consumer, make_provider

pytestmark = pytest.mark.django_db

AGG = uuid.UUID("cccccccc-0000-4000-8000-000000000003")

# Queries per page, including the session and user lookups of the login (2) and the user's and
# their groups' permissions (2).
BUDGET = {
    # Every page also reads the resource classes' units once (1).
    # + usage share by project (3: sums by class and project id, then the names of both),
    # periodic tasks, heartbeats and beat's start (3), cloud history (1)
    "overview": 26,
    # + inventories and usage of whole trees for hosts with children (2); the page's ids in
    # order, then their columns (2); the filter's trait, class and aggregate resolved to ids (3)
    "providers": 18,
    # + the tree's totals (2), the history's samples and changes (2), its pools (1), its host (1),
    # its device units (1)
    "provider": 19,
    "consumers": 10,  # + the consumer types of the filter (1), the hosts of the page (1)
    "consumer": 8,  # + its device units (1)
    "projects": 8,
    "traits": 7,
    "resource_classes": 8,  # three grouped reads: classes, providers per class, usage
    "aggregates": 7,
    # as providers (with its one filter, the aggregate), + the members' totals (2) and sharing
    # count (1)
    "aggregate": 17,
    # the fit report: how many rows could fit, the verdicts, hosts: trees, sharing (+ the
    # largest free of each class asked when no host fits: two here at size 1)
    "try": 14,
    # The try page's candidates (loaded by its script, so no navigation): the names checked (2),
    # the candidates engine (with a limit: + the bound of its window of roots, one window
    # here), the hosts of the candidates shown (1), the units (1)
    "try_candidates": 16,
}


def build(size):
    """``size`` roots, each with a child, inventories, traits, the aggregate and a consumer."""
    first = None
    for i in range(size):
        root = make_provider(
            f"cn{i:03d}",
            inventories={"VCPU": 16, "MEMORY_MB": 8192, "DISK_GB": 100},
            traits=["HW_CPU_X86_AVX2", f"CUSTOM_T{i}"],
            aggregates=[AGG, uuid.uuid4()],
        )
        child = make_provider(f"cn{i:03d}-numa", parent=root, inventories={"PCPU": 8})
        consumer = make_consumer(project=f"project-{i}", user=f"user-{i}", consumer_type="INSTANCE")
        make_allocation(root, consumer, {"VCPU": 2, "MEMORY_MB": 1024})
        make_allocation(child, consumer, {"PCPU": 1})
        other = make_consumer(project=f"project-{i}", user="shared")
        make_allocation(root, other, {"VCPU": 1, "DISK_GB": 10})
        first = first or (root, consumer)
    return first


def urls(root, consumer):
    return {
        "overview": "/dashboard/",
        "providers": "/dashboard/providers/?tree=root&trait=HW_CPU_X86_AVX2&resource_class=VCPU"
        f"&aggregate={AGG}&q=cn",
        "provider": f"/dashboard/providers/{root.uuid}/",
        "consumers": "/dashboard/consumers/",
        "consumer": f"/dashboard/consumers/{consumer.uuid}/",
        "projects": "/dashboard/projects/",
        "traits": "/dashboard/traits/",
        "resource_classes": "/dashboard/resource-classes/",
        "aggregates": "/dashboard/aggregates/",
        "aggregate": f"/dashboard/aggregates/{AGG}/",
        "try": "/dashboard/try/?submit=1&resources=VCPU:2,MEMORY_MB:1024"
        f"&required=HW_CPU_X86_AVX2&forbidden=CUSTOM_T0&member_of={AGG}&g1-resources=PCPU:1",
        "try_candidates": "/dashboard/try/candidates/?submit=1&resources=VCPU:2,MEMORY_MB:1024"
        f"&required=HW_CPU_X86_AVX2&forbidden=CUSTOM_T0&member_of={AGG}&g1-resources=PCPU:1",
    }


@pytest.mark.parametrize("page", sorted(BUDGET))
@pytest.mark.parametrize("size", [1, 20])
def test_page_queries_do_not_grow_with_rows(staff, django_assert_max_num_queries, page, size):
    url = urls(*build(size))[page]
    with django_assert_max_num_queries(BUDGET[page]):
        r = staff.get(url)
    assert r.status_code == 200
    assert b"No provider matches." not in r.content
