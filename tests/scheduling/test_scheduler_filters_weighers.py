"""Built-in filters and weighers, hints, the plugin loader, and a plugin that raises, through
POST /api/servers/ and POST /api/scheduler/explain/."""

import uuid as uuidlib
from datetime import timedelta
from importlib.metadata import EntryPoint

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone

from allocations.models import Allocation
from providers.models import Aggregate, ComputeNode, ResourceProvider
from scheduling import plugins
from scheduling.models import AggregateMetadata, Server
from scheduling.plugins import BaseFilter, BaseWeigher, Status
from tests.scheduling.scheduler_helpers import boot, make_flavor, make_host


def _host_of(response):
    assert response.status == 201, response
    return response.json["servers"][0]["host"]


def _explain(api, flavor="f", **extra):
    body = {"name": "x", "flavor": flavor, "project_id": "p", "user_id": "u", **extra}
    response = api.post("/api/scheduler/explain/", body)
    assert response.status == 200, response
    return response.json


SERVER = {"name": "x", "flavor": "f", "project_id": "p", "user_id": "u"}


def _report(uuid, *, enabled=True, silent_for=timedelta(0)):
    ComputeNode.objects.create(
        hostname=f"host-{uuid[:8]}",
        provider=ResourceProvider.objects.get(uuid=uuid),
        enabled=enabled,
        reported_at=timezone.now() - silent_for,
    )


@pytest.fixture
def flavor(api):
    return make_flavor(api, "f", vcpus=1, ram=512, disk=1)


# --- filters ---------------------------------------------------------------------


def test_disabled_and_stale_hosts_are_filtered_with_reasons(api, flavor, settings):
    settings.PLACEMENT_HOST_STALE_SECONDS = 600
    disabled = make_host(api, "disabled")
    stale = make_host(api, "stale")
    fresh = make_host(api, "fresh")
    make_host(api, "handmade")  # no report: an enabled host
    _report(disabled, enabled=False)
    _report(stale, silent_for=timedelta(hours=1))
    _report(fresh)

    funnel = _explain(api)
    step = next(s for s in funnel["filters"] if s["name"] == "host_enabled")
    reasons = {d["host"]: d["reason"] for d in step["dropped"]}
    assert reasons == {
        "disabled": "disabled by the operator",
        "stale": "its compute report is stale",
    }
    assert step["passed"] == 2
    for _ in range(4):
        assert _host_of(boot(api, "f")) in {"fresh", "handmade"}
    # Capacity leaves them out too.
    hosts = {h["name"] for h in api.get("/api/capacity/?flavor=f").json["hosts"]}
    assert hosts == {"fresh", "handmade"}


def test_same_host_and_different_host_hints(api, flavor):
    for name in ("a", "b", "c"):
        make_host(api, name)
    first = boot(api, "f").json["servers"][0]
    for _ in range(3):
        same = boot(api, "f", scheduler_hints={"same_host": [first["id"]]})
        assert _host_of(same) == first["host"]
        other = boot(api, "f", scheduler_hints={"different_host": first["id"]})
        assert _host_of(other) != first["host"]


def test_target_host_and_ignore_hosts_hints(api, flavor):
    for name in ("a", "b", "c"):
        make_host(api, name)
    for _ in range(3):
        assert _host_of(boot(api, "f", scheduler_hints={"target_host": "b"})) == "b"
        ignored = boot(api, "f", scheduler_hints={"ignore_hosts": ["a", "b"]})
        assert _host_of(ignored) == "c"


def test_unknown_hint_is_400(api, flavor):
    make_host(api, "a")
    response = boot(api, "f", scheduler_hints={"near_the_window": True})
    assert response.status == 400
    assert "scheduler_hints.near_the_window" in response.error["fields"]


def _aggregate(uuid=None, **fields):
    aggregate = Aggregate.objects.create(uuid=uuid or uuidlib.uuid4())
    AggregateMetadata.objects.create(aggregate=aggregate, **fields)
    return str(aggregate.uuid)


def test_availability_zone_by_zone_name_or_aggregate_uuid(api, flavor):
    zone = _aggregate(name="rack-1", availability_zone="az1")
    make_host(api, "outside")
    make_host(api, "inside", aggregates=[zone])
    for az in ("az1", zone, "rack-1"):
        assert _host_of(boot(api, "f", availability_zone=az)) == "inside"
    _aggregate(name="empty", availability_zone="az-empty")
    response = boot(api, "f", availability_zone="az-empty")
    assert response.status == 409
    step = next(s for s in response.error["explain"]["filters"] if s["name"] == "availability_zone")
    assert {d["reason"] for d in step["dropped"]} == {"is not in availability zone az-empty"}
    # A zone no aggregate has is a 400 naming it, not a pass that cannot succeed.
    response = boot(api, "f", availability_zone="az-nowhere")
    assert response.status == 400
    assert "az-nowhere" in response.error["detail"]


