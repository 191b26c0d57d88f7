"""/metrics: Prometheus text with django-prometheus's series and the service's own."""

import pytest
from celery import shared_task
from prometheus_client.parser import text_string_to_metric_families

from placementsite.tasks import HEARTBEAT_TASK, heartbeat
from tests.allocations.helpers import body
from tests.conftest import new_uuid

pytestmark = pytest.mark.django_db


@shared_task(name="tests.observability.fails")
def failing_task():
    raise ValueError("this task always fails")


def scrape(api, token="admin", **kw):
    response = api.get("/metrics", token=token, **kw)
    assert response.status == 200, response
    return response


def samples(response):
    """{(name, frozenset(labels.items())): value} of a scrape."""
    found = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            found[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return found


def value(response, name, **labels):
    return samples(response).get((name, frozenset(labels.items())), 0.0)


def provider_with_inventory(api, name, inventories):
    rp = api.post("/resource_providers", {"name": name}).json
    api.put(
        f"/resource_providers/{rp['uuid']}/inventories",
        {"resource_provider_generation": rp["generation"], "inventories": inventories},
    )
    return rp["uuid"]


def test_metrics_with_an_admin_token_is_prometheus_text(api):
    response = scrape(api)
    assert response.headers["Content-Type"].startswith("text/plain; version=")
    text = response.content.decode()
    assert "# TYPE placement_resource_capacity gauge" in text
    # django-prometheus: requests and database queries.
    assert "# TYPE django_http_requests_total_by_method_total counter" in text
    assert "django_db_execute_total" in text


def test_capacity_usage_and_free_per_resource_class(api):
    rp = provider_with_inventory(
        api,
        "cn1",
        {
            "VCPU": {"total": 8, "reserved": 2, "allocation_ratio": 4.0},
            "MEMORY_MB": {"total": 4096},
        },
    )
    provider_with_inventory(api, "cn2", {"VCPU": {"total": 4}})
    assert (
        api.put(f"/allocations/{new_uuid()}", body({rp: {"VCPU": 5, "MEMORY_MB": 1024}})).status
        == 204
    )
    response = scrape(api)
    assert value(response, "placement_resource_capacity", resource_class="VCPU") == 24 + 4
    assert value(response, "placement_resource_used", resource_class="VCPU") == 5
    assert value(response, "placement_resource_free", resource_class="VCPU") == 23
    assert value(response, "placement_resource_total", resource_class="VCPU") == 12
    assert value(response, "placement_resource_inventories", resource_class="VCPU") == 2
    assert value(response, "placement_resource_free", resource_class="MEMORY_MB") == 3072
    assert ("placement_resource_capacity", frozenset({("resource_class", "DISK_GB")})) not in (
        samples(response)
    )


def test_allocation_candidates_latency_and_count(api):
    provider_with_inventory(api, "cn1", {"VCPU": {"total": 8}})
    provider_with_inventory(api, "cn2", {"VCPU": {"total": 8}})
    before = scrape(api)
    for _ in range(3):
        assert api.get("/allocation_candidates?resources=VCPU:1").status == 200
    after = scrape(api)
    count = "placement_allocation_candidates_seconds_count"
    assert value(after, count) - value(before, count) == 3
    returned = "placement_allocation_candidates_returned_sum"
    assert value(after, returned) - value(before, returned) == 6
    bucket = "placement_allocation_candidates_returned_bucket"
    assert value(after, bucket, le="1.0") == value(before, bucket, le="1.0")
    assert value(after, bucket, le="5.0") - value(before, bucket, le="5.0") == 3


def test_allocation_write_conflicts_are_counted_by_code(api):
    rp = provider_with_inventory(api, "cn1", {"VCPU": {"total": 2}})
    consumer = new_uuid()
    before = scrape(api)
    assert api.put(f"/allocations/{consumer}", body({rp: {"VCPU": 1}})).status == 204
    stale = api.put(f"/allocations/{consumer}", body({rp: {"VCPU": 1}}, generation=0))
    assert stale.error_code == "placement.concurrent_update"
    over = api.put(f"/allocations/{new_uuid()}", body({rp: {"VCPU": 5}}))
    assert over.status == 409
    after = scrape(api)
    name = "placement_allocation_write_conflicts_total"
    for code in ("placement.concurrent_update", over.error_code):
        assert value(after, name, code=code) - value(before, name, code=code) == 1


def test_celery_task_runs_durations_and_failures(api):
    before = scrape(api)
    heartbeat.apply()
    heartbeat.apply()
    failing_task.apply()
    after = scrape(api)

    def delta(name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)

    assert delta("placement_celery_task_runs_total", task=HEARTBEAT_TASK, state="SUCCESS") == 2
    assert delta("placement_celery_task_seconds_count", task=HEARTBEAT_TASK) == 2
    assert delta("placement_celery_task_failures_total", task=HEARTBEAT_TASK) == 0
    failing = "tests.observability.fails"
    assert delta("placement_celery_task_failures_total", task=failing) == 1
    assert delta("placement_celery_task_runs_total", task=failing, state="FAILURE") == 1


def test_metrics_need_a_token_by_default(api):
    response = api.get("/metrics", token=None)
    assert response.status == 401
    assert response.error["title"] == "Unauthorized"


def test_metrics_accept_the_monitoring_role(api):
    scrape(api, token="prometheus:ops", headers={"X-Roles": "monitoring"})


@pytest.mark.parametrize("defaults", ["secure", "legacy", "admin-only"])
@pytest.mark.parametrize("roles", ["reader", "member", "service", "observer"])
def test_metrics_refuse_other_roles(api, settings, defaults, roles):
    settings.PLACEMENT_POLICY_DEFAULTS = defaults
    response = api.get("/metrics", token="ur:projR", headers={"X-Roles": roles})
    assert response.status == 403
    assert "placement:metrics" in response.error["detail"]


def test_metrics_refuse_a_system_scoped_admin(api):
    response = api.get("/metrics", headers={"OpenStack-System-Scope": "all"})
    assert response.status == 403


def test_metrics_rule_comes_from_the_policy_file(api, policy_file):
    policy_file({"placement:metrics": "role:reader"})
    scrape(api, token="ur:projR", headers={"X-Roles": "reader"})


def test_metrics_are_redirected_to_https_like_every_page(api, settings):
    settings.SECURE_SSL_REDIRECT = True
    response = api.get("/metrics")
    assert response.status == 301
    assert response.headers["Location"].startswith("https://")


def test_metrics_open_need_no_token(api, settings):
    settings.PLACEMENT_METRICS = "open"
    scrape(api, token=None)


def test_metrics_off_are_not_found(api, settings):
    settings.PLACEMENT_METRICS = "off"
    response = api.get("/metrics")
    assert response.status == 404
    assert response.error["title"] == "Not Found"


def test_multiprocess_mode_sums_the_series_of_every_worker(tmp_path):
    """With PROMETHEUS_MULTIPROC_DIR, a scrape of one worker counts what every worker saw."""
    import os
    import subprocess
    import sys

    from django.conf import settings

    env = {
        **os.environ,
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path),
        "DJANGO_SETTINGS_MODULE": "placementsite.settings",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
    }
    setup = (
        "import django; django.setup(); from placementsite.observability import metrics; "
        "from scheduling.metrics import observe_candidates; "
    )
    observe = "observe_candidates(0.1, 3); "
    subprocess.run(
        [sys.executable, "-c", setup + observe],
        env=env,
        cwd=settings.BASE_DIR,
        check=True,
        timeout=120,
    )
    # Another worker observes too, then answers the scrape.
    scrape = subprocess.run(
        [sys.executable, "-c", setup + observe + "print(metrics.exposition().decode())"],
        env=env,
        cwd=settings.BASE_DIR,
        check=True,
        timeout=120,
        capture_output=True,
        text=True,
    )
    assert "placement_allocation_candidates_seconds_count 2.0" in scrape.stdout
    assert "placement_allocation_candidates_returned_sum 6.0" in scrape.stdout


