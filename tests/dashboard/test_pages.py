"""What each dashboard page shows (Django test client, PostgreSQL)."""

import re

import pytest

from tests.dashboard.conftest import AGG_A, AGG_B
from tests.factories import make_provider

pytestmark = pytest.mark.django_db


def text(response):
    """The page's text with tags removed and whitespace collapsed."""
    body = re.sub(r"<[^>]+>", " ", response.content.decode())
    return re.sub(r"\s+", " ", body)


def row_of(response, table_id, first_cell):
    """The text of the row of table ``table_id`` whose text starts with ``first_cell``."""
    html = response.content.decode()
    table = html.split(f'id="{table_id}"', 1)[1].split("</table>", 1)[0]
    for row in table.split("<tr")[1:]:
        words = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", "<tr" + row)).strip()
        if words.startswith(first_cell):
            return words
    raise AssertionError(f"no row starting {first_cell!r} in #{table_id}")


# --- overview -------------------------------------------------------------------------------


def test_overview_sums_each_class_with_capacity_after_ratio_and_reserved(cloud, staff):
    r = staff.get("/dashboard/")
    # inventories, total, reserved, capacity, used, free, utilisation
    assert row_of(r, "class-usage", "VCPU") == "VCPU 2 12 0 20 6 14 30% emptiest hosts"
    assert row_of(r, "class-usage", "MEMORY_MB") == (
        "MEMORY_MB 2 6 GiB 512 MiB 5.5 GiB 3 GiB 2.5 GiB 55% emptiest hosts"
    )
    assert row_of(r, "class-usage", "PCPU") == "PCPU 1 4 0 4 2 2 50% emptiest hosts"


def test_overview_lists_only_classes_some_provider_has(cloud, staff):
    r = staff.get("/dashboard/")
    assert "DISK_GB" not in r.content.decode().split('id="class-usage"')[1].split("</table>")[0]


def test_overview_counts_providers_consumers_and_projects(cloud, staff):
    page = text(staff.get("/dashboard/"))
    assert "2 hosts 3 providers with their children" in page
    assert "3 consumers 5 allocations" in page
    assert "2 projects 3 users" in page
    assert "2 aggregates" in page


def test_overview_lists_fullest_providers_first(cloud, staff):
    r = staff.get("/dashboard/")
    assert row_of(r, "fullest", "cn1 ") == "cn1 MEMORY_MB 2 GiB / 3.5 GiB 57%"
    html = r.content.decode().split('id="fullest"')[1]
    assert html.index(">cn1<") < html.index(">cn1-numa0<") < html.index(">cn2<")


def test_overview_ranks_the_fullest_by_each_inventorys_peak_as_the_capacity_model_does(db, staff):
    """Usable capacity after reserved and the ratio; an inventory with nothing usable but
    something used is full; a provider's peak is its fullest inventory; ties by age;
    providers using nothing are not listed."""
    from allocations.models import Allocation
    from providers.capacity import usable_units, utilisation
    from providers.models import Inventory
    from tests.factories import make_allocation, make_consumer

    shapes = {  # name: (inventories, usage)
        "ratio": ({"VCPU": {"total": 10, "allocation_ratio": 2.0}}, {"VCPU": 10}),
        "reserved": ({"MEMORY_MB": {"total": 1000, "reserved": 500}}, {"MEMORY_MB": 400}),
        "all-reserved": ({"DISK_GB": {"total": 10, "reserved": 10}}, {"DISK_GB": 1}),
        "two-classes": ({"VCPU": 8, "MEMORY_MB": 100}, {"VCPU": 2, "MEMORY_MB": 70}),
        "tie-first": ({"VCPU": 4}, {"VCPU": 1}),
        "tie-second": ({"VCPU": 8}, {"VCPU": 2}),
        "over": ({"VCPU": {"total": 4, "allocation_ratio": 0.5}}, {"VCPU": 3}),
        "idle": ({"VCPU": 4}, {}),
    }
    for name, (inventories, usage) in shapes.items():
        provider = make_provider(name, inventories=inventories)
        if usage:
            make_allocation(provider, make_consumer(), usage)
    peaks = {}
    for inv in Inventory.objects.select_related("resource_provider"):
        used = sum(
            Allocation.objects.filter(
                resource_provider=inv.resource_provider, resource_class=inv.resource_class
            ).values_list("used", flat=True)
        )
        if used:
            percent = utilisation(used, usable_units(inv.total, inv.reserved, inv.allocation_ratio))
            rp = inv.resource_provider
            peaks[rp.id, rp.name] = max(percent, peaks.get((rp.id, rp.name), 0))
    expected = [name for (_id, name), _p in sorted(peaks.items(), key=lambda i: (-i[1], i[0][0]))]
    assert expected[:3] == ["over", "all-reserved", "reserved"]
    assert expected.index("tie-first") + 1 == expected.index("tie-second")

    html = staff.get("/dashboard/").content.decode().split('id="fullest"', 1)[1]
    html = html.split("</table>", 1)[0]
    shown = re.findall(r'<a class="strong" href="/dashboard/providers/[^"]+/">([^<]+)</a>', html)
    assert shown == expected