def test_aggregate_extra_specs_match_metadata(api):
    ssd = _aggregate(metadata={"disk": "ssd,nvme"})
    hdd = _aggregate(metadata={"disk": "hdd"})
    make_host(api, "spinning", aggregates=[hdd])
    make_host(api, "flash", aggregates=[ssd])
    make_host(api, "bare")
    make_flavor(api, "fast", extra_specs={"aggregate_instance_extra_specs:disk": "nvme"})
    for _ in range(3):
        assert _host_of(boot(api, "fast")) == "flash"
    funnel = _explain(api, "fast")
    step = next(s for s in funnel["filters"] if s["name"] == "aggregate_extra_specs")
    assert sorted(d["host"] for d in step["dropped"]) == ["bare", "spinning"]


def test_extended_resource_filter_needs_a_minimum_free(api, settings, flavor):
    api.put("/resource_classes/CUSTOM_CU")
    settings.PLACEMENT_SCHEDULER_FILTERS = "extended_resource:CUSTOM_CU:500"
    make_host(api, "small", {"VCPU": 8, "MEMORY_MB": 8192, "DISK_GB": 10, "CUSTOM_CU": 100})
    make_host(api, "big", {"VCPU": 8, "MEMORY_MB": 8192, "DISK_GB": 10, "CUSTOM_CU": 1000})
    make_host(api, "none")
    for _ in range(3):
        assert _host_of(boot(api, "f")) == "big"
    step = _explain(api)["filters"][0]
    assert step["name"] == "extended_resource:CUSTOM_CU:500"
    assert {d["host"]: d["reason"] for d in step["dropped"]} == {
        "small": "has 100 CUSTOM_CU free, below 500",
        "none": "has 0 CUSTOM_CU free, below 500",
    }


# --- weighers --------------------------------------------------------------------


def test_ram_weigher_spreads_and_a_negative_multiplier_packs(api, settings, flavor):
    make_host(api, "roomy", {"VCPU": 8, "MEMORY_MB": 32768, "DISK_GB": 100})
    make_host(api, "tight", {"VCPU": 8, "MEMORY_MB": 4096, "DISK_GB": 100})
    settings.PLACEMENT_SCHEDULER_WEIGHERS = "ram=1.0"
    assert _host_of(boot(api, "f")) == "roomy"
    settings.PLACEMENT_SCHEDULER_WEIGHERS = "ram=-1.0"
    assert _host_of(boot(api, "f")) == "tight"
    weighed = _explain(api)["weighed"]
    assert [w["host"] for w in weighed] == ["tight", "roomy"]
    assert weighed[0]["weights"]["ram"]["normalised"] == 0.0
    assert weighed[0]["weights"]["ram"]["weighted"] == -0.0
    assert weighed[1]["weights"]["ram"]["weighted"] == -1.0


def test_cpu_and_disk_weighers(api, settings, flavor):
    make_host(api, "cpus", {"VCPU": 64, "MEMORY_MB": 8192, "DISK_GB": 10})
    make_host(api, "disks", {"VCPU": 4, "MEMORY_MB": 8192, "DISK_GB": 1000})
    settings.PLACEMENT_SCHEDULER_WEIGHERS = "cpu"
    assert _host_of(boot(api, "f")) == "cpus"
    settings.PLACEMENT_SCHEDULER_WEIGHERS = "disk=2.5"
    assert _host_of(boot(api, "f")) == "disks"
    assert _explain(api)["weighed"][0]["score"] == 2.5


def test_generic_resource_weigher_on_compute_units_free_and_ratio(api, settings, flavor):
    api.put("/resource_classes/CUSTOM_CU")
    # "many": the most CU free; "share": the highest free share.
    make_host(api, "many", {"VCPU": 8, "MEMORY_MB": 8192, "DISK_GB": 10, "CUSTOM_CU": 1000})
    make_host(api, "share", {"VCPU": 8, "MEMORY_MB": 8192, "DISK_GB": 10, "CUSTOM_CU": 200})
    consumer = str(uuidlib.uuid4())
    many = ResourceProvider.objects.get(name="many").uuid
    body = {
        "allocations": {str(many): {"resources": {"CUSTOM_CU": 500}}},
        "project_id": "p",
        "user_id": "u",
        "consumer_generation": None,
        "consumer_type": "INSTANCE",
    }
    assert api.put(f"/allocations/{consumer}", body).status == 204
    settings.PLACEMENT_SCHEDULER_WEIGHERS = "resource:CUSTOM_CU"
    assert _host_of(boot(api, "f")) == "many"  # 500 free against 200
    settings.PLACEMENT_SCHEDULER_WEIGHERS = "resource:CUSTOM_CU:ratio"
    assert _host_of(boot(api, "f")) == "share"  # 100% free against 50%
    settings.PLACEMENT_SCHEDULER_WEIGHERS = "resource:CUSTOM_CU:ratio=-1"
    assert _host_of(boot(api, "f")) == "many"  # packing


