"""Whole hosts (a root with its children), server-side sorting kept in the URL, human units."""

import re

import pytest

from placementsite.dashboard.units import human
from tests.dashboard.test_pages import row_of, text
from tests.factories import make_allocation, make_consumer, make_provider

pytestmark = pytest.mark.django_db


@pytest.fixture
def nested(db):
    """A host whose only VCPU is on its two NUMA children, a flat host and a sharing pool.

    numa-host: DISK_GB 100 itself; numa0 and numa1: VCPU 8 + MEMORY_MB 16384 each
    flat-host: VCPU 4, MEMORY_MB 8192
    pool: DISK_GB 10000, sharing
    vm1 takes VCPU 6 on numa0 and VCPU 2 on numa1; vm2 takes VCPU 1 on flat-host
    """
    host = make_provider("numa-host", inventories={"DISK_GB": 100})
    numa0 = make_provider(
        "numa-host-numa0", parent=host, inventories={"VCPU": 8, "MEMORY_MB": 16384}
    )
    numa1 = make_provider(
        "numa-host-numa1", parent=host, inventories={"VCPU": 8, "MEMORY_MB": 16384}
    )
    flat = make_provider("flat-host", inventories={"VCPU": 4, "MEMORY_MB": 8192})
    pool = make_provider(
        "pool", inventories={"DISK_GB": 10000}, traits=["MISC_SHARES_VIA_AGGREGATE"]
    )
    vm1, vm2 = make_consumer(project="p1"), make_consumer(project="p2")
    make_allocation(numa0, vm1, {"VCPU": 6})
    make_allocation(numa1, vm1, {"VCPU": 2})
    make_allocation(flat, vm2, {"VCPU": 1})
    return {"host": host, "numa0": numa0, "flat": flat, "pool": pool}


def listed(response):
    html = response.content.decode().split('id="providers"', 1)[1].split("</table>")[0]
    return re.findall(r'class="strong" href="/dashboard/providers/[0-9a-f-]+/">([^<]+)<', html)


def test_root_page_shows_vcpu_of_its_numa_children(nested, staff):
    r = staff.get(f"/dashboard/providers/{nested['host'].uuid}/")
    assert r.status_code == 200
    assert row_of(r, "tree-totals", "VCPU") == "VCPU 2 16 0 16 8 8 50%"
    assert (
        row_of(r, "tree-totals", "MEMORY_MB") == "MEMORY_MB 2 32 GiB 0 MiB 32 GiB 0 MiB 32 GiB 0%"
    )
    assert row_of(r, "tree-totals", "DISK_GB") == "DISK_GB 1 100 GB 0 GB 100 GB 0 GB 100 GB 0%"
    # The tree lists each child with its own usage.
    tree = text(r).split("Tree", 1)[1]
    assert "numa-host-numa0 VCPU 75% 6 / 8" in tree


def test_flat_host_page_has_no_tree_totals(nested, staff):
    r = staff.get(f"/dashboard/providers/{nested['flat'].uuid}/")
    assert 'id="tree-totals"' not in r.content.decode()


def test_host_row_in_the_list_sums_its_tree(nested, staff):
    r = staff.get("/dashboard/providers/", {"tree": "root"})
    row = row_of(r, "providers", "numa-host")
    assert "3 providers" in row and "whole tree" in row
    assert "VCPU 50% 8 / 16" in row
    assert "MEMORY_MB 0% 0 MiB / 32 GiB" in row


def test_sharing_provider_is_marked(nested, staff):
    row = row_of(staff.get("/dashboard/providers/"), "providers", "pool")
    assert "sharing" in row


def test_sort_by_most_free_vcpu_puts_the_emptiest_hosts_first(nested, staff):
    r = staff.get("/dashboard/providers/", {"tree": "root", "sort": "-free:VCPU"})
    # numa-host: 16 - 8 = 8 free (through its children), flat-host: 3; pool has no VCPU: last.
    assert listed(r) == ["numa-host", "flat-host", "pool"]
    r = staff.get("/dashboard/providers/", {"tree": "root", "sort": "free:VCPU"})
    assert listed(r) == ["flat-host", "numa-host", "pool"]


