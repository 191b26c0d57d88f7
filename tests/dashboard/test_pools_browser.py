"""The Pools page in a real headless Chromium: an operator follows the menu to the pools,
reads a pool's capacity, usage, members and changes, and goes from a member to its host page
and back. Saves ``pools.png`` (``docs/dashboard-pools.png`` with
PLACEMENT_UPDATE_SCREENSHOTS=1)."""

import uuid

import pytest
from selenium.webdriver.common.by import By

from tests.conftest import PlacementClient
from tests.dashboard.test_browser import (  # noqa: F401
    browser,
    doc_shot,
    logged_in,
    wait_for,
    wait_until,
)
from tests.providers.pools import ceph, provider, put_host, put_pool, sync_all

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def pools(settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = ["vcpu", "memory", "disk"]
    settings.PLACEMENT_SYNC_ON_REPORT = False
    api = PlacementClient(version="latest")
    for name in ("compute-01", "compute-02", "compute-03"):
        put_host(api, name, disk_pool="ceph-ssd")
    put_host(api, "compute-04")
    put_pool(api, "ceph-ssd", ceph(total=20000, members=[]))
    put_pool(
        api,
        "provider-net",
        {
            "kind": "ip_pool",
            "inventories": {"IPV4_ADDRESS": {"total": 254, "reserved": 4}},
            "members": ["compute-03", "compute-04"],
        },
    )
    sync_all()
    put_pool(api, "ceph-ssd", ceph(total=24000, members=[]))
    sync_all()
    for pool, amounts in (("ceph-ssd", {"DISK_GB": 7400}), ("provider-net", {"IPV4_ADDRESS": 61})):
        body = {
            "allocations": {provider(api, pool)["uuid"]: {"resources": amounts}},
            "project_id": "p1",
            "user_id": "alice",
            "consumer_generation": None,
            "consumer_type": "INSTANCE",
        }
        assert api.put(f"/allocations/{uuid.uuid4()}", body).status == 204
    put_pool(api, "nfs-archive", ceph(total=50000, members=[]))
    api.request(
        "PATCH", "/api/resource-pools/nfs-archive/", {"enabled": False, "disabled_reason": "drain"}
    )
    return api


def test_operator_reads_the_pools_and_follows_a_member(browser, logged_in, pools):  # noqa: F811
    browser.find_element(By.LINK_TEXT, "Pools").click()
    wait_until(browser, lambda b: b.find_element(By.TAG_NAME, "h1").text == "Resource pools")
    ceph_ssd = wait_for(browser, '[data-pool="ceph-ssd"]')
    text = ceph_ssd.text
    assert "shared_storage" in text.lower() and "up" in text.lower()
    assert "7.4 TB" in text and "16.6 TB" in text
    assert "compute-01, compute-02, compute-03" in text
    assert "20000 → 24000" in text
    assert "compute-04" in browser.find_element(By.CSS_SELECTOR, '[data-pool="provider-net"]').text
    archive = browser.find_element(By.CSS_SELECTOR, '[data-pool="nfs-archive"]').text.lower()
    assert "disabled" in archive and "drain" in archive
    bar = ceph_ssd.find_element(By.CSS_SELECTOR, ".bar span")
    assert bar.size["width"] > 0
    doc_shot(browser, "pools")

    ceph_ssd.find_element(By.LINK_TEXT, "compute-02").click()
    wait_for(browser, "#host-pools")
    assert browser.find_element(By.TAG_NAME, "h1").text == "compute-02"
    browser.find_element(By.CSS_SELECTOR, "#host-pools a").click()
    wait_until(browser, lambda b: b.current_url.endswith("/dashboard/pools/#pool-ceph-ssd"))