def test_weighers_combine_normalised_scores(api, settings, flavor):
    make_host(api, "ram-rich", {"VCPU": 4, "MEMORY_MB": 32768, "DISK_GB": 10})
    make_host(api, "cpu-rich", {"VCPU": 64, "MEMORY_MB": 4096, "DISK_GB": 10})
    settings.PLACEMENT_SCHEDULER_WEIGHERS = "ram=1,cpu=3"
    assert _host_of(boot(api, "f")) == "cpu-rich"
    scores = {w["host"]: w["score"] for w in _explain(api)["weighed"]}
    assert scores == {"cpu-rich": 3.0, "ram-rich": 1.0}


# --- plugins ---------------------------------------------------------------------


class OnlyEvenFilter(BaseFilter):
    def check(self, host, spec):
        return None if host.name.endswith(("0", "2", "4")) else "odd"


class BrokenFilter(BaseFilter):
    def check(self, host, spec):
        raise RuntimeError("boom")


class BrokenWeigher(BaseWeigher):
    def weigh(self, host, spec):
        raise ZeroDivisionError("boom")


class UndecidedFilter(BaseFilter):
    def check(self, host, spec):
        return Status.error("cannot reach the inventory service")


class StatusFilter(BaseFilter):
    def check(self, host, spec):
        return {
            "cn1": Status.unschedulable("busy"),
            "cn2": Status.unresolvable("wrong rack"),
        }.get(host.name, Status.fits())


class NameWeigher(BaseWeigher):
    def weigh(self, host, spec):
        return int(host.name[-1])


def test_unknown_plugin_names_list_the_available_ones():
    with pytest.raises(ImproperlyConfigured) as caught:
        plugins.load_filters("host_enabled,no_such_filter")
    message = str(caught.value)
    assert "no_such_filter" in message
    assert "availability_zone" in message and "same_host" in message
    with pytest.raises(ImproperlyConfigured, match="Available: .*ram"):
        plugins.load_weighers("rame=1.0")
    with pytest.raises(ImproperlyConfigured, match="not a number"):
        plugins.load_weighers("ram=lots")
    with pytest.raises(ImproperlyConfigured, match="CLASS:MINIMUM"):
        plugins.load_filters("extended_resource")
    with pytest.raises(ImproperlyConfigured, match="Unknown"):
        plugins.load_filters("tests.scheduling.test_scheduler_filters_weighers.NameWeigher")


def test_startup_check_refuses_an_unknown_name(settings):
    settings.PLACEMENT_SCHEDULER_WEIGHERS = "ram,nope"
    with pytest.raises(ImproperlyConfigured, match="nope"):
        plugins.check_configuration()


def test_dotted_path_plugins(api, settings, flavor):
    for index in range(5):
        make_host(api, f"cn{index}")
    here = "tests.scheduling.test_scheduler_filters_weighers"
    settings.PLACEMENT_SCHEDULER_FILTERS = f"{here}.OnlyEvenFilter"
    settings.PLACEMENT_SCHEDULER_WEIGHERS = f"{here}.NameWeigher=-1"
    assert _host_of(boot(api, "f")) == "cn0"
    settings.PLACEMENT_SCHEDULER_WEIGHERS = f"{here}.NameWeigher"
    assert _host_of(boot(api, "f")) == "cn4"


def test_entry_point_plugins(api, settings, flavor, monkeypatch):
    here = "tests.scheduling.test_scheduler_filters_weighers"
    points = {
        plugins.FILTER_GROUP: [
            EntryPoint("only_even", f"{here}:OnlyEvenFilter", plugins.FILTER_GROUP)
        ],
        plugins.WEIGHER_GROUP: [
            EntryPoint("by_name", f"{here}:NameWeigher", plugins.WEIGHER_GROUP)
        ],
    }
    monkeypatch.setattr(plugins, "entry_points", lambda group: points.get(group, []))
    plugins.load_filters.cache_clear()
    plugins.load_weighers.cache_clear()
    for index in range(4):
        make_host(api, f"cn{index}")
    settings.PLACEMENT_SCHEDULER_FILTERS = "only_even"
    settings.PLACEMENT_SCHEDULER_WEIGHERS = "by_name=-1"
    try:
        assert _host_of(boot(api, "f")) == "cn0"
        assert "only_even" in plugins.available(plugins.FILTER_GROUP)
    finally:
        plugins.load_filters.cache_clear()
        plugins.load_weighers.cache_clear()


