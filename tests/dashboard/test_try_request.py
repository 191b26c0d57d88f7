"""The "try a request" page: which providers fit, and why the others do not."""

import html
import re
from html import unescape

import pytest

from tests.dashboard.conftest import AGG_A, AGG_B
from tests.factories import make_allocation, make_consumer, make_provider, trait

pytestmark = pytest.mark.django_db


def evaluate(client, **fields):
    r = client.get("/dashboard/try/", {"submit": "1", **fields})
    assert r.status_code == 200
    return r


def candidates_page(client, **fields):
    """The allocation candidates the "try" page loads after itself (its try.js)."""
    r = client.get("/dashboard/try/candidates/", {"submit": "1", **fields})
    assert r.status_code == 200
    return r


def group(response, suffix="unnumbered"):
    html = response.content.decode()
    section = html.split(f'id="group-{suffix}"', 1)[1].split("</section>", 1)[0]
    fits = section.split('class="grid compact fits"')[1].split("</table>")[0]
    left = section.split('class="grid compact left-out"')[1].split("</table>")[0]
    # The providers that fit on their own (hosts that fit themselves, children they fit
    # through) in name order, and each listed left-out provider with its reasons.
    fitting = []
    for row in fits.split("<tr>")[2:]:
        host = re.search(r'class="strong" href="[^"]+">([^<]+)<', row)
        if host and "the host itself" in row:
            fitting.append(host.group(1))
        fitting += re.findall(r'class="child-fit" href="[^"]+">([^<]+)<', row)
    reasons = {}
    for row in left.split("<tr>")[2:]:
        name = re.search(r'href="/dashboard/providers/[^"]+">([^<]+)<', row)
        if name:
            reasons[name.group(1)] = re.findall(r'<li class="reason [^"]+">([^<]+)</li>', row)
    return sorted(fitting), reasons


def error_of(response):
    match = re.search(r'id="try-error" role="alert">([^<]+)<', response.content.decode())
    return match and match.group(1)


def test_form_is_shown_empty_before_anything_is_asked(cloud, staff):
    r = staff.get("/dashboard/try/")
    html = r.content.decode()
    assert 'name="resources"' in html
    assert 'name="g1-resources"' in html and 'name="g3-member_of"' in html
    assert 'id="group-unnumbered"' not in html


def test_page_states_that_providers_are_judged_one_by_one(cloud, staff):
    html = staff.get("/dashboard/try/").content.decode()
    note = html.split('id="scope-note"')[1].split("</aside>")[0]
    assert "one by one" in note
    assert "GET /allocation_candidates" in note


def candidates_of(response):
    """Each candidate as a sorted list of "provider CLASS amount ..." strings."""
    html = response.content.decode()
    table = html.split('class="grid compact candidates"', 1)[1].split("</table>", 1)[0]
    found = []
    for row in table.split("<tr>")[2:]:
        parts = row.split('<span class="candidate-part">')[1:]
        if not parts:  # the "no allocation candidate" row
            continue
        found.append(
            sorted(
                " ".join(
                    [re.search(r'href="[^"]+">([^<]+)<', part).group(1)]
                    + [f"{rc} {n}" for rc, n in re.findall(r"<b>(\w+)</b> ([\d,]+)", part)]
                )
                for part in parts
            )
        )
    return found


def test_candidates_combine_a_tree_where_no_single_provider_fits(cloud, staff):
    r = evaluate(staff, resources="VCPU:2,PCPU:2")
    fitting, _ = group(r)
    assert fitting == []  # no provider has both classes on its own
    r = candidates_page(staff, resources="VCPU:2,PCPU:2")
    assert candidates_of(r) == [["cn1 VCPU 2", "cn1-numa0 PCPU 2"]]


def test_candidates_follow_the_group_policy(cloud, staff):
    asked = {"g1-resources": "VCPU:1", "g2-resources": "VCPU:1"}
    shared = candidates_of(candidates_page(staff, group_policy="none", **asked))
    assert shared == [["cn1 VCPU 2"], ["cn2 VCPU 2"]]
    assert candidates_of(candidates_page(staff, group_policy="isolate", **asked)) == []


