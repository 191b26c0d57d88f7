"""Dashboard: a host's device units and who holds each (its provider page, and a device's
own), a server's devices on its consumer page; and the same in a real headless Chromium."""

import pytest
from selenium.webdriver.common.by import By

from tests.conftest import PlacementClient
from tests.dashboard.test_browser import browser, shot, wait_for  # noqa: F401  (fixture)
from tests.providers.devices import PLUGINS, boot, host_report, pf, provider_uuid, report_and_sync
from tests.scheduling.scheduler_helpers import make_flavor

VFS = ["0000:81:00.1", "0000:81:00.2"]


@pytest.fixture(autouse=True)
def plugins(settings):
    settings.PLACEMENT_RESOURCE_PLUGINS = PLUGINS


@pytest.fixture
def device_host(db):
    """d1 with a PF of two VFs, one held by a server; ``(api, server)``."""
    api = PlacementClient(version="latest")
    report_and_sync(api, "d1", host_report([pf(vfs=VFS)]))
    make_flavor(api, "vf.f", vcpus=1, ram=512, disk=1, extra_specs={"resources:SRIOV_NET_VF": "1"})
    return api, boot(api, "vf.f").json["servers"][0]


@pytest.mark.django_db
def test_the_host_page_lists_every_unit_and_its_holder(staff, device_host):
    api, server = device_host
    held = server["devices"][0]["address"]
    free = next(a for a in VFS if a != held)

    page = staff.get(f"/dashboard/providers/{provider_uuid(api, 'd1')}/")

    assert page.status_code == 200
    units = {u["address"]: u for u in page.context["detail"].devices}
    assert units[held]["consumer"] == server["id"]
    assert units[free]["consumer"] is None
    html = page.content.decode()
    assert 'id="device-units"' in html
    assert f'href="/dashboard/consumers/{server["id"]}/"' in html
    assert "d1_pci_0000_81_00_0" in html


@pytest.mark.django_db
def test_a_numa_cells_page_has_no_device_table_and_a_devices_page_its_own_units(staff, device_host):
    api, _server = device_host
    cell = staff.get(f"/dashboard/providers/{provider_uuid(api, 'd1_NUMA0')}/")
    assert 'id="device-units"' not in cell.content.decode()
    device = staff.get(f"/dashboard/providers/{provider_uuid(api, 'd1_pci_0000_81_00_0')}/")
    assert sorted(u["address"] for u in device.context["detail"].devices) == VFS


@pytest.mark.django_db
def test_the_consumer_page_shows_the_servers_devices(staff, device_host):
    _api, server = device_host

    page = staff.get(f"/dashboard/consumers/{server['id']}/")

    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="consumer-devices"' in html
    assert server["devices"][0]["address"] in html
    assert "0000:81:00.0" in html


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_operator_follows_a_vf_to_the_server_holding_it(
    browser,  # noqa: F811
    live_server,
    staff_user,
    device_host,
):
    api, server = device_host
    browser.delete_all_cookies()
    browser.get(f"{live_server.url}/dashboard/")
    wait_for(browser, "#id_username")
    browser.find_element(By.ID, "id_username").send_keys("operator")
    browser.find_element(By.ID, "id_password").send_keys("operator-password-1")
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    wait_for(browser, "#class-usage")

    browser.get(f"{live_server.url}/dashboard/providers/{provider_uuid(api, 'd1')}/")
    table = wait_for(browser, "#device-units")
    rows = [r.text for r in table.find_elements(By.CSS_SELECTOR, "tbody tr")]
    assert len(rows) == 2
    assert any("free" in r for r in rows)
    shot(browser, "host-devices")

    browser.find_element(By.LINK_TEXT, server["id"]).click()
    devices = wait_for(browser, "#consumer-devices")
    assert server["devices"][0]["address"] in devices.text
    shot(browser, "consumer-devices")