def test_sort_by_utilisation_and_by_name_descending(nested, staff):
    r = staff.get("/dashboard/providers/", {"tree": "root", "sort": "-utilisation:VCPU"})
    assert listed(r) == ["numa-host", "flat-host", "pool"]  # 50% then 25%
    r = staff.get("/dashboard/providers/", {"sort": "-name"})
    assert listed(r) == ["pool", "numa-host-numa1", "numa-host-numa0", "numa-host", "flat-host"]


def test_sort_is_kept_in_the_url_of_headers_and_pages(nested, staff):
    html = staff.get("/dashboard/providers/", {"sort": "name", "tree": "root"}).content.decode()
    # Clicking the sorted header again flips it and keeps the filters.
    assert 'href="?sort=-name&amp;tree=root" aria-sort="ascending"' in html
    assert '<option value="-free:VCPU">most free VCPU first</option>' in html


def test_unknown_sort_falls_back_to_name_order(nested, staff):
    for sort in ("bogus", "-free:NO_SUCH_CLASS", "free", "name:VCPU"):
        r = staff.get("/dashboard/providers/", {"sort": sort, "tree": "root"})
        assert r.status_code == 200
        assert listed(r) == ["flat-host", "numa-host", "pool"]


def test_overview_links_to_the_emptiest_hosts_per_class(nested, staff):
    html = staff.get("/dashboard/").content.decode()
    assert "/dashboard/providers/?tree=root&amp;sort=-free%3AVCPU" in html


@pytest.mark.parametrize(
    "amount, unit, shown",
    [
        (6356992, "MB", "6.06 TiB"),
        (2048, "MB", "2 GiB"),
        (1536, "MB", "1.5 GiB"),
        (512, "MB", "512 MiB"),
        (-512, "MB", "-512 MiB"),
        (150 * 1024, "MB", "150 GiB"),
        (100, "GB", "100 GB"),
        (12500, "GB", "12.5 TB"),
        (10_000_000, "kbit/s", "10 Gbit/s"),
        (12345, "vCPU", "12,345"),
        (7, "", "7"),
    ],
)
def test_amounts_in_human_units(amount, unit, shown):
    assert human(amount, unit) == shown


def test_aggregate_page_sums_its_members_and_marks_sharing_ones(db, staff):
    import uuid

    agg = uuid.UUID("dddddddd-0000-4000-8000-000000000004")
    make_provider("cn-a", inventories={"VCPU": 8}, aggregates=[agg])
    make_provider(
        "shared-disk",
        inventories={"DISK_GB": 2000},
        traits=["MISC_SHARES_VIA_AGGREGATE"],
        aggregates=[agg],
    )
    r = staff.get(f"/dashboard/aggregates/{agg}/")
    assert row_of(r, "member-totals", "VCPU") == "VCPU 1 8 0 8 0%"
    assert row_of(r, "member-totals", "DISK_GB") == "DISK_GB 1 2 TB 0 GB 2 TB 0%"
    assert "1 of them sharing its resources with the others" in text(r)
    assert "sharing" in row_of(r, "providers", "shared-disk")
    # The heading is a title, with the uuid beside it.
    assert f'<h1>Aggregate <span class="mono heading-uuid">{agg}</span></h1>' in (
        r.content.decode()
    )


def test_sort_by_used_or_capacity_takes_a_hosts_tree_and_a_childs_own(nested, staff):
    # numa-host: 8 used of 16 over its children; numa0: 6 of 8; numa1: 2 of 8; flat-host: 1
    # of 4; pool has no VCPU: last whatever the direction.
    r = staff.get("/dashboard/providers/", {"sort": "-used:VCPU"})
    assert listed(r) == ["numa-host", "numa-host-numa0", "numa-host-numa1", "flat-host", "pool"]
    r = staff.get("/dashboard/providers/", {"sort": "capacity:VCPU"})
    assert listed(r) == ["flat-host", "numa-host-numa0", "numa-host-numa1", "numa-host", "pool"]