def test_candidates_need_resources_in_every_group(cloud, staff):
    r = candidates_page(staff, resources="VCPU:1", **{"g1-required": "HW_CPU_X86_AVX2"})
    html = r.content.decode()
    assert "Allocation candidates need resources in every group" in html
    assert 'class="grid compact candidates"' not in html


def test_providers_with_room_fit(cloud, staff):
    fitting, _ = group(evaluate(staff, resources="VCPU:2,MEMORY_MB:1024"))
    assert fitting == ["cn1", "cn2"]


def test_provider_short_of_memory_says_by_how_much_and_what_is_free(cloud, staff):
    # cn1: 3584 usable - 2048 used = 1536 free; cn2: 2048 - 1024 = 1024 free
    _, reasons = group(evaluate(staff, resources="MEMORY_MB:3072"))
    assert reasons["cn1"] == ["short of MEMORY_MB by 1536 (only 1536 free)"]
    assert reasons["cn2"] == ["short of MEMORY_MB by 2048 (only 1024 free)"]


def test_provider_without_the_class_says_it_has_no_inventory(cloud, staff):
    _, reasons = group(evaluate(staff, resources="PCPU:1"))
    assert reasons["cn2"] == ["has no inventory of PCPU"]


def test_a_provider_of_a_host_that_fits_is_not_listed_as_left_out(cloud, staff):
    # cn1-numa0 has no VCPU, but its host cn1 fits: the host is what an operator places on.
    fitting, reasons = group(evaluate(staff, resources="VCPU:1"))
    assert fitting == ["cn1", "cn2"]
    assert "cn1-numa0" not in reasons


def test_request_above_max_unit_is_explained(cloud, staff):
    fitting, reasons = group(evaluate(staff, resources="VCPU:3"))
    assert fitting == ["cn1"]
    assert reasons["cn2"] == [
        "request of 3 VCPU exceeds max_unit 2",
        "short of VCPU by 1 (only 2 free)",
    ]


def test_request_not_a_multiple_of_step_size_is_explained(db, staff):
    make_provider("stepped", inventories={"DISK_GB": {"total": 100, "step_size": 10}})
    _, reasons = group(evaluate(staff, resources="DISK_GB:15"))
    assert reasons["stepped"] == ["request of 15 DISK_GB is not a multiple of step_size 10"]


def test_request_below_min_unit_is_explained(db, staff):
    make_provider("big-pages", inventories={"MEMORY_MB": {"total": 4096, "min_unit": 1024}})
    _, reasons = group(evaluate(staff, resources="MEMORY_MB:512"))
    assert reasons["big-pages"] == ["request of 512 MEMORY_MB is below min_unit 1024"]


def test_every_reason_of_a_provider_is_listed(db, staff):
    trait("CUSTOM_X")
    rp = make_provider("busy", inventories={"VCPU": {"total": 4, "max_unit": 2}})
    make_allocation(rp, make_consumer(), {"VCPU": 2})
    _, reasons = group(evaluate(staff, resources="VCPU:3", required="CUSTOM_X"))
    assert reasons["busy"] == [
        "request of 3 VCPU exceeds max_unit 2",
        "short of VCPU by 1 (only 2 free)",
        "missing trait CUSTOM_X",
    ]


def test_missing_required_trait_is_explained(cloud, staff):
    fitting, reasons = group(evaluate(staff, resources="VCPU:1", required="HW_CPU_X86_AVX2"))
    assert fitting == ["cn1"]
    assert reasons["cn2"] == ["missing trait HW_CPU_X86_AVX2"]


def test_forbidden_trait_is_explained(cloud, staff):
    fitting, reasons = group(evaluate(staff, resources="VCPU:1", forbidden="CUSTOM_MAINT"))
    assert fitting == ["cn1"]
    assert reasons["cn2"] == ["has forbidden trait CUSTOM_MAINT"]