def test_a_filter_that_raises_fails_the_request_closed(api, settings, flavor, caplog):
    make_host(api, "cn1")
    here = "tests.scheduling.test_scheduler_filters_weighers"
    settings.PLACEMENT_SCHEDULER_FILTERS = f"{here}.BrokenFilter,host_enabled"
    response = boot(api, "f")
    assert response.status == 503
    assert response.error_code == "scheduler.plugin_failed"
    assert f"{here}.BrokenFilter" in response.error["detail"]
    assert "RuntimeError: boom" in response.error["detail"]
    assert "BrokenFilter failed" in caplog.text
    assert Server.objects.count() == 0 and Allocation.objects.count() == 0
    explained = api.post("/api/scheduler/explain/", SERVER)
    assert explained.status == 503 and explained.error_code == "scheduler.plugin_failed"
    capacity = api.get("/api/capacity/?flavor=f")
    assert capacity.status == 503 and capacity.error_code == "scheduler.plugin_failed"


def test_a_weigher_that_raises_fails_the_request_closed(api, settings, flavor, caplog):
    make_host(api, "cn1")
    here = "tests.scheduling.test_scheduler_filters_weighers"
    settings.PLACEMENT_SCHEDULER_WEIGHERS = f"{here}.BrokenWeigher,ram"
    response = boot(api, "f")
    assert response.status == 503
    assert f"weigher {here}.BrokenWeigher failed" in response.error["detail"]
    assert "BrokenWeigher failed" in caplog.text
    assert Server.objects.count() == 0


def test_a_filter_status_error_fails_closed(api, settings, flavor):
    make_host(api, "cn1")
    settings.PLACEMENT_SCHEDULER_FILTERS = f"{__name__}.UndecidedFilter"
    response = boot(api, "f")
    assert response.status == 503
    assert "cannot reach the inventory service" in response.error["detail"]


def test_filter_statuses_in_explain(api, settings, flavor):
    for name in ("cn0", "cn1", "cn2"):
        make_host(api, name)
    settings.PLACEMENT_SCHEDULER_FILTERS = f"{__name__}.StatusFilter"
    answer = api.post("/api/scheduler/explain/", SERVER).json
    (step,) = answer["filters"]
    assert {d["host"]: (d["status"], d["reason"]) for d in step["dropped"]} == {
        "cn1": ("unschedulable", "busy"),
        "cn2": ("unresolvable", "wrong rack"),
    }
    funnel_step = answer["funnel"][-1]
    assert funnel_step["reasons"] == {"unschedulable": 1, "unresolvable": 1}
    assert funnel_step["passed"] == 1 and funnel_step["entered"] == 3
    assert answer["chosen"]["host"] == "cn0"


def test_a_hint_filter_reads_its_hosts_once_per_pass(api, settings, flavor, monkeypatch):
    from scheduling.plugins.filters import SameHostFilter

    host = make_host(api, "cn0")
    make_host(api, "cn1")
    first = boot(api, "f").json["servers"][0]["id"]
    calls = []
    real = SameHostFilter.pre_filter

    def counted(self, spec):
        calls.append(spec)
        return real(self, spec)

    monkeypatch.setattr(SameHostFilter, "pre_filter", counted)
    response = boot(api, "f", count=3, scheduler_hints={"same_host": [first]})
    assert response.status == 201, response
    assert {s["host_uuid"] for s in response.json["servers"]} == {host}
    assert len(calls) == 1  # one pass, one pre-filter, for three instances and two hosts


def test_ratio_weigher_is_not_stretched_and_free_amounts_are(api, settings, flavor):
    make_host(api, "a", {"VCPU": 8, "MEMORY_MB": 16384, "DISK_GB": 100})
    make_host(api, "b", {"VCPU": 8, "MEMORY_MB": 16394, "DISK_GB": 100})
    settings.PLACEMENT_SCHEDULER_WEIGHERS = "resource:MEMORY_MB:ratio,ram"
    weighed = {w["host"]: w["weights"] for w in _explain(api)["weighed"]}
    # Both empty: a free share of 1.0 each, as it is; the free amounts span 0..1 (Nova's).
    assert weighed["a"]["resource:MEMORY_MB:ratio"]["normalised"] == 1.0
    assert weighed["b"]["resource:MEMORY_MB:ratio"]["normalised"] == 1.0
    assert weighed["a"]["ram"]["normalised"] == 0.0
    assert weighed["b"]["ram"]["normalised"] == 1.0