def test_overview_shows_each_class_shared_by_project(cloud, staff):
    html = staff.get("/dashboard/").content.decode()
    shares = html.split('id="project-shares"', 1)[1].split("</section>")[0]
    # VCPU: p1 holds 4 + 2 of 6; PCPU: p2 holds all 2.
    assert 'title="p1: 6 (100%)"' in shares
    assert 'title="p2: 2 (100%)"' in shares
    assert 'MEMORY_MB</span> <span class="muted">3 GiB used' in shares


def test_overview_sums_the_smaller_projects_as_other(db, staff):
    from tests.factories import make_allocation, make_consumer

    rp = make_provider("big", inventories={"VCPU": 100})
    for i in range(7):
        make_allocation(rp, make_consumer(project=f"proj{i}"), {"VCPU": 10 + i})
    shares = staff.get("/dashboard/").content.decode().split('id="project-shares"', 1)[1]
    # proj6..proj2 are the top five; proj1 (11) and proj0 (10) are summed.
    assert "other projects: 21 (" in shares.split("</section>")[0]


def test_overview_shows_the_periodic_tasks_health(db, staff):
    from datetime import timedelta

    from django.utils import timezone
    from django_celery_beat.models import IntervalSchedule, PeriodicTask

    from placementsite.tasks import heartbeat_record

    every_minute = IntervalSchedule.objects.create(every=60, period=IntervalSchedule.SECONDS)
    PeriodicTask.objects.update_or_create(
        name="placement heartbeat",
        defaults={"task": "placementsite.tasks.heartbeat", "interval": every_minute},
    )
    PeriodicTask.objects.update_or_create(
        name="stalled sync",
        defaults={
            "task": "providers.tasks.sync",
            "interval": every_minute,
            "last_run_at": timezone.now() - timedelta(hours=1),
        },
    )
    heartbeat_record(name="heartbeat", hostname="worker-1")
    r = staff.get("/dashboard/")
    assert "placement heartbeat 0:01:00" in row_of(r, "tasks", "placement heartbeat")
    assert row_of(r, "tasks", "placement heartbeat").endswith("worker-1 on time")
    assert "late: is the worker or beat running?" in row_of(r, "tasks", "stalled sync")


def test_overview_marks_a_class_over_capacity(db, staff):
    from tests.factories import make_allocation, make_consumer

    rp = make_provider("tight", inventories={"VCPU": 2})
    make_allocation(rp, make_consumer(), {"VCPU": 2})
    rp.inventories.update(total=1)
    r = staff.get("/dashboard/")
    assert row_of(r, "class-usage", "VCPU") == "VCPU 1 1 0 1 2 -1 200% emptiest hosts"
    assert 'class="num over"' in r.content.decode()


def test_overview_of_an_empty_cloud_says_so(db, staff):
    page = text(staff.get("/dashboard/"))
    assert "No provider has any inventory yet." in page
    assert "Nothing is allocated yet." in page


# --- providers list -------------------------------------------------------------------------


def names_listed(response):
    html = response.content.decode()
    table = html.split('<table class="grid sortable"', 1)[1].split("</table>")[0]
    return re.findall(r'class="strong" href="/dashboard/providers/[0-9a-f-]+/">([^<]+)<', table)