def test_bang_in_required_traits_forbids(cloud, staff):
    fitting, _ = group(evaluate(staff, resources="VCPU:1", required="!CUSTOM_MAINT"))
    assert fitting == ["cn1"]


def test_member_of_an_aggregate_is_explained(cloud, staff):
    fitting, reasons = group(evaluate(staff, resources="VCPU:1", member_of=str(AGG_B)))
    assert fitting == ["cn2"]
    assert reasons["cn1"] == [f"not in aggregate {AGG_B}"]


def test_member_of_any_of_several_aggregates(cloud, staff):
    fitting, reasons = group(evaluate(staff, member_of=f"in:{AGG_A},{AGG_B}"))
    assert fitting == ["cn1", "cn2"]
    assert "cn1-numa0" not in reasons  # its host fits


def test_forbidden_aggregate_is_explained(cloud, staff):
    fitting, reasons = group(evaluate(staff, resources="VCPU:1", member_of=f"!{AGG_A}"))
    assert fitting == ["cn2"]
    assert reasons["cn1"] == [f"in forbidden aggregate {AGG_A}"]


def test_granular_groups_are_judged_separately(cloud, staff):
    r = evaluate(staff, **{"g1-resources": "PCPU:2", "g2-resources": "VCPU:1"})
    assert group(r, "1")[0] == ["cn1-numa0"]
    assert group(r, "2")[0] == ["cn1", "cn2"]
    assert 'id="group-unnumbered"' not in r.content.decode()


def test_reasons_are_summed_up_by_kind(cloud, staff):
    r = evaluate(staff, resources="VCPU:3")
    # Hosts: cn2 (max_unit 2) is left out; cn1 fits (its NUMA child lacks VCPU, no matter).
    # (cn2 has 2 VCPU free: short as well.)
    assert reason_summary(r) == {"request exceeds max_unit": "1", "not enough free capacity": "1"}
    assert reason_summary(r, which="provider-reason-summary") == {
        "request exceeds max_unit": "1",
        "not enough free capacity": "1",
        "no inventory of a requested class": "1",
    }


def test_unknown_resource_class_is_an_error_message(cloud, staff):
    assert error_of(evaluate(staff, resources="CUSTOM_NOPE:1")) == (
        "No such resource class: CUSTOM_NOPE"
    )


def test_unknown_trait_is_an_error_message(cloud, staff):
    assert error_of(evaluate(staff, required="CUSTOM_NOPE")) == "No such trait: CUSTOM_NOPE"


@pytest.mark.parametrize(
    "fields, message",
    [
        # The API's own words: the fields are parsed by the API's parser.
        ({"resources": "VCPU"}, "Badly formed resources parameter"),
        ({"resources": "VCPU:0"}, "Requested resource VCPU requires amount >= 1. Got: 0."),
        ({"resources": "VCPU:-1"}, "Requested resource VCPU requires amount >= 1. Got: -1."),
        ({"resources": "VCPU:x"}, "Requested resource VCPU expected positive integer amount"),
        ({"required": "CUSTOM_A,,CUSTOM_B"}, "Got an empty trait in: CUSTOM_A,,CUSTOM_B"),
        ({"forbidden": "CUSTOM_A,"}, "Got an empty trait in: !CUSTOM_A,!"),
        ({"member_of": "not-a-uuid"}, "contain valid UUID(s). Got: not-a-uuid"),
        ({"member_of": f"{AGG_A},{AGG_B}"}, "must be prefixed with the"),
        ({"required": "CUSTOM_A", "forbidden": "CUSTOM_A"}, "both required and forbidden"),
        ({"resources": "VCPU:1\x00"}, "Null characters are not allowed"),
    ],
)
def test_bad_input_is_explained_next_to_the_field(cloud, staff, fields, message):
    r = evaluate(staff, **fields)
    assert (
        error_of(r) == "Some fields are not valid: see the messages under them in the form above."
    )
    assert message in html.unescape(r.content.decode())


