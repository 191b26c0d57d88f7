"""``hw:mem_page_size=large`` and ``any`` as Nova fits them (issue 25): any huge page size a
cell has, the largest that holds the node's memory first, per cell; ``any`` falls back to
small pages. Boots, explain (with ``target_host``) and capacity answer alike, through HTTP on
PostgreSQL."""

import io

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.providers.devices import provider_uuid, report_and_sync
from tests.scheduling.test_numa_placement import (
    EVEN,
    allocations,
    flavor,
    plugins,  # noqa: F401 (the autouse fixture: the NUMA plugins, ratios 1.0, 512 MB reserved)
    request,
)

pytestmark = [pytest.mark.django_db, pytest.mark.postgresql]

GIB_KB = 1048576
GIB = f"CUSTOM_MEMPAGE_{GIB_KB}KB"
TWO_MIB = "CUSTOM_MEMPAGE_2048KB"


def cell(n, *, cpus=2, memory_mb=4096, gib=0, two_mib=0):
    """A cell of ``memory_mb``: ``gib`` 1 GiB pages, ``two_mib`` 2 MiB pages, the rest small."""
    small_mb = memory_mb - gib * 1024 - two_mib * 2
    pages = [{"size_kb": 4, "total": small_mb * 256}]
    if two_mib:
        pages.append({"size_kb": 2048, "total": two_mib})
    if gib:
        pages.append({"size_kb": GIB_KB, "total": gib})
    return {
        "id": n,
        "cpus": list(range(n * cpus, (n + 1) * cpus)),
        "memory_mb": memory_mb,
        "mempages": pages,
    }


def host(*cells):
    return {
        "vcpus": sum(len(c["cpus"]) for c in cells),
        "memory_mb": sum(c["memory_mb"] for c in cells),
        "local_gb": 100,
        "numa_topology": {"cells": list(cells)},
    }


def boot(api, flavor_name, host_name, name="vm"):
    return api.post("/api/servers/", request(flavor_name, host_name, name))


def explain(api, flavor_name, host_name):
    return api.post("/api/scheduler/explain/", request(flavor_name, host_name))


def capacity(api, flavor_name):
    response = api.get(f"/api/capacity/?flavor={flavor_name}")
    assert response.status == 200, response
    return {h["name"]: h["fits"] for h in response.json["hosts"]}


def pages_of(placed):
    """The page classes a server's allocations hold: ``{class: amount}`` summed."""
    found = {}
    for resources in placed.values():
        for name, amount in resources.items():
            if name.startswith("CUSTOM_MEMPAGE_") or name == "MEMORY_MB":
                found[name] = found.get(name, 0) + amount
    return found


def booted_pages(api, response):
    assert response.status == 201, response
    return pages_of(allocations(api, response.json["servers"][0]["id"]))


def chosen_pages(response):
    assert response.status == 200, response
    return pages_of(response.json["chosen"]["allocations"])


def test_a_host_with_1_gib_pages_only_is_placed_with_large(api):
    report_and_sync(api, "gig", host(cell(0, gib=2), cell(1, gib=2)))
    assert flavor(api, "large", 1, 1024, **{"hw:mem_page_size": "large"}).status == 201

    assert capacity(api, "large") == {"gig": 4}
    assert chosen_pages(explain(api, "large", "gig")) == {GIB: 1}
    assert booted_pages(api, boot(api, "large", "gig")) == {GIB: 1}


def test_a_host_with_2_mib_pages_only_is_placed_with_large(api):
    report_and_sync(api, "gig", host(cell(0, gib=2)))  # the 1 GiB class exists
    report_and_sync(api, "two", host(cell(0, two_mib=1024)))
    flavor(api, "large", 1, 1024, **{"hw:mem_page_size": "large"})

    assert capacity(api, "large") == {"gig": 2, "two": 2}
    assert chosen_pages(explain(api, "large", "two")) == {TWO_MIB: 512}
    assert booted_pages(api, boot(api, "large", "two")) == {TWO_MIB: 512}


def test_the_largest_size_is_taken_first_then_the_next_once_it_is_exhausted(api):
    # One cell: 2 pages of 1 GiB, 512 of 2 MiB (1 GiB), 1 GiB of small pages; four CPUs.
    report_and_sync(api, "both", host(cell(0, cpus=4, gib=2, two_mib=512)))
    flavor(api, "large", 1, 1024, **{"hw:mem_page_size": "large"})

    # 1 GiB pages twice, then the 2 MiB pages once; small pages never.
    assert capacity(api, "large") == {"both": 3}
    assert chosen_pages(explain(api, "large", "both")) == {GIB: 1}
    assert booted_pages(api, boot(api, "large", "both", "a")) == {GIB: 1}
    assert booted_pages(api, boot(api, "large", "both", "b")) == {GIB: 1}

    assert capacity(api, "large") == {"both": 1}
    assert chosen_pages(explain(api, "large", "both")) == {TWO_MIB: 512}
    assert booted_pages(api, boot(api, "large", "both", "c")) == {TWO_MIB: 512}

    assert capacity(api, "large") == {}
    assert explain(api, "large", "both").status == 409
    refused = boot(api, "large", "both", "d")
    assert refused.status == 409, refused
    assert refused.json["errors"][0]["code"] == "scheduler.no_valid_host"