def test_providers_are_listed_by_name_with_usage_and_tree(cloud, staff):
    r = staff.get("/dashboard/providers/")
    assert names_listed(r) == ["cn1", "cn1-numa0", "cn2"]
    page = text(r)
    assert "3 providers match." in page
    assert "child of cn1" in page
    assert "VCPU 25% 4 / 16" in page


def test_providers_search_by_name(cloud, staff):
    assert names_listed(staff.get("/dashboard/providers/?q=numa")) == ["cn1-numa0"]


def test_providers_search_by_uuid_prefix(cloud, staff):
    prefix = str(cloud["cn2"].uuid)[:13]
    assert names_listed(staff.get(f"/dashboard/providers/?q={prefix}")) == ["cn2"]


def test_providers_filter_by_trait(cloud, staff):
    assert names_listed(staff.get("/dashboard/providers/?trait=HW_CPU_X86_AVX2")) == ["cn1"]


def test_providers_filter_by_aggregate(cloud, staff):
    assert names_listed(staff.get(f"/dashboard/providers/?aggregate={AGG_B}")) == ["cn2"]


def test_providers_filter_by_resource_class(cloud, staff):
    assert names_listed(staff.get("/dashboard/providers/?resource_class=PCPU")) == ["cn1-numa0"]


def test_providers_filter_roots_or_children(cloud, staff):
    assert names_listed(staff.get("/dashboard/providers/?tree=root")) == ["cn1", "cn2"]
    assert names_listed(staff.get("/dashboard/providers/?tree=child")) == ["cn1-numa0"]


def test_providers_filters_combine(cloud, staff):
    r = staff.get(f"/dashboard/providers/?tree=root&aggregate={AGG_A}&resource_class=VCPU")
    assert names_listed(r) == ["cn1"]


def test_providers_filter_with_bad_aggregate_uuid_shows_the_error_not_a_500(cloud, staff):
    r = staff.get("/dashboard/providers/?aggregate=nope")
    assert r.status_code == 200
    assert "Enter a valid UUID." in text(r)


def test_providers_filter_matching_nothing_says_so(cloud, staff):
    assert "No provider matches." in text(staff.get("/dashboard/providers/?trait=CUSTOM_NONE"))


@pytest.mark.parametrize(
    "query",
    [
        "resource_class=CUSTOM_NONE",
        "aggregate=00000000-0000-4000-8000-00000000dead",
        "trait=CUSTOM_NONE&resource_class=VCPU",
    ],
)
def test_providers_filter_naming_what_does_not_exist_matches_nothing(cloud, staff, query):
    assert "No provider matches." in text(staff.get(f"/dashboard/providers/?{query}"))


def test_providers_filter_with_nul_byte_is_refused_in_the_form_not_a_500(cloud, staff):
    r = staff.get("/dashboard/providers/?q=a%00b")
    assert r.status_code == 200
    assert "Null characters are not allowed." in text(r)


def test_providers_filter_with_non_utf8_bytes_matches_nothing(cloud, staff):
    r = staff.get("/dashboard/providers/?trait=%ff%fe")
    assert r.status_code == 200
    assert names_listed(r) == []


def test_providers_are_paginated_fifty_a_page(db, staff):
    for i in range(51):
        make_provider(f"node-{i:03d}")
    first = staff.get("/dashboard/providers/")
    assert len(names_listed(first)) == 50
    assert "Page 1 of 2" in text(first)
    second = staff.get("/dashboard/providers/?page=2")
    assert names_listed(second) == ["node-050"]


def test_providers_pagination_keeps_the_filters(db, staff):
    for i in range(51):
        make_provider(f"node-{i:03d}")
    html = staff.get("/dashboard/providers/?q=node").content.decode()
    assert "?q=node&amp;page=2" in html


def test_providers_out_of_range_page_shows_the_last_page(cloud, staff):
    assert names_listed(staff.get("/dashboard/providers/?page=99")) == ["cn1", "cn1-numa0", "cn2"]


def test_providers_list_links_each_provider_to_its_admin_change_page(cloud, staff):
    html = staff.get("/dashboard/providers/").content.decode()
    assert f'href="/admin/providers/resourceprovider/{cloud["cn2"].pk}/change/"' in html


# --- one provider ---------------------------------------------------------------------------