def test_asking_for_nothing_is_an_error_message(cloud, staff):
    assert error_of(evaluate(staff)).startswith("Ask for something")


def test_over_capacity_provider_reports_nothing_free(db, staff):
    rp = make_provider("over", inventories={"VCPU": 4})
    make_allocation(rp, make_consumer(), {"VCPU": 4})
    rp.inventories.update(total=2)
    _, reasons = group(evaluate(staff, resources="VCPU:1"))
    assert reasons["over"] == ["short of VCPU by 3 (only 0 free)"]


# --- one engine: the page agrees with the provider filters, counts cover every provider -----


def verdict(response, suffix="unnumbered"):
    """(hosts that fit, hosts left out)."""
    html = response.content.decode()
    section = html.split(f'id="group-{suffix}"', 1)[1].split("</section>", 1)[0]
    fit = re.search(r'class="fit-count">([^<]+)<', section).group(1)
    out = re.search(r'class="out-count">([^<]+)<', section).group(1)
    return int(fit.replace(",", "")), int(out.replace(",", ""))


def provider_verdict(response, suffix="unnumbered"):
    """(providers that fit on their own, providers that do not)."""
    html = response.content.decode()
    section = html.split(f'id="group-{suffix}"', 1)[1].split("</section>", 1)[0]
    fit = re.search(r"(\d[\d,]*) providers? fits? on", section).group(1)
    out = re.search(r'class="provider-out-count">([^<]+)<', section).group(1)
    return int(fit.replace(",", "")), int(out.replace(",", ""))


def reason_summary(response, suffix="unnumbered", which="reason-summary"):
    """{reason: count} of hosts left out (``provider-reason-summary``: of providers)."""
    html = response.content.decode()
    section = html.split(f'id="group-{suffix}"', 1)[1].split("</section>", 1)[0]
    summary = section.split(f'class="{which}"')[1].split("</p>")[0]
    return dict(re.findall(r'<span class="chip chip-bad">([^<]+) <b>([^<]+)</b>', summary))


@pytest.fixture
def one_row_shown(monkeypatch):
    monkeypatch.setattr("placementsite.dashboard.try_request.FIT_ROWS_SHOWN", 1)


@pytest.mark.parametrize(
    "fields, query",
    [
        ({"resources": "VCPU:3"}, "resources=VCPU:3"),
        ({"resources": "MEMORY_MB:1024"}, "resources=MEMORY_MB:1024"),
        (
            {"resources": "VCPU:1", "required": "HW_CPU_X86_AVX2"},
            "resources=VCPU:1&required=HW_CPU_X86_AVX2",
        ),
        ({"required": "!CUSTOM_MAINT"}, "required=!CUSTOM_MAINT"),
        ({"member_of": f"in:{AGG_A},{AGG_B}"}, f"member_of=in:{AGG_A},{AGG_B}"),
        ({"member_of": f"!{AGG_A}"}, f"member_of=!{AGG_A}"),
    ],
)
def test_providers_that_fit_are_those_the_provider_list_api_returns(
    cloud, staff, api, fields, query
):
    fitting, _ = group(evaluate(staff, **fields))
    listed = api.get(f"/resource_providers?{query}").json["resource_providers"]
    assert fitting == sorted(p["name"] for p in listed)


def test_fit_and_left_out_counts_cover_every_provider(cloud, staff):
    r = evaluate(staff, resources="VCPU:1")
    assert verdict(r) == (2, 0)  # hosts cn1 and cn2 fit
    assert provider_verdict(r) == (2, 1)  # cn1-numa0 does not on its own


def test_counts_include_providers_beyond_the_rows_shown(db, staff, one_row_shown):
    for name in ("a", "b", "c"):
        make_provider(name, inventories={"VCPU": 2})
    make_provider("d", inventories={"VCPU": 8})
    r = evaluate(staff, resources="VCPU:4")
    fitting, reasons = group(r)
    assert verdict(r) == (1, 3)
    assert list(reasons) == ["a"]
    assert reason_summary(r) == {"not enough free capacity": "3"}