def test_aggregate_metadata_overrides_a_weigher_multiplier(api, settings, flavor):
    aggregate = api.post(
        "/api/aggregates/", {"name": "pack", "metadata": {"ram_weight_multiplier": "-1"}}
    ).json["uuid"]
    make_host(api, "big", {"VCPU": 8, "MEMORY_MB": 32768, "DISK_GB": 100}, aggregates=[aggregate])
    make_host(api, "small", {"VCPU": 8, "MEMORY_MB": 8192, "DISK_GB": 100})
    settings.PLACEMENT_SCHEDULER_WEIGHERS = "ram"
    weighed = {w["host"]: w for w in _explain(api)["weighed"]}
    assert weighed["big"]["weights"]["ram"]["weighted"] == -1.0
    assert weighed["small"]["weights"]["ram"]["weighted"] == 0.0
    assert _host_of(boot(api, "f")) == "small"


class NoIronicFilter(BaseFilter):
    """Reads the host's report: refuses hosts reporting the ironic hypervisor."""

    def check(self, host, spec):
        if host.report is not None and host.report.hypervisor_type == "ironic":
            return "reports hypervisor ironic"
        return None


def test_plugins_see_the_host_report_and_extended_resources(api, settings, flavor):
    api.put("/resource_classes/CUSTOM_CU")
    baremetal = make_host(api, "baremetal")
    kvm = make_host(api, "kvm", {"VCPU": 8, "MEMORY_MB": 4096, "DISK_GB": 10, "CUSTOM_CU": 50})
    make_host(api, "handmade", {"VCPU": 8, "MEMORY_MB": 2048, "DISK_GB": 10})
    _report(baremetal)
    _report(kvm)
    ComputeNode.objects.filter(provider__uuid=baremetal).update(hypervisor_type="ironic")
    here = "tests.scheduling.test_scheduler_filters_weighers"
    settings.PLACEMENT_SCHEDULER_FILTERS = f"{here}.NoIronicFilter"
    settings.PLACEMENT_SCHEDULER_WEIGHERS = "ram"
    assert _host_of(boot(api, "f")) == "kvm"
    step = _explain(api)["filters"][0]
    assert step["dropped"] == [
        {
            "host": "baremetal",
            "host_uuid": baremetal,
            "reason": "reports hypervisor ironic",
            "status": "unschedulable",  # a plain string answer is unschedulable
        }
    ]
    from scheduling import candidates
    from scheduling.models import Flavor
    from scheduling.selectors.pass_hosts import hosts_of_pass
    from scheduling.services.servers import scheduling_spec

    spec = scheduling_spec(flavor=Flavor.objects.get(name="f"), project_id="p", user_id="u")
    hosts = {
        h.name: h
        for h in hosts_of_pass(
            found=candidates.find_candidates(spec.flavor_request.candidate_request)
        )
    }
    assert hosts["kvm"].extended_resources == {"CUSTOM_CU": 50}
    assert hosts["kvm"].report.hostname.startswith("host-")
    assert hosts["handmade"].report is None and hosts["handmade"].enabled


def test_a_filter_that_does_not_apply_keeps_every_host_without_asking(api, flavor, monkeypatch):
    from scheduling.plugins.filters import SameHostFilter

    make_host(api, "one")
    make_host(api, "two")

    def never(self, host, spec):
        raise AssertionError("asked about a host without a same_host hint")

    monkeypatch.setattr(SameHostFilter, "check", never)
    step = next(s for s in _explain(api)["filters"] if s["name"] == "same_host")

    assert step["passed"] == 2 and step["dropped_count"] == 0


class CountingFilter(BaseFilter):
    """A plugin that says nothing of applies(): asked about every host."""

    seen = []

    def check(self, host, spec):
        self.seen.append(host.name)
        return None


def test_a_plugin_filter_applies_unless_it_says_otherwise(api, flavor, settings):
    make_host(api, "one")
    make_host(api, "two")
    settings.PLACEMENT_SCHEDULER_FILTERS = f"{__name__}.CountingFilter"
    CountingFilter.seen = []

    _explain(api)

    assert sorted(CountingFilter.seen) == ["one", "two"]
