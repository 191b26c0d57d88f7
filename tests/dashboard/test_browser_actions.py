"""Third round in headless Chromium: the actions (settle a move, disable, enable and resync a
host) and the regressions (the Hosts page's navigation, the Flavors page's schedule link, no
CSRF token in Explain's URL, reasons grouped, one history sample drawn)."""

import pytest
from django.contrib.auth import get_user_model
from selenium.webdriver.common.by import By

from providers.models import ComputeNode
from providers.services.compute_nodes import compute_node_report
from providers.services.host_sync import compute_nodes_sync
from scheduling.models import Flavor, Migration
from scheduling.services.migrations import server_move
from scheduling.services.servers import servers_create
from tests.dashboard.test_browser import (  # noqa: F401
    browser,
    doc_shot,
    shot,
    wait_for,
    wait_until,
)
from tests.providers.hosts import report

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def root_in(browser, live_server, settings):  # noqa: F811
    """The browser logged in as a superuser (who holds every action's permission)."""
    settings.PLACEMENT_RESOURCE_PLUGINS = ["vcpu", "memory", "disk"]
    get_user_model().objects.create_superuser("root", password="root-password-1")
    browser.delete_all_cookies()
    browser.get(f"{live_server.url}/admin/login/?next=/dashboard/")
    wait_for(browser, "#id_username").send_keys("root")
    browser.find_element(By.ID, "id_password").send_keys("root-password-1")
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    wait_for(browser, "#class-usage")
    return live_server.url