def test_rows_shown_are_the_first_by_name_whatever_else_they_answer(db, staff, one_row_shown):
    trait("CUSTOM_X")
    make_provider("b", inventories={"VCPU": 8}, traits=["CUSTOM_X"])
    make_provider("a", inventories={"VCPU": 8})
    make_provider("d", inventories={"VCPU": 1}, traits=["CUSTOM_X"])
    make_provider("c", inventories={"VCPU": 1})
    # The numbered group gives the providers different answers, the unnumbered one not.
    r = evaluate(staff, resources="VCPU:2", **{"g1-required": "CUSTOM_X"})
    fitting, reasons = group(r)
    assert fitting == ["a"]
    assert list(reasons) == ["c"]


def test_provider_short_of_two_classes_is_counted_once_per_kind(db, staff):
    make_provider("small", inventories={"VCPU": 1, "MEMORY_MB": 512})
    r = evaluate(staff, resources="VCPU:2,MEMORY_MB:1024")
    _, reasons = group(r)
    assert reasons["small"] == [
        "short of VCPU by 1 (only 1 free)",
        "short of MEMORY_MB by 512 (only 512 free)",
    ]
    assert reason_summary(r) == {"not enough free capacity": "1"}


def test_each_forbidden_trait_held_is_named(db, staff):
    for name in ("CUSTOM_A", "CUSTOM_B", "CUSTOM_C"):
        trait(name)
    make_provider("tagged", inventories={"VCPU": 4}, traits=["CUSTOM_B", "CUSTOM_A"])
    _, reasons = group(evaluate(staff, forbidden="CUSTOM_C,CUSTOM_B,CUSTOM_A"))
    assert reasons["tagged"] == ["has forbidden trait CUSTOM_A", "has forbidden trait CUSTOM_B"]


def test_only_the_forbidden_aggregates_held_are_named(cloud, staff):
    _, reasons = group(evaluate(staff, member_of=f"!in:{AGG_A},{AGG_B}"))
    # cn1 is in AGG_A, but its child is in neither: the host fits through it.
    assert reasons["cn2"] == [f"in forbidden aggregate {AGG_B}"]
    assert "cn1" not in reasons and "cn1-numa0" not in reasons


def test_unknown_aggregate_in_member_of_leaves_every_provider_out(cloud, staff):
    unknown = "dddddddd-0000-4000-8000-000000000004"
    r = evaluate(staff, member_of=unknown)
    _, reasons = group(r)
    assert verdict(r) == (0, 2)
    assert provider_verdict(r) == (0, 3)
    assert reasons["cn2"] == [f"not in aggregate {unknown}"]
    assert reasons["cn1-numa0"] == [f"not in aggregate {unknown}"]


def test_unknown_trait_in_a_numbered_group_is_an_error_message(cloud, staff):
    r = evaluate(staff, resources="VCPU:1", **{"g2-required": "CUSTOM_NOPE"})
    assert error_of(r) == "No such trait: CUSTOM_NOPE"
    assert 'id="group-unnumbered"' not in r.content.decode()


def test_several_unknown_classes_are_named_together(cloud, staff):
    r = evaluate(staff, resources="CUSTOM_B:1", **{"g1-resources": "CUSTOM_A:1"})
    assert error_of(r) == "No such resource class: CUSTOM_A, CUSTOM_B"


def test_reasons_of_a_group_are_counted_for_that_group_only(cloud, staff):
    r = evaluate(staff, resources="PCPU:1", **{"g1-resources": "VCPU:1"})
    provider_level = "provider-reason-summary"
    assert reason_summary(r, which=provider_level) == {"no inventory of a requested class": "2"}
    assert reason_summary(r, "1", provider_level) == {"no inventory of a requested class": "1"}
    # Hosts: only cn2 lacks PCPU in its whole tree; every host has a provider with VCPU.
    assert reason_summary(r) == {"no inventory of a requested class": "1"}