def test_a_host_without_huge_pages_is_refused_and_explain_names_each_size(api):
    report_and_sync(api, "gig", host(cell(0, gib=2)))
    report_and_sync(api, "plain", EVEN)
    flavor(api, "large", 1, 1024, **{"hw:mem_page_size": "large"})

    explained = explain(api, "large", "plain")
    booted = boot(api, "large", "plain")

    for response in (explained, booted):
        assert response.status == 409, response
        assert response.json["errors"][0]["code"] == "scheduler.no_valid_host"
    assert capacity(api, "large") == {"gig": 2}
    groups = explained.json["errors"][0]["explain"]["groups"]
    numa0 = {g["variant"]: g for g in groups if g["group"] == "_NUMA0"}
    assert list(numa0) == [
        f"hw:mem_page_size=large: _NUMA0: {GIB_KB} KiB pages",
        "hw:mem_page_size=large: _NUMA0: 2048 KiB pages",
    ]
    for name, group in zip((GIB, TWO_MIB), numa0.values(), strict=True):
        assert name in group["resources"], group
        reasons = {
            example["provider"]: example["reasons"] for example in group["left_out_examples"]
        }
        assert any(name in text for text in reasons["plain_NUMA0"]), reasons


def test_memory_that_no_huge_page_size_holds_is_no_valid_host_not_a_400(api):
    report_and_sync(api, "both", host(cell(0, cpus=4, gib=2, two_mib=512)))
    # 1025 MB: not a whole number of 2 MiB pages nor of 1 GiB pages.
    assert flavor(api, "odd", 1, 1025, **{"hw:mem_page_size": "large"}).status == 201
    # 1022 MB: 511 pages of 2 MiB (the 1 GiB size is skipped).
    flavor(api, "even", 1, 1022, **{"hw:mem_page_size": "large"})

    explained = explain(api, "odd", "both")
    booted = boot(api, "odd", "both")

    for response in (explained, booted):
        assert response.status == 409, response
        assert response.json["errors"][0]["code"] == "scheduler.no_valid_host"
    (note,) = explained.json["errors"][0]["explain"]["notes"]
    assert "1025 MB is not a whole number of pages" in note, note
    assert capacity(api, "odd") == {}
    assert booted_pages(api, boot(api, "even", "both")) == {TWO_MIB: 511}


def test_each_cell_takes_its_own_largest_size(api):
    # Cell 0 has 1 GiB pages only, cell 1 2 MiB pages only: a two-node instance takes both.
    report_and_sync(api, "mixed", host(cell(0, gib=2), cell(1, two_mib=1024)))
    flavor(api, "large2", 2, 2048, **{"hw:mem_page_size": "large", "hw:numa_nodes": "2"})

    response = boot(api, "large2", "mixed")

    assert response.status == 201, response
    placed = allocations(api, response.json["servers"][0]["id"])
    assert placed[provider_uuid(api, "mixed_NUMA0")] == {"VCPU": 1, GIB: 1}
    assert placed[provider_uuid(api, "mixed_NUMA1")] == {"VCPU": 1, TWO_MIB: 512}


def test_any_takes_huge_pages_first_then_small_pages(api):
    report_and_sync(api, "gig", host(cell(0, gib=1)))
    report_and_sync(api, "plain", EVEN)
    flavor(api, "any", 1, 1024, **{"hw:mem_page_size": "any"})

    assert chosen_pages(explain(api, "any", "plain")) == {"MEMORY_MB": 1024}
    assert booted_pages(api, boot(api, "any", "plain", "a")) == {"MEMORY_MB": 1024}
    assert booted_pages(api, boot(api, "any", "gig", "b")) == {GIB: 1}
    # The 1 GiB page is taken: small pages next (3072 MB of them on the cell).
    assert booted_pages(api, boot(api, "any", "gig", "c")) == {"MEMORY_MB": 1024}


def test_the_audit_takes_any_page_size_of_large_as_the_flavors(api):
    report_and_sync(api, "both", host(cell(0, cpus=4, gib=1, two_mib=512)))
    flavor(api, "large", 1, 1024, **{"hw:mem_page_size": "large"})
    assert booted_pages(api, boot(api, "large", "both", "a")) == {GIB: 1}
    assert booted_pages(api, boot(api, "large", "both", "b")) == {TWO_MIB: 512}

    out = io.StringIO()
    call_command("placement_audit", stdout=out)

    assert out.getvalue().startswith("0 findings"), out.getvalue()


def test_a_move_of_a_large_server_takes_the_destinations_own_size(api):
    report_and_sync(api, "gig", host(cell(0, gib=2)))
    report_and_sync(api, "two", host(cell(0, two_mib=1024)))
    flavor(api, "large", 1, 1024, **{"hw:mem_page_size": "large"})
    server = boot(api, "large", "gig").json["servers"][0]["id"]

    response = api.post(f"/api/servers/{server}/migrate/", {"host": "two"})

    assert response.status == 201, response
    assert api.get(f"/api/servers/{server}/").json["host"] == "two"
    assert pages_of(allocations(api, server)) == {TWO_MIB: 512}


def test_the_variants_share_their_reads(api):
    # Two nodes, two sizes on every cell: four variants (1 GiB on both nodes, 1 GiB then
    # 2 MiB...). They read names, sharing providers and each distinct group once: a pass
    # costs what one size costs, plus the page classes' read and the second size's query.
    report_and_sync(api, "both", host(cell(0, gib=2, two_mib=512), cell(1, gib=2, two_mib=512)))
    flavor(api, "gig2", 2, 2048, **{"hw:mem_page_size": "1GB", "hw:numa_nodes": "2"})
    flavor(api, "large2", 2, 2048, **{"hw:mem_page_size": "large", "hw:numa_nodes": "2"})
    counts = {}
    for name in ("gig2", "large2", "gig2", "large2"):  # the second round, warm
        with CaptureQueriesContext(connection) as captured:
            fits = capacity(api, name)
        counts[name] = len(captured)

    # 2 vCPUs a cell: one instance of two nodes each time, 1 GiB pages first.
    assert fits == {"both": 2}
    print(f"statements of a capacity: one size {counts['gig2']}, four variants {counts['large2']}")
    assert counts["large2"] <= counts["gig2"] + 2
