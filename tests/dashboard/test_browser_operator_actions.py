"""The actions that came with their own API endpoints, in headless Chromium: an operator
drains a host and finishes the live migrations it started, manages server groups and takes a
resource pool out of scheduling, puts it back and deletes an unused one. Saves
``drain.png``, ``server-groups.png`` and ``pool-actions.png`` (``docs/dashboard-*.png`` with
PLACEMENT_UPDATE_SCREENSHOTS=1)."""

import pytest
from selenium.webdriver.common.by import By

from providers.models import ComputeNode, ResourcePool
from scheduling.models import Migration, ServerGroup
from scheduling.services.servers import servers_create
from tests.dashboard.test_browser import browser, doc_shot, wait_for, wait_until  # noqa: F401
from tests.dashboard.test_browser_actions import flavor, hosts, root_in  # noqa: F401
from tests.dashboard.test_operator_actions import eager_tasks  # noqa: F401
from tests.dashboard.test_pools_browser import pools  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _text(driver, css):
    return " ".join(driver.find_element(By.CSS_SELECTOR, css).text.split())


def _wait_text(driver, css, text):
    """Until the element ``css`` exists and shows ``text`` (a page load after a POST)."""
    wait_until(
        driver,
        lambda b: any(
            text in " ".join(e.text.split()) for e in b.find_elements(By.CSS_SELECTOR, css)
        ),
    )


def test_operator_drains_a_host_and_finishes_its_live_migrations(
    browser,  # noqa: F811
    root_in,  # noqa: F811
    hosts,  # noqa: F811
    flavor,  # noqa: F811
    eager_tasks,  # noqa: F811 (the drain's worker, in the live server's request)
):
    for name in ("web-1", "web-2"):
        servers_create(
            name=name,
            flavor=flavor,
            project_id="p",
            user_id="u",
            hints={"target_host": "compute-1"},
        )
    browser.get(f"{root_in}/dashboard/providers/{hosts['compute-1'].provider.uuid}/")
    form = wait_for(browser, "#host-drain")
    form.find_element(By.NAME, "reason").send_keys("kernel upgrade")
    form.find_element(By.CSS_SELECTOR, "button").click()
    _wait_text(browser, "#messages", "draining")
    assert browser.current_url == f"{root_in}/dashboard/migrations/"
    assert (
        "compute-1 is disabled (kernel upgrade) and draining: a worker is moving its 2 servers off."
        in _text(browser, "#messages")
    )
    assert "compute-1 (kernel upgrade): 2 servers moving, 0 not moved" in _text(browser, "#history")
    rows = browser.find_elements(By.CSS_SELECTOR, "#in-flight tbody tr")
    assert len(rows) == 2 and all("live-migrate" in r.text for r in rows)
    # A live migration is finished or reverted, never confirmed.
    for row in rows:
        actions = [b.get_attribute("data-action") for b in row.find_elements(By.TAG_NAME, "button")]
        assert actions == ["finish", "revert"]
    doc_shot(browser, "drain")
    rows[0].find_element(By.CSS_SELECTOR, "button[data-action=finish]").click()
    _wait_text(browser, "#messages", "completed")
    assert "is completed." in _text(browser, "#messages")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#in-flight tbody tr")) == 1
    node = ComputeNode.objects.get(hostname="compute-1")
    assert (node.enabled, node.disabled_reason) == (False, "kernel upgrade")
    assert sorted(Migration.objects.values_list("status", flat=True)) == ["completed", "migrating"]


def test_operator_creates_a_server_group_sees_its_members_and_deletes_it(
    browser,  # noqa: F811
    root_in,  # noqa: F811
    hosts,  # noqa: F811
    flavor,  # noqa: F811
):
    browser.find_element(By.LINK_TEXT, "Server groups").click()
    form = wait_for(browser, "#server-group-create")
    form.find_element(By.NAME, "name").send_keys("web-tier")
    form.find_element(By.CSS_SELECTOR, "select[name=policy] option[value=anti-affinity]").click()
    form.find_element(By.NAME, "max_server_per_host").send_keys("1")
    form.find_element(By.NAME, "project_id").send_keys("p")
    form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    _wait_text(browser, "#messages", "is created")
    assert "Server group web-tier (anti-affinity) is created." in _text(browser, "#messages")
    group = ServerGroup.objects.get(name="web-tier")
    for name in ("web-1", "web-2"):
        servers_create(name=name, flavor=flavor, project_id="p", user_id="u", group=group)
    browser.refresh()
    row = wait_for(browser, '#server-groups tr[data-group="web-tier"]')
    members = row.find_elements(By.CSS_SELECTOR, ".members a")
    names = [a.text for a in members]
    assert names[0::2] == ["web-1", "web-2"]  # each server, then its host
    assert names[1] != names[3]  # anti-affinity: two hosts
    assert "max 1 per host" in row.text
    doc_shot(browser, "server-groups")
    row.find_element(By.CSS_SELECTOR, "button[data-action=delete]").click()
    _wait_text(browser, "#messages", "is deleted")
    assert not browser.find_elements(By.CSS_SELECTOR, '#server-groups tr[data-group="web-tier"]')
    assert not ServerGroup.objects.exists()


def test_operator_disables_enables_and_deletes_pools(
    browser,  # noqa: F811
    root_in,  # noqa: F811
    pools,  # noqa: F811
):
    browser.get(f"{root_in}/dashboard/pools/")
    ceph = wait_for(browser, "#pool-ceph-ssd")
    # In use: it cannot be deleted, and says so; the unused archive can.
    assert not ceph.find_elements(By.CSS_SELECTOR, ".pool-delete")
    assert "In use" in ceph.find_element(By.CSS_SELECTOR, ".pool-in-use").text
    form = ceph.find_element(By.CSS_SELECTOR, ".pool-disable")
    form.find_element(By.NAME, "reason").send_keys("array firmware upgrade")
    form.find_element(By.CSS_SELECTOR, "button").click()
    _wait_text(browser, "#messages", "is disabled")
    assert "Pool ceph-ssd is disabled: array firmware upgrade" in _text(browser, "#messages")
    assert "array firmware upgrade" in _text(browser, "#pool-ceph-ssd h2")
    doc_shot(browser, "pool-actions")
    browser.find_element(By.CSS_SELECTOR, "#pool-ceph-ssd .pool-enable button").click()
    _wait_text(browser, "#messages", "is enabled")
    assert ResourcePool.objects.get(name="ceph-ssd").enabled
    browser.find_element(By.CSS_SELECTOR, "#pool-nfs-archive .pool-delete button").click()
    _wait_text(browser, "#messages", "is deleted")
    assert not browser.find_elements(By.ID, "pool-nfs-archive")
    assert not ResourcePool.objects.filter(name="nfs-archive").exists()