def test_provider_page_shows_inventories_with_capacity_used_and_free(cloud, staff):
    r = staff.get(f"/dashboard/providers/{cloud['cn1'].uuid}/")
    # Placement's default max_unit reads "no limit"; memory in binary units.
    assert row_of(r, "inventories", "VCPU") == "VCPU 8 0 2 16 4 12 1 / no limit / 1 25%"
    assert row_of(r, "inventories", "MEMORY_MB") == (
        "MEMORY_MB 4 GiB 512 MiB 1 3.5 GiB 2 GiB 1.5 GiB 1 MiB / no limit / 1 MiB 57%"
    )


def test_provider_page_shows_the_tree_with_links(cloud, staff):
    html = staff.get(f"/dashboard/providers/{cloud['numa'].uuid}/").content.decode()
    tree = html.split('id="tree"')[1].split("</ul>")[0]
    assert f'href="/dashboard/providers/{cloud["cn1"].uuid}/">cn1</a>' in tree
    assert '<strong class="current">cn1-numa0</strong>' in tree
    assert "--depth: 1" in tree
    assert "child of" in text(staff.get(f"/dashboard/providers/{cloud['numa'].uuid}/"))


def test_provider_page_of_a_root_links_its_children(cloud, staff):
    html = staff.get(f"/dashboard/providers/{cloud['cn1'].uuid}/").content.decode()
    tree = html.split('id="tree"')[1].split("</ul>")[0]
    assert f'href="/dashboard/providers/{cloud["numa"].uuid}/">cn1-numa0</a>' in tree


def test_provider_page_shows_deep_trees_in_depth_first_order(db, staff):
    root = make_provider("r")
    a = make_provider("a", parent=root)
    make_provider("a1", parent=a)
    make_provider("b", parent=root)
    html = staff.get(f"/dashboard/providers/{root.uuid}/").content.decode()
    tree = html.split('id="tree"')[1].split("</ul>")[0]
    order = re.findall(r">(r|a|a1|b)<", tree)
    assert order == ["r", "a", "a1", "b"]


def test_provider_page_lists_traits_and_aggregates(cloud, staff):
    page = staff.get(f"/dashboard/providers/{cloud['cn1'].uuid}/").content.decode()
    assert "HW_CPU_X86_AVX2" in page.split('id="traits"')[1].split("</div>")[0]
    assert str(AGG_A) in page.split('id="aggregates"')[1].split("</div>")[0]


def test_provider_page_lists_allocations_by_consumer(cloud, staff):
    r = staff.get(f"/dashboard/providers/{cloud['cn1'].uuid}/")
    row = row_of(r, "allocations", str(cloud["vm1"].uuid))
    assert row == f"{cloud['vm1'].uuid} p1 alice — 1 VCPU 4 MEMORY_MB 2 GiB"


def test_provider_page_links_to_its_admin_change_page(cloud, staff):
    html = staff.get(f"/dashboard/providers/{cloud['cn1'].uuid}/").content.decode()
    assert f'href="/admin/providers/resourceprovider/{cloud["cn1"].pk}/change/"' in html


# --- consumers and projects -----------------------------------------------------------------


def test_consumers_list_shows_project_user_type_host_resources_dates_generation(cloud, staff):
    r = staff.get("/dashboard/consumers/")
    vm3 = cloud["vm3"]
    vm3.refresh_from_db()
    created = f"{vm3.created_at:%Y-%m-%d %H:%M}"
    updated = f"{vm3.updated_at:%Y-%m-%d %H:%M}"
    row = row_of(r, "consumers", str(vm3.uuid))
    # Its PCPU is on cn1-numa0: the host shown is cn1.
    assert row == f"{vm3.uuid} p2 carol INSTANCE cn1 PCPU 2 {created} {updated} 1 Edit"


def test_consumers_are_listed_newest_first(cloud, staff):
    html = staff.get("/dashboard/consumers/").content.decode()
    vm1, vm2, vm3 = (str(cloud[name].uuid) for name in ("vm1", "vm2", "vm3"))
    assert html.index(vm3) < html.index(vm2) < html.index(vm1)


def test_consumer_type_filter_is_a_select_of_existing_types(cloud, staff):
    html = staff.get("/dashboard/consumers/").content.decode()
    assert '<select name="consumer_type"' in html
    assert '<option value="INSTANCE">INSTANCE</option>' in html
    r = staff.get("/dashboard/consumers/?consumer_type=NO_SUCH_TYPE")
    assert r.status_code == 200
    assert "consumer_type: Select a valid choice." in text(r)