def test_page_leaves_the_candidates_to_its_script_with_a_link_without_one(
    cloud, staff, monkeypatch
):
    """The page is the why-not report; the candidates engine runs for the fragment only,
    whose address (the same query) the page gives its script and, without scripts, a link."""
    from placementsite.dashboard import try_request

    def refuse(**kwargs):
        raise AssertionError("the page must not ask the candidates engine")

    monkeypatch.setattr(try_request, "candidates_preview", refuse)
    r = evaluate(staff, resources="VCPU:2,PCPU:2", group_policy="isolate")
    html = r.content.decode()
    assert group(r)[0] == []
    pending = html.split('id="candidates-pending"', 1)[1].split("</section>", 1)[0]
    url = unescape(re.search(r'data-candidates-url="([^"]+)"', pending).group(1))
    assert url.startswith("/dashboard/try/candidates/?")
    link = re.search(r'<noscript><p><a href="([^"]+)">', pending).group(1)
    assert unescape(link) == url
    assert "dashboard/try.js" in html
    assert 'class="grid compact candidates"' not in html
    monkeypatch.undo()
    assert candidates_of(staff.get(url)) == [["cn1 VCPU 2", "cn1-numa0 PCPU 2"]]


def test_no_fragment_address_when_the_page_has_no_report(cloud, staff):
    for fields in ({"resources": "VCPU:1,CUSTOM_NOPE:1"}, {"resources": "VCPU:x"}, {}):
        html = evaluate(staff, **fields).content.decode()
        assert "candidates-pending" not in html and "try.js" not in html
    assert "candidates-pending" not in staff.get("/dashboard/try/").content.decode()


@pytest.mark.parametrize(
    "fields, message",
    [
        ({"resources": "VCPU:1,CUSTOM_NOPE:1"}, "No such resource class: CUSTOM_NOPE"),
        ({"resources": "VCPU:1", "required": "CUSTOM_NOPE"}, "No such trait: CUSTOM_NOPE"),
        ({"resources": "VCPU:x"}, "Some fields are not valid"),
        ({}, "Ask for something"),
    ],
)
def test_fragment_refuses_what_the_page_refuses_with_its_reason(cloud, staff, fields, message):
    r = staff.get("/dashboard/try/candidates/", {"submit": "1", **fields})
    assert r.status_code == 400
    html = r.content.decode()
    assert message in html and 'id="try-candidates-error"' in html
    assert 'class="grid compact candidates"' not in html
    assert "no-store" in r["Cache-Control"]


def test_fragment_is_a_fragment_with_amounts_in_their_units(cloud, staff):
    html = candidates_page(staff, resources="MEMORY_MB:1024").content.decode()
    assert 'aria-label="Dashboard"' not in html and "<html" not in html  # no page around it
    assert 'id="candidates"' in html
    assert "<b>MEMORY_MB</b> 1,024" in html or "<b>MEMORY_MB</b> 1 GiB" in html


def test_fragment_needs_the_permissions_of_the_page(cloud):
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission
    from django.test import Client

    user = get_user_model().objects.create_user("half", password="half-pass-1", is_staff=True)
    codenames = [
        "view_resourceprovider",
        "view_inventory",
        "view_allocation",
        "view_trait",
    ]
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    client = Client()
    client.force_login(user)
    url = "/dashboard/try/candidates/?submit=1&resources=VCPU:1"
    assert client.get("/dashboard/try/?submit=1&resources=VCPU:1").status_code == 403
    r = client.get(url)
    assert r.status_code == 403 and b"cn1" not in r.content
    user.user_permissions.add(Permission.objects.get(codename="view_aggregate"))
    client.force_login(get_user_model().objects.get(pk=user.pk))
    assert client.get("/dashboard/try/?submit=1&resources=VCPU:1").status_code == 200
    r = client.get(url)
    assert r.status_code == 200 and b">cn1<" in r.content
    assert client.post(url).status_code == 405  # read only


