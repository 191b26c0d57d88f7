"""Every list downloads as CSV or JSON (?export=csv|json), all matching rows, in its order."""

import csv
import io

import pytest

from placementsite.dashboard import exports

pytestmark = pytest.mark.django_db

LISTS = [
    "/dashboard/providers/",
    "/dashboard/consumers/",
    "/dashboard/projects/",
    "/dashboard/traits/",
    "/dashboard/resource-classes/",
    "/dashboard/aggregates/",
]


@pytest.mark.parametrize("url", LISTS)
def test_every_list_offers_both_downloads(cloud, staff, url):
    html = staff.get(url).content.decode()
    assert 'href="?export=csv">CSV</a>' in html
    assert 'href="?export=json">JSON</a>' in html


@pytest.mark.parametrize("url", LISTS)
def test_every_list_downloads_as_csv_and_json(cloud, staff, url):
    r = staff.get(url, {"export": "csv"})
    assert r.status_code == 200
    assert r["Content-Type"] == "text/csv; charset=utf-8"
    assert r["Content-Disposition"].startswith('attachment; filename="placement-')
    rows = list(csv.reader(io.StringIO(r.content.decode())))
    assert len(rows) >= 2  # a header and some rows
    r = staff.get(url, {"export": "json"})
    assert r["Content-Type"] == "application/json"
    assert isinstance(r.json(), list) and r.json()


def test_provider_export_keeps_filters_and_sort_and_sums_hosts(cloud, staff):
    r = staff.get("/dashboard/providers/", {"export": "json", "tree": "root", "sort": "-name"})
    rows = r.json()
    assert [row["name"] for row in rows] == ["cn2", "cn1"]
    cn1 = rows[1]
    assert cn1["tree_size"] == 2
    # cn1's row is its whole tree: its PCPU is on cn1-numa0.
    assert cn1["inventories"]["PCPU"] == {"capacity": 4, "used": 2, "free": 2}
    assert cn1["inventories"]["VCPU"] == {"capacity": 16, "used": 4, "free": 12}


def test_consumer_csv_has_hosts_resources_and_dates(cloud, staff):
    r = staff.get("/dashboard/consumers/", {"export": "csv", "project": "p2"})
    header, row = list(csv.reader(io.StringIO(r.content.decode())))
    record = dict(zip(header, row, strict=True))
    assert record["uuid"] == str(cloud["vm3"].uuid)
    assert record["hosts"] == "cn1"
    assert record["resources"] == "PCPU=2"
    assert record["created_at"]


def test_export_reads_page_by_page_past_one_page(cloud, staff, monkeypatch):
    monkeypatch.setattr(exports, "EXPORT_PAGE", 1)
    rows = staff.get("/dashboard/providers/", {"export": "json"}).json()
    assert [row["name"] for row in rows] == ["cn1", "cn1-numa0", "cn2"]


def test_unknown_export_format_renders_the_page(cloud, staff):
    r = staff.get("/dashboard/providers/", {"export": "xml"})
    assert r.status_code == 200
    assert r["Content-Type"].startswith("text/html")


@pytest.mark.parametrize("url", LISTS)
def test_downloads_are_never_cached(cloud, staff, url):
    for fmt in ("csv", "json"):
        assert "no-store" in staff.get(url, {"export": fmt})["Cache-Control"]


def test_csv_cells_that_would_start_a_formula_are_quoted(staff):
    from tests.factories import make_allocation, make_consumer, make_provider

    evil = make_provider('=HYPERLINK("http://x")', inventories={"VCPU": 4})
    plain = make_provider("cn-plain", inventories={"VCPU": 4})
    for project in ("+1-2", "-cmd", "@SUM(A1)"):
        make_allocation(plain, make_consumer(project=project, user="u"), {"VCPU": 1})
    make_allocation(evil, make_consumer(project="p", user="\tTAB"), {"VCPU": 1})

    rows = list(
        csv.DictReader(io.StringIO(staff.get("/dashboard/providers/?export=csv").content.decode()))
    )
    names = {row["name"] for row in rows}
    assert names == {'\'=HYPERLINK("http://x")', "cn-plain"}
    assert all(row["generation"].isdigit() for row in rows)  # numbers untouched

    rows = list(
        csv.DictReader(io.StringIO(staff.get("/dashboard/consumers/?export=csv").content.decode()))
    )
    assert {row["project"] for row in rows} == {"'+1-2", "'-cmd", "'@SUM(A1)", "p"}
    assert "'\tTAB" in {row["user"] for row in rows}
    # JSON is data, not a spreadsheet: left as it is.
    projects = {row["project"] for row in staff.get("/dashboard/consumers/?export=json").json()}
    assert "+1-2" in projects


def test_csv_numbers_are_never_quoted():
    assert exports._csv_cell(-3) == "-3"
    assert exports._csv_cell(-0.5) == "-0.5"
    assert exports._csv_cell("-3") == "'-3"
    assert exports._csv_cell({"=A": 1}) == "'=A=1"
