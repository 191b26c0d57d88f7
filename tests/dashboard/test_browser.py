"""The dashboard in a real headless Chromium (Debian's chromium + chromium-driver, Selenium).

Each test logs in through the admin login form, drives the pages like an
operator and saves screenshots under test-artifacts/dashboard/.
"""

import os
import shutil
from pathlib import Path

import pytest
from django.conf import settings
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import Select, WebDriverWait

from tests.dashboard.conftest import AGG_A

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ARTIFACTS = Path(settings.BASE_DIR) / "test-artifacts" / "dashboard"
# Debian's names; tests/conftest.py skips this module when either is missing.
CHROMIUM = "chromium"
CHROMEDRIVER = "chromedriver"


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which(CHROMIUM)
    for argument in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        "--window-size=1400,1000",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(shutil.which(CHROMEDRIVER)), options=options)
    driver.implicitly_wait(0)
    yield driver
    driver.quit()


def shot(browser, name):
    """Save a screenshot of the whole page (the window is stretched to the page's height)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    height = browser.execute_script("return document.documentElement.scrollHeight")
    chrome = browser.get_window_size()["height"] - browser.execute_script(
        "return window.innerHeight"
    )
    browser.set_window_size(1400, max(800, min(height, 4000)) + chrome)
    path = ARTIFACTS / f"{name}.png"
    browser.save_screenshot(str(path))
    browser.set_window_size(1400, 1000)
    return path


def wait_for(browser, css):
    return wait_until(browser, ec.presence_of_element_located((By.CSS_SELECTOR, css)))


# How Chromium says an element belonged to the page being replaced, when it does not say
# StaleElementReferenceException: an unhandled inspector error.
_GONE_WITH_ITS_PAGE = "does not belong to the document"


def wait_until(browser, condition, seconds=30):
    """Poll ``condition(browser)`` until it holds, across page loads: an element read just as
    its page is replaced is stale, which means "not yet", not a failure."""

    def settled(driver):
        try:
            return condition(driver)
        except WebDriverException as exc:
            if _GONE_WITH_ITS_PAGE in (exc.msg or ""):
                return False
            raise

    return WebDriverWait(
        browser, seconds, ignored_exceptions=(StaleElementReferenceException,)
    ).until(settled)


@pytest.fixture
def logged_in(browser, live_server, staff_user, cloud):
    browser.delete_all_cookies()
    browser.get(f"{live_server.url}/dashboard/")
    wait_for(browser, "#id_username")
    assert "/admin/login/" in browser.current_url
    browser.find_element(By.ID, "id_username").send_keys("operator")
    browser.find_element(By.ID, "id_password").send_keys("operator-password-1")
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    wait_for(browser, "#class-usage")
    return live_server.url


def test_operator_logs_in_and_sees_the_overview(browser, logged_in):
    assert browser.current_url == f"{logged_in}/dashboard/"
    # Just deployed: beat started seconds ago, no task has run yet. None is late.
    from django.utils import timezone

    from placementsite.models import ServiceProcess

    now = timezone.now()
    ServiceProcess.objects.create(kind="beat", name="host:1", started_at=now, last_seen=now)
    browser.refresh()
    wait_for(browser, "#tasks")
    states = browser.find_element(By.ID, "tasks").text
    assert "NOT YET DUE" in states.upper() and "LATE" not in states.upper()
    assert browser.find_element(By.TAG_NAME, "h1").text == "Capacity at a glance"
    rows = {
        row.find_elements(By.TAG_NAME, "td")[0].text: row.text
        for row in browser.find_elements(By.CSS_SELECTOR, "#class-usage tbody tr")
    }
    assert set(rows) == {"VCPU", "MEMORY_MB", "PCPU"}
    assert "30%" in rows["VCPU"] and "emptiest hosts" in rows["VCPU"]
    shares = browser.find_elements(By.CSS_SELECTOR, "#project-shares .share-bar")
    assert len(shares) == 3
    assert browser.find_element(By.CSS_SELECTOR, "#project-shares .share").size["width"] > 0
    css_loaded = browser.execute_script(
        "return getComputedStyle(document.querySelector('.topbar')).position"
    )
    assert css_loaded == "sticky"
    doc_shot(browser, "overview")


def test_operator_opens_every_page_from_the_navigation(browser, logged_in):
    expected = {
        "Providers": "Resource providers",
        "Consumers": "Consumers",
        "Projects": "Projects",
        "Resource classes": "Resource classes",
        "Traits": "Traits",
        "Aggregates": "Aggregates",
        "Try a request": "Try a request",
        "Overview": "Capacity at a glance",
    }
    for link, heading in expected.items():
        browser.find_element(By.LINK_TEXT, link).click()
        wait_until(browser, lambda b, h=heading: b.find_element(By.TAG_NAME, "h1").text == h)
        active = browser.find_element(By.CSS_SELECTOR, ".nav a.active").text
        assert active == link
        shot(browser, "page-" + link.lower().replace(" ", "-"))


def test_operator_filters_providers(browser, logged_in):
    browser.get(f"{logged_in}/dashboard/providers/")
    Select(browser.find_element(By.NAME, "resource_class")).select_by_visible_text("VCPU")
    Select(browser.find_element(By.NAME, "tree")).select_by_visible_text("Roots only")
    browser.find_element(By.NAME, "trait").send_keys("HW_CPU_X86_AVX2")
    browser.find_element(By.CSS_SELECTOR, "#provider-filters button[type=submit]").click()
    wait_until(browser, lambda b: "trait=HW_CPU_X86_AVX2" in b.current_url)
    names = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "table.grid td a.strong")]
    assert names == ["cn1"]
    assert "1 provider matches." in browser.find_element(By.CSS_SELECTOR, ".lead").text
    shot(browser, "providers-filtered")

    browser.find_element(By.LINK_TEXT, "cn1").click()
    wait_for(browser, "#inventories")
    assert browser.find_element(By.TAG_NAME, "h1").text == "cn1"
    tree = browser.find_element(By.ID, "tree").text.splitlines()
    assert tree[0].startswith("cn1") and "cn1-numa0" in tree
    assert "VCPU" in browser.find_element(By.ID, "inventories").text
    edit = browser.find_element(By.LINK_TEXT, "Edit in the admin").get_attribute("href")
    assert "/admin/providers/resourceprovider/" in edit and edit.endswith("/change/")
    shot(browser, "provider-cn1")

    browser.find_element(By.LINK_TEXT, "cn1-numa0").click()
    wait_for(browser, "#inventories")
    assert "PCPU" in browser.find_element(By.ID, "inventories").text
    shot(browser, "provider-cn1-numa0")


def test_operator_filters_providers_by_aggregate_and_clears(browser, logged_in):
    browser.get(f"{logged_in}/dashboard/providers/")
    browser.find_element(By.NAME, "aggregate").send_keys(str(AGG_A))
    browser.find_element(By.CSS_SELECTOR, "#provider-filters button[type=submit]").click()
    wait_until(browser, lambda b: "aggregate=" in b.current_url)
    names = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "table.grid td a.strong")]
    assert names == ["cn1"]
    browser.find_element(By.LINK_TEXT, "Clear").click()
    wait_until(browser, lambda b: "aggregate=" not in b.current_url)
    names = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "table.grid td a.strong")]
    assert names == ["cn1", "cn1-numa0", "cn2"]


def test_operator_tries_a_request_and_reads_why_providers_do_not_fit(browser, logged_in):
    browser.get(f"{logged_in}/dashboard/try/")
    browser.find_element(By.NAME, "resources").send_keys("VCPU:2,MEMORY_MB:2048")
    browser.find_element(By.NAME, "forbidden").send_keys("CUSTOM_MAINT")
    browser.find_element(By.NAME, "g1-resources").send_keys("PCPU:4")
    browser.find_element(By.CSS_SELECTOR, "button[name=submit]").click()
    wait_for(browser, "#group-unnumbered")

    unnumbered = browser.find_element(By.ID, "group-unnumbered")
    fits = [a.text for a in unnumbered.find_elements(By.CSS_SELECTOR, ".fits a.strong")]
    assert fits == []
    # The summary leads; the per-provider detail opens on a click.
    assert (
        "at most 1.5 GiB free, on cn1"
        in unnumbered.find_element(By.CSS_SELECTOR, ".nothing-fits").text
    )
    left_out = unnumbered.find_element(By.CSS_SELECTOR, ".left-out")
    assert not left_out.is_displayed()
    unnumbered.find_element(By.CSS_SELECTOR, ".left-out-details summary").click()
    left_out = left_out.text
    assert "short of MEMORY_MB by 512 (only 1536 free)" in left_out
    assert "short of MEMORY_MB by 1024 (only 1024 free)" in left_out
    assert "has forbidden trait CUSTOM_MAINT" in left_out
    assert "has no inventory of VCPU" in left_out

    group1 = browser.find_element(By.ID, "group-1")
    group1.find_element(By.CSS_SELECTOR, ".left-out-details summary").click()
    assert "short of PCPU by 2 (only 2 free)" in group1.text
    assert "one by one" in browser.find_element(By.ID, "scope-note").text
    # The form keeps what was asked.
    assert browser.find_element(By.NAME, "resources").get_attribute("value") == (
        "VCPU:2,MEMORY_MB:2048"
    )
    wait_for(browser, "#candidates")  # loaded after the page
    shot(browser, "try-a-request")


def test_operator_sees_candidates_spread_over_a_tree(browser, logged_in):
    browser.get(f"{logged_in}/dashboard/try/")
    browser.find_element(By.NAME, "resources").send_keys("VCPU:2,PCPU:2")
    browser.find_element(By.CSS_SELECTOR, "button[name=submit]").click()
    # The why-not report comes with the page; the candidates after it (try.js fetches them
    # and puts them in place of the progress line).
    wait_for(browser, "#group-unnumbered")
    wait_for(browser, "#candidates")
    wait_until(browser, lambda b: not b.find_elements(By.ID, "candidates-pending"))
    assert not browser.find_elements(By.ID, "candidates-load-error")
    # Above the groups' reports, where the page had its placeholder.
    assert browser.execute_script(
        "return document.getElementById('candidates').compareDocumentPosition("
        "document.getElementById('group-unnumbered')) & Node.DOCUMENT_POSITION_FOLLOWING"
    )
    rows = browser.find_elements(By.CSS_SELECTOR, "#candidates table.candidates tbody tr")
    assert len(rows) == 1  # one host
    assert rows[0].text.startswith("cn1 1 candidate")
    assert "cn1-numa0" in rows[0].text
    assert "VCPU 2" in rows[0].text and "PCPU 2" in rows[0].text
    shot(browser, "try-a-request-candidates")


def test_operator_sees_an_error_for_an_unknown_class(browser, logged_in):
    browser.get(f"{logged_in}/dashboard/try/")
    browser.find_element(By.NAME, "resources").send_keys("CUSTOM_NOPE:1")
    browser.find_element(By.CSS_SELECTOR, "button[name=submit]").click()
    error = wait_for(browser, "#try-error")
    assert error.text == "No such resource class: CUSTOM_NOPE"
    shot(browser, "try-a-request-error")


def test_operator_follows_a_consumer_from_a_provider(browser, logged_in, cloud):
    browser.get(f"{logged_in}/dashboard/providers/{cloud['cn2'].uuid}/")
    browser.find_element(By.LINK_TEXT, str(cloud["vm2"].uuid)).click()
    wait_for(browser, "#consumer-facts")
    facts = browser.find_element(By.ID, "consumer-facts").text
    assert "p1" in facts and "bob" in facts
    assert "cn2" in browser.find_element(By.ID, "allocations").text
    shot(browser, "consumer")


# --- second round: sorting, whole hosts, nested try, admin <-> dashboard, narrow window -------

DOCS = Path(settings.BASE_DIR) / "docs"


def doc_shot(browser, name):
    """A screenshot for docs/ (the README's pictures). It is always saved as a test artifact;
    docs/ is refreshed only with PLACEMENT_UPDATE_SCREENSHOTS=1, so a test run leaves the
    checkout as it found it."""
    path = shot(browser, name)
    if os.environ.get("PLACEMENT_UPDATE_SCREENSHOTS") == "1":
        DOCS.mkdir(exist_ok=True)
        shutil.copyfile(path, DOCS / f"dashboard-{name}.png")


@pytest.fixture
def numa_cloud(cloud):
    """The small cloud plus a host whose only VCPU is on its two NUMA children."""
    from tests.factories import make_allocation, make_consumer, make_provider

    host = make_provider("numa-host", inventories={"DISK_GB": 200})
    n0 = make_provider("numa-host-n0", parent=host, inventories={"VCPU": 16, "MEMORY_MB": 65536})
    n1 = make_provider("numa-host-n1", parent=host, inventories={"VCPU": 16, "MEMORY_MB": 65536})
    make_provider("disk-pool", inventories={"DISK_GB": 20000}, traits=["MISC_SHARES_VIA_AGGREGATE"])
    vm = make_consumer(project="p3", user="dave", consumer_type="INSTANCE")
    make_allocation(n0, vm, {"VCPU": 4, "MEMORY_MB": 8192})
    make_allocation(n1, vm, {"VCPU": 2})
    return host


def provider_names(browser):
    return [a.text for a in browser.find_elements(By.CSS_SELECTOR, "#providers td a.strong")]


def test_operator_sorts_hosts_by_free_vcpu_in_one_click(browser, logged_in, numa_cloud):
    browser.get(f"{logged_in}/dashboard/")
    row = [
        r
        for r in browser.find_elements(By.CSS_SELECTOR, "#class-usage tbody tr")
        if r.text.startswith("VCPU")
    ][0]
    row.find_element(By.LINK_TEXT, "emptiest hosts").click()
    wait_until(browser, lambda b: "sort=-free" in b.current_url)
    # numa-host: 32 - 6 = 26 free through its children; cn1: 16 - 4; cn2: 4 - 2.
    assert provider_names(browser) == ["numa-host", "cn1", "cn2", "disk-pool"]
    assert Select(browser.find_element(By.ID, "sort")).first_selected_option.text == (
        "most free VCPU first"
    )
    doc_shot(browser, "providers-sorted")
    # A header sorts too, and the order survives the filter form.
    browser.find_element(By.CSS_SELECTOR, "a.sort[data-sort=name]").click()
    wait_until(browser, lambda b: "sort=name" in b.current_url)
    assert provider_names(browser) == ["cn1", "cn2", "disk-pool", "numa-host"]
    browser.find_element(By.CSS_SELECTOR, "a.sort[data-sort=name]").click()
    wait_until(browser, lambda b: "sort=-name" in b.current_url)
    assert provider_names(browser) == ["numa-host", "disk-pool", "cn2", "cn1"]
    browser.find_element(By.CSS_SELECTOR, "#provider-filters button[type=submit]").click()
    wait_until(browser, lambda b: "tree=" in b.current_url)
    assert "sort=-name" in browser.current_url


def test_operator_sees_a_whole_host_with_its_numa_children(browser, logged_in, numa_cloud):
    browser.get(f"{logged_in}/dashboard/providers/?tree=root")
    row = [
        r
        for r in browser.find_elements(By.CSS_SELECTOR, "#providers tbody tr")
        if r.text.startswith("numa-host")
    ][0]
    assert "3 providers" in row.text and "whole tree" in row.text.lower()
    assert "VCPU" in row.text and "6 / 32" in row.text
    assert "MEMORY_MB" in row.text and "8 GiB / 128 GiB" in row.text
    row.find_element(By.LINK_TEXT, "numa-host").click()
    totals = wait_for(browser, "#tree-totals")
    vcpu = [
        " ".join(r.text.split())
        for r in totals.find_elements(By.CSS_SELECTOR, "tbody tr")
        if r.text.startswith("VCPU")
    ]
    assert vcpu == ["VCPU 2 32 0 32 6 26 19%"]
    tree = browser.find_element(By.ID, "tree").text
    assert "numa-host-n0" in tree and "4 / 16" in tree
    doc_shot(browser, "host")


def test_operator_tries_a_request_on_nested_hosts(browser, logged_in, numa_cloud):
    browser.get(f"{logged_in}/dashboard/try/")
    browser.find_element(By.NAME, "resources").send_keys("VCPU:8,MEMORY_MB:16384")
    browser.find_element(By.CSS_SELECTOR, "button[name=submit]").click()
    group = wait_for(browser, "#group-unnumbered")
    fits = group.find_element(By.CSS_SELECTOR, ".fits").text
    assert "numa-host" in fits and "numa-host-n0, numa-host-n1" in fits
    group.find_element(By.CSS_SELECTOR, ".left-out-details summary").click()
    left_out = group.find_element(By.CSS_SELECTOR, ".left-out").text
    assert "cn2" in left_out and "numa-host" not in left_out  # it fits through its children
    sharing = group.find_element(By.CSS_SELECTOR, ".sharing").text
    assert "disk-pool" in sharing and "lends to hosts of its aggregates" in sharing
    candidates = wait_for(browser, "#candidates").text  # loaded after the page
    # One host; its candidates take VCPU and memory from either child, or from both.
    assert "1 host in the first 20 candidates" in candidates
    assert "numa-host-n0 VCPU 8 MEMORY_MB 16 GiB" in candidates
    doc_shot(browser, "try-nested")


def test_operator_goes_from_admin_to_dashboard_and_back(browser, logged_in):
    browser.get(f"{logged_in}/admin/")
    browser.find_element(By.ID, "open-dashboard").click()
    wait_for(browser, "#class-usage")
    assert browser.current_url == f"{logged_in}/dashboard/"
    browser.find_element(By.ID, "admin-link").click()
    wait_until(browser, lambda b: b.current_url == f"{logged_in}/admin/")
    # The admin's own "View site" leads to the dashboard too.
    browser.find_element(By.CSS_SELECTOR, '#user-tools a[href="/dashboard/"]').click()
    wait_for(browser, "#class-usage")
    # An unknown page keeps the navigation: no dead end.
    browser.get(f"{logged_in}/dashboard/providers/00000000-0000-4000-8000-000000000000/")
    assert "No such resource provider." in wait_for(browser, "#error").text
    browser.find_element(By.LINK_TEXT, "Providers").click()
    wait_until(browser, lambda b: b.find_element(By.TAG_NAME, "h1").text == "Resource providers")


def test_narrow_window_folds_the_menu_and_keeps_tables_inside(browser, logged_in, numa_cloud):
    browser.set_window_size(800, 900)
    try:
        browser.get(f"{logged_in}/dashboard/providers/")
        wait_for(browser, "#providers")
        nav = browser.find_element(By.CSS_SELECTOR, ".nav")
        assert not nav.is_displayed()
        browser.find_element(By.CSS_SELECTOR, ".menu-button").click()
        assert nav.is_displayed()
        assert browser.find_element(By.LINK_TEXT, "Try a request").is_displayed()
        # Nothing spills out of the page sideways: wide tables scroll inside their card.
        spill = browser.execute_script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert spill <= 0
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(ARTIFACTS / "narrow.png"))
        if os.environ.get("PLACEMENT_UPDATE_SCREENSHOTS") == "1":  # as doc_shot: on request
            shutil.copyfile(ARTIFACTS / "narrow.png", DOCS / "dashboard-narrow.png")
    finally:
        browser.set_window_size(1400, 1000)


def test_dark_mode_follows_the_system_setting(browser, logged_in):
    browser.execute_cdp_cmd(
        "Emulation.setEmulatedMedia",
        {"features": [{"name": "prefers-color-scheme", "value": "dark"}]},
    )
    try:
        browser.get(f"{logged_in}/dashboard/")
        wait_for(browser, "#class-usage")
        background = browser.execute_script(
            "return getComputedStyle(document.body).backgroundColor"
        )
        assert background == "rgb(15, 21, 28)"  # --bg of the dark palette
        doc_shot(browser, "dark")
    finally:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