@pytest.mark.django_db(transaction=True)
def test_unknown_names_are_reported_once_outside_a_transaction(cloud, staff):
    r = evaluate(staff, resources="VCPU:1,CUSTOM_NOPE:1")
    assert "CUSTOM_NOPE" in error_of(r)
    assert 'class="grid compact candidates"' not in r.content.decode()


# --- hosts: trees judged as a whole, sharing providers apart, nothing-fits summary ------------


@pytest.fixture
def numa_host(db):
    """A host whose only VCPU is on its two NUMA children, and a sharing disk pool."""
    host = make_provider("numa-host", inventories={"DISK_GB": 50})
    make_provider("numa-host-n0", parent=host, inventories={"VCPU": 8, "MEMORY_MB": 8192})
    make_provider("numa-host-n1", parent=host, inventories={"VCPU": 8, "MEMORY_MB": 8192})
    make_provider("pool", inventories={"DISK_GB": 5000}, traits=["MISC_SHARES_VIA_AGGREGATE"])
    return host


def test_host_fits_through_its_numa_children(numa_host, staff):
    r = evaluate(staff, resources="VCPU:4,MEMORY_MB:4096")
    html = r.content.decode()
    fits = html.split('class="grid compact fits"')[1].split("</table>")[0]
    row = fits.split("<tr>")[2]
    assert ">numa-host<" in row
    assert ">numa-host-n0<" in row and ">numa-host-n1<" in row  # children under their host
    assert verdict(r) == (1, 0)
    _, reasons = group(r)
    assert "numa-host" not in reasons  # no "left out: has no inventory of VCPU"


def test_sharing_provider_is_shown_as_such_not_left_out(numa_host, staff):
    r = evaluate(staff, resources="VCPU:4")
    _, reasons = group(r)
    assert "pool" not in reasons
    html = r.content.decode()
    sharing = html.split('class="grid compact sharing"')[1].split("</table>")[0]
    assert ">pool<" in sharing and "lends to hosts of its aggregates" in sharing
    assert verdict(r) == (1, 0)  # the pool is not counted as a host left out


def test_nothing_fits_leads_with_the_largest_free_amount_per_class(numa_host, staff):
    r = evaluate(staff, resources="VCPU:12,DISK_GB:10")
    html = r.content.decode()
    summary = html.split('id="nothing-fits-unnumbered"')[1].split("</div>")[0]
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", summary))
    assert "VCPU: asked 12; at most 8 free, on numa-host-n0" in text
    assert "DISK_GB: asked 10 GB; at most 5 TB free, on pool" in text
    # The host counts once, with the reasons of its closest provider (the root: it has the
    # disk but no VCPU; each child is short of VCPU and lacks the disk).
    assert reason_summary(r) == {"no inventory of a requested class": "1"}
    # The per-provider detail is there, collapsed.
    assert '<details class="left-out-details">' in html


@pytest.mark.parametrize(
    "fields",
    [
        {"resources": "VCPU:4,MEMORY_MB:4096"},
        {"resources": "VCPU:12,DISK_GB:10"},
        {"resources": "VCPU:4", "g1-resources": "DISK_GB:100", "g1-required": "HW_CPU_X86_AVX2"},
    ],
)
def test_providers_in_trees_are_found_alike_one_by_one_or_among_all(
    numa_host, cloud, staff, monkeypatch, fields
):
    # The providers not alone in their tree (trees, sharing providers) are looked up one by
    # one when few, else picked among every position: the page must not change.
    from providers.selectors import fit

    pages = []
    for one_in in (0, 10**9):  # always one by one, never
        monkeypatch.setattr(fit, "_FEW_APART_ONE_IN", one_in)
        page = evaluate(staff, **fields).content.decode()
        pages.append(page.split('class="card group-result"', 1)[1].split("</main>", 1)[0])
    assert pages[0] == pages[1]