def test_consumers_filter_by_project(cloud, staff):
    page = text(staff.get("/dashboard/consumers/?project=p2"))
    assert str(cloud["vm3"].uuid) in page
    assert str(cloud["vm1"].uuid) not in page


def test_consumers_search_by_uuid(cloud, staff):
    page = text(staff.get(f"/dashboard/consumers/?q={str(cloud['vm2'].uuid)[:8]}"))
    assert "1 consumer," in page
    assert str(cloud["vm2"].uuid) in page


def test_consumers_filter_by_consumer_type(cloud, staff):
    assert "1 consumer," in text(staff.get("/dashboard/consumers/?consumer_type=INSTANCE"))


def test_consumer_page_shows_allocations_per_provider(cloud, staff):
    r = staff.get(f"/dashboard/consumers/{cloud['vm1'].uuid}/")
    assert row_of(r, "allocations", "cn1") == f"cn1 {cloud['cn1'].uuid} VCPU 4 MEMORY_MB 2 GiB"
    assert "Project p1 User alice Consumer type — Generation 1" in text(r)
    assert f"/admin/allocations/consumer/{cloud['vm1'].pk}/change/" in r.content.decode()


def test_projects_show_usage_per_class(cloud, staff):
    r = staff.get("/dashboard/projects/")
    html = r.content.decode()
    header = html.split('id="projects"')[1].split("</thead>")[0]
    columns = re.findall(r'<th class="num">([A-Z_]+)</th>', header)
    p1 = row_of(r, "projects", "p1").split()
    p2 = row_of(r, "projects", "p2").split()
    usage_p1 = dict(zip(columns, p1[3:], strict=False))
    usage_p2 = dict(zip(columns, p2[3:], strict=False))
    assert p1[:3] == ["p1", "2", "2"]
    assert usage_p1 == {"VCPU": "6", "MEMORY_MB": "3,072", "PCPU": "0"}
    assert usage_p2["PCPU"] == "2"


def test_projects_search(cloud, staff):
    page = text(staff.get("/dashboard/projects/?q=p2"))
    assert " p2 " in page
    assert " p1 " not in page


# --- traits, resource classes, aggregates ---------------------------------------------------


def test_traits_page_counts_providers_per_trait(cloud, staff):
    r = staff.get("/dashboard/traits/")
    # Standard traits are read-only: the admin link says View, custom ones say Edit.
    assert row_of(r, "traits", "HW_CPU_X86_AVX2") == "HW_CPU_X86_AVX2 standard 1 View"
    assert row_of(r, "traits", "CUSTOM_MAINT") == "CUSTOM_MAINT custom 1 Edit"
    assert "2 traits that some provider has." in text(r)


def test_traits_page_can_include_unused_traits(cloud, staff):
    r = staff.get("/dashboard/traits/?all=1&q=HW_CPU_X86_SSE")
    assert row_of(r, "traits", "HW_CPU_X86_SSE ") == "HW_CPU_X86_SSE standard 0 View"


def test_resource_classes_page_counts_providers_and_usage(cloud, staff):
    r = staff.get("/dashboard/resource-classes/")
    assert row_of(r, "resource-classes", "VCPU") == "VCPU standard 2 6 View"
    assert "3 resource classes that some provider has inventory of" in text(r)


def test_resource_classes_page_hides_unused_classes_unless_asked_like_traits(cloud, staff):
    assert "DISK_GB" not in text(staff.get("/dashboard/resource-classes/"))
    r = staff.get("/dashboard/resource-classes/?all=1")
    assert row_of(r, "resource-classes", "DISK_GB") == "DISK_GB standard 0 0 View"


def test_aggregates_page_counts_members(cloud, staff):
    r = staff.get("/dashboard/aggregates/")
    assert row_of(r, "aggregates", str(AGG_A)) == f"{AGG_A} 1 Edit"


def test_aggregate_page_lists_members(cloud, staff):
    r = staff.get(f"/dashboard/aggregates/{AGG_A}/")
    assert names_listed(r) == ["cn1"]
    assert "1 member." in text(r)