@pytest.fixture
def hosts(settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = ["vcpu", "memory", "disk"]
    for name in ("compute-1", "compute-2", "compute-3"):
        compute_node_report(hostname=name, report=report())
    compute_nodes_sync()
    return {n.hostname: n for n in ComputeNode.objects.select_related("provider")}


@pytest.fixture
def flavor(db):
    return Flavor.objects.create(name="m1.small", vcpus=2, ram=2048, disk=10)


def _text(driver, css):
    return " ".join(driver.find_element(By.CSS_SELECTOR, css).text.split())


def test_hosts_page_has_the_navigation_and_styled_states(browser, root_in, hosts):  # noqa: F811
    browser.get(f"{root_in}/dashboard/hosts/")
    wait_for(browser, "#hosts")
    assert browser.find_element(By.CSS_SELECTOR, ".nav a.active").text == "Hosts"
    assert browser.find_element(By.CSS_SELECTOR, ".site-search input").is_displayed()
    badge = browser.find_element(By.CSS_SELECTOR, "#hosts .badge.ok")
    radius = browser.execute_script("return getComputedStyle(arguments[0]).borderRadius", badge)
    assert radius != "0px"  # styled by the dashboard's CSS
    shot(browser, "hosts")


def test_operator_confirms_a_move_from_the_migrations_page(
    browser,  # noqa: F811
    root_in,
    hosts,
    flavor,
):
    (server,) = servers_create(name="web-1", flavor=flavor, project_id="p", user_id="u")
    migration = server_move(server=server, kind="migrate")
    browser.get(f"{root_in}/dashboard/migrations/")
    row = wait_for(browser, "#in-flight tbody tr")
    assert "web-1" in row.text and "migrating" in row.text
    doc_shot(browser, "migrations")
    row.find_element(By.CSS_SELECTOR, "button[data-action=confirm]").click()
    message = wait_for(browser, "#messages")
    assert "The migrate of web-1 is confirmed." in message.text
    assert "No move in flight." in _text(browser, "#in-flight")
    assert Migration.objects.get(pk=migration.pk).status == "confirmed"


def test_operator_disables_a_host_with_a_reason_resyncs_and_enables_it(
    browser,  # noqa: F811
    root_in,
    hosts,
):
    page = f"{root_in}/dashboard/providers/{hosts['compute-2'].provider.uuid}/"
    browser.get(page)
    form = wait_for(browser, "#host-disable")
    form.find_element(By.NAME, "reason").send_keys("replacing a DIMM")
    form.find_element(By.CSS_SELECTOR, "button").click()
    wait_until(browser, lambda b: b.find_elements(By.ID, "host-enable"))
    assert "compute-2 is disabled: replacing a DIMM" in _text(browser, "#messages")
    assert _text(browser, "#disabled-reason") == "replacing a DIMM"
    doc_shot(browser, "host-actions")
    browser.find_element(By.CSS_SELECTOR, "#host-resync button").click()
    wait_until(browser, lambda b: "resynced" in _text(b, "#messages"))
    assert "compute-2 resynced: ok" in _text(browser, "#messages")
    browser.find_element(By.CSS_SELECTOR, "#host-enable button").click()
    wait_until(browser, lambda b: b.find_elements(By.ID, "host-disable"))
    assert "compute-2 is enabled." in _text(browser, "#messages")
    node = ComputeNode.objects.get(hostname="compute-2")
    assert (node.enabled, node.disabled_reason) == (True, "")


def test_schedule_link_prefills_and_explain_groups_reasons_without_a_token_in_the_url(
    browser,  # noqa: F811
    root_in,
    hosts,
    flavor,
):
    browser.get(f"{root_in}/dashboard/flavors/")
    browser.find_element(By.LINK_TEXT, "schedule").click()
    wait_for(browser, "#schedule-form")
    assert not browser.find_elements(By.CSS_SELECTOR, "#schedule-form .error")
    assert browser.find_element(By.NAME, "name").get_attribute("value") == "server"
    browser.find_element(By.NAME, "ignore_hosts").send_keys("compute-1, compute-2")
    browser.find_element(By.ID, "explain-button").click()
    wait_until(browser, lambda b: "explain=1" in b.current_url)
    assert "csrfmiddlewaretoken" not in browser.current_url
    group = wait_for(browser, "#filters details.dropped-group")
    assert "is in ignore_hosts 2 hosts" in " ".join(group.text.split())
    group.find_element(By.TAG_NAME, "summary").click()
    assert "compute-1, compute-2" in group.find_element(By.CSS_SELECTOR, ".dropped-hosts").text
    assert "compute-3" in _text(browser, "#weighed")
    doc_shot(browser, "schedule")
    browser.find_element(By.ID, "create-button").click()
    created = wait_for(browser, "#created")
    assert "compute-3" in created.text


def test_a_single_history_sample_is_drawn(browser, root_in, hosts):  # noqa: F811
    from allocations.tasks import sample_usage

    sample_usage.apply()
    browser.get(f"{root_in}/dashboard/providers/{hosts['compute-1'].provider.uuid}/")
    chart = wait_for(browser, '.history-chart[data-class="VCPU"]')
    assert "one sample so far" in chart.text
    dot = chart.find_element(By.CSS_SELECTOR, "circle.dot-used")
    assert dot.size["width"] > 0 and dot.size["height"] > 0


def test_fits_are_counted_after_the_page_for_every_flavor(
    browser,  # noqa: F811
    root_in,
    hosts,
    flavor,
):
    Flavor.objects.create(name="m1.huge", vcpus=16, ram=65536, disk=400)
    browser.get(f"{root_in}/dashboard/flavors/")
    wait_for(browser, "#flavors")
    wait_until(browser, lambda b: not b.find_element(By.ID, "fits-progress").is_displayed())
    counts = {
        row.find_element(By.TAG_NAME, "td").text.split()[0]: row.find_element(
            By.CSS_SELECTOR, ".fits"
        ).text
        for row in browser.find_elements(By.CSS_SELECTOR, "#flavors tbody tr")
    }
    # Three hosts of 16 VCPU (ratio 16), 64 GiB (ratio 1.5, 512 MiB reserved), 500 GB.
    # m1.small (2 VCPU, 2 GiB, 10 GB): 47 a host by memory; m1.huge (64 GiB): one a host.
    assert counts == {"m1.small": "141", "m1.huge": "3"}
    browser.get(f"{root_in}/dashboard/")
    wait_until(browser, lambda b: not b.find_element(By.ID, "fits-progress").is_displayed())
    assert "fits 141 more" in _text(browser, "#flavor-fits")
    doc_shot(browser, "overview-fits")