def test_candidates_are_grouped_by_host(numa_host, staff):
    html = candidates_page(staff, resources="VCPU:2").content.decode()
    table = html.split('class="grid compact candidates"')[1].split("</table>")[0]
    row = table.split("<tr>")[2]
    assert 'class="strong" href="/dashboard/providers/' in row and ">numa-host<" in row
    assert "2 candidates" in row


@pytest.mark.parametrize(
    "fields",
    [
        {"resources": "MEMORY_MB:3072"},
        {"resources": "VCPU:3"},
        {"resources": "VCPU:100000,MEMORY_MB:100000"},
    ],
)
def test_a_class_read_whole_explains_as_a_class_read_by_provider(cloud, staff, fields):
    # Past a number of providers the capacity model reads every inventory of a class at
    # once (a request nothing fits on a large cloud); the page must not change with it.
    from providers.selectors.fit import _CapacityJudge

    by_provider = evaluate(staff, **fields).content.decode()
    _CapacityJudge.WHOLE_CLASS_ABOVE = 0
    try:
        whole = evaluate(staff, **fields).content.decode()
    finally:
        _CapacityJudge.WHOLE_CLASS_ABOVE = 500

    def report(page):
        # The groups' sections: every count, reason and "largest free" line.
        return page.split('class="card group-result"', 1)[1].split("</main>", 1)[0]

    assert report(whole) == report(by_provider)
    assert "short of" in report(whole)


@pytest.mark.parametrize("read_whole", [False, True])
def test_the_largest_free_amount_names_the_first_made_of_equals(db, staff, read_whole):
    # Equal free VCPU on two hosts: the page names the older one, whether the class's
    # inventories were read whole (a large cloud) or its best row picked by the database.
    from providers.selectors.fit import _CapacityJudge

    make_provider("zz-older", inventories={"VCPU": 4})
    make_provider("aa-newer", inventories={"VCPU": 4})
    limit = _CapacityJudge.WHOLE_CLASS_ABOVE
    _CapacityJudge.WHOLE_CLASS_ABOVE = 0 if read_whole else limit
    try:
        text = re.sub(r"<[^>]+>", "", evaluate(staff, resources="VCPU:5").content.decode())
    finally:
        _CapacityJudge.WHOLE_CLASS_ABOVE = limit
    assert "VCPU: asked 5; at most 4 free, on zz-older" in re.sub(r"\s+", " ", text)


@pytest.mark.parametrize(
    "fields",
    [
        {"resources": "VCPU:2,MEMORY_MB:1024", "required": "HW_CPU_X86_AVX2"},
        {"resources": "VCPU:3", "forbidden": "CUSTOM_MAINT", "member_of": str(AGG_A)},
        {"resources": "VCPU:100000,MEMORY_MB:100000"},
        {
            "resources": "MEMORY_MB:3072",
            "g1-resources": "VCPU:1",
            "g2-member_of": f"!{AGG_B}",
            "g3-resources": "PCPU:3",
        },
    ],
)
def test_both_shapes_of_the_verdict_query_give_the_same_page(cloud, staff, monkeypatch, fields):
    # The verdicts are read one rule at a time when few inventory rows could take the amounts
    # asked, else counted over every row of the classes asked, as bits of one integer column
    # or, for a request of many answers, of several: the page must not change.
    from providers.selectors import fit

    pages = []
    for few, bits in ((True, fit._MASK_BITS), (False, fit._MASK_BITS), (False, 1), (False, 2)):
        monkeypatch.setattr(fit, "_few_could_fit", lambda *_args, few=few: few)
        monkeypatch.setattr(fit, "_MASK_BITS", bits)
        page = evaluate(staff, **fields).content.decode()
        pages.append(page.split('class="card group-result"', 1)[1].split("</main>", 1)[0])
    assert pages[1:] == pages[:1] * 3
