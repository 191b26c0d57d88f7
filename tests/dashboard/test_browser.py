"""The dashboard in a real headless Chromium (Debian's chromium + chromium-driver, Selenium).

Each test logs in through the admin login form, drives the pages like an
operator and saves screenshots under test-artifacts/dashboard/.
"""

import shutil
from pathlib import Path

import pytest
from django.conf import settings
from selenium import webdriver
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
    return WebDriverWait(browser, 10).until(ec.presence_of_element_located((By.CSS_SELECTOR, css)))


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
    assert browser.find_element(By.TAG_NAME, "h1").text == "Capacity at a glance"
    rows = {
        row.find_elements(By.TAG_NAME, "td")[0].text: row.text
        for row in browser.find_elements(By.CSS_SELECTOR, "#class-usage tbody tr")
    }
    assert set(rows) == {"VCPU", "MEMORY_MB", "PCPU"}
    assert rows["VCPU"].endswith("30%")
    bars = browser.find_elements(By.CSS_SELECTOR, "#utilisation-chart rect.fill")
    assert len(bars) == 3
    assert bars[0].size["width"] > 0
    css_loaded = browser.execute_script(
        "return getComputedStyle(document.querySelector('.topbar')).position"
    )
    assert css_loaded == "sticky"
    shot(browser, "overview")


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
        WebDriverWait(browser, 10).until(
            lambda b, h=heading: b.find_element(By.TAG_NAME, "h1").text == h
        )
        active = browser.find_element(By.CSS_SELECTOR, ".nav a.active").text
        assert active == link
        shot(browser, "page-" + link.lower().replace(" ", "-"))


def test_operator_filters_providers(browser, logged_in):
    browser.get(f"{logged_in}/dashboard/providers/")
    Select(browser.find_element(By.NAME, "resource_class")).select_by_visible_text("VCPU")
    Select(browser.find_element(By.NAME, "tree")).select_by_visible_text("Roots only")
    browser.find_element(By.NAME, "trait").send_keys("HW_CPU_X86_AVX2")
    browser.find_element(By.CSS_SELECTOR, "#provider-filters button[type=submit]").click()
    WebDriverWait(browser, 10).until(lambda b: "trait=HW_CPU_X86_AVX2" in b.current_url)
    names = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "table.grid td a.strong")]
    assert names == ["cn1"]
    assert "1 provider matches." in browser.find_element(By.CSS_SELECTOR, ".lead").text
    shot(browser, "providers-filtered")

    browser.find_element(By.LINK_TEXT, "cn1").click()
    wait_for(browser, "#inventories")
    assert browser.find_element(By.TAG_NAME, "h1").text == "cn1"
    tree = browser.find_element(By.ID, "tree").text.splitlines()
    assert tree[0].startswith("cn1") and tree[1] == "cn1-numa0"
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
    WebDriverWait(browser, 10).until(lambda b: "aggregate=" in b.current_url)
    names = [a.text for a in browser.find_elements(By.CSS_SELECTOR, "table.grid td a.strong")]
    assert names == ["cn1"]
    browser.find_element(By.LINK_TEXT, "Clear").click()
    WebDriverWait(browser, 10).until(lambda b: "aggregate=" not in b.current_url)
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
    left_out = unnumbered.find_element(By.CSS_SELECTOR, ".left-out").text
    assert "short of MEMORY_MB by 512 (only 1536 free)" in left_out
    assert "short of MEMORY_MB by 1024 (only 1024 free)" in left_out
    assert "has forbidden trait CUSTOM_MAINT" in left_out
    assert "has no inventory of VCPU" in left_out

    group1 = browser.find_element(By.ID, "group-1")
    assert "short of PCPU by 2 (only 2 free)" in group1.text
    assert "one by one" in browser.find_element(By.ID, "scope-note").text
    # The form keeps what was asked.
    assert browser.find_element(By.NAME, "resources").get_attribute("value") == (
        "VCPU:2,MEMORY_MB:2048"
    )
    shot(browser, "try-a-request")


def test_operator_sees_candidates_spread_over_a_tree(browser, logged_in):
    browser.get(f"{logged_in}/dashboard/try/")
    browser.find_element(By.NAME, "resources").send_keys("VCPU:2,PCPU:2")
    browser.find_element(By.CSS_SELECTOR, "button[name=submit]").click()
    wait_for(browser, "#candidates")
    rows = browser.find_elements(By.CSS_SELECTOR, "#candidates table.candidates tbody tr")
    assert len(rows) == 1
    assert "cn1" in rows[0].text and "cn1-numa0" in rows[0].text
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