def test_capacity_usage_and_state_per_resource_pool(api, settings):
    from tests.providers.pools import ceph, provider, put_pool, sync_all

    settings.PLACEMENT_SYNC_ON_REPORT = False
    put_pool(api, "ceph1", ceph(total=1000, members=[]))
    put_pool(
        api,
        "net1",
        {"kind": "ip_pool", "inventories": {"IPV4_ADDRESS": {"total": 254}}, "members": []},
    )
    sync_all()
    pool = provider(api, "ceph1")["uuid"]
    assert api.put(f"/allocations/{new_uuid()}", body({pool: {"DISK_GB": 300}})).status == 204
    api.request("PATCH", "/api/resource-pools/net1/", {"enabled": False})
    response = scrape(api)
    ceph1 = {"pool": "ceph1", "kind": "shared_storage", "resource_class": "DISK_GB"}
    assert value(response, "placement_pool_capacity", **ceph1) == 1000
    assert value(response, "placement_pool_used", **ceph1) == 300
    assert value(response, "placement_pool_free", **ceph1) == 700
    net1 = {"pool": "net1", "kind": "ip_pool"}
    assert value(response, "placement_pool_free", resource_class="IPV4_ADDRESS", **net1) == 254
    assert value(response, "placement_pool_enabled", **net1) == 0
    assert value(response, "placement_pool_enabled", pool="ceph1", kind="shared_storage") == 1
    assert value(response, "placement_pool_sync_ok", pool="ceph1", kind="shared_storage") == 1
    assert value(response, "placement_pool_stale", pool="ceph1", kind="shared_storage") == 0
