"""Time the dashboard's pages on a cloud of N providers.

    python manage.py bench_dashboard --providers 10000

By default a scratch database (``<NAME>_bench``) is created next to the
configured one, filled with a synthetic cloud (80% compute nodes, 20% child
providers, aggregates, traits, two consumers per node) and dropped at the
end; ``--keep`` keeps it for the next run, ``--use-existing`` times the
configured database as it is. Every page is rendered through the whole
Django stack (middleware, session, templates) as a logged-in staff user,
``--repeat`` times after one warm-up, and the median is printed; so is every
action's POST (host, drain, pools, server groups, migrations), each on
data made for it beforehand. The drain's POST disables the host and queues the
moves for a worker: what is timed is the page's part (the task is handed to
this command rather than to the broker, and run afterwards, untimed).
"""

import logging
import random
import statistics
import time
import uuid

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import connection, transaction
from django.db.models import F
from django.test import Client, override_settings

from allocations.models import Allocation, Consumer, ConsumerType, Project, User
from allocations.services.usage import usage_rebuild
from placementsite.core.exceptions import DomainError
from providers.models import (
    Aggregate,
    Inventory,
    ResourceClass,
    ResourceProvider,
    ResourceProviderAggregate,
    ResourceProviderTrait,
    Trait,
)

TARGET_MS = 300
TRAITS = [
    "HW_CPU_X86_AVX",
    "HW_CPU_X86_AVX2",
    "HW_CPU_X86_SSE42",
    "HW_CPU_X86_AVX512F",
    "HW_NIC_SRIOV",
    "COMPUTE_VOLUME_MULTI_ATTACH",
    "STORAGE_DISK_SSD",
    "COMPUTE_STATUS_DISABLED",
]
CUSTOM_TRAITS = ["CUSTOM_GOLD", "CUSTOM_SILVER", "CUSTOM_MAINTENANCE"]
FALLBACK_FORBIDDEN = "COMPUTE_STATUS_DISABLED"  # a standard trait: every cloud has the name
# A compute host reported and synced through the services, for the host actions.
BENCH_HOST = "bench-host"
BENCH_REPORT = {
    "vcpus": 64,
    "memory_mb": 262144,
    "local_gb": 4000,
    "hypervisor_type": "QEMU",
    "cpu_info": {"model": "Skylake-Server", "vendor": "Intel"},
    "stats": {},
    "numa_topology": None,
    "pci_devices": [],
}
# Resource pools and server groups (with two members each) for their pages and actions.
BENCH_POOLS = 5
BENCH_POOL = "bench-pool-"  # + its index
BENCH_GROUPS = 200
FLAVORS = [  # name, vcpus, ram, disk
    ("m1.small", 2, 4096, 20),
    ("m1.medium", 4, 8192, 40),
    ("m1.large", 8, 16384, 80),
    ("m1.xlarge", 16, 32768, 160),
]


class Command(BaseCommand):
    help = "Print median render times of every dashboard page at N providers."

    def add_arguments(self, parser):
        parser.add_argument("--providers", type=int, default=10000)
        parser.add_argument("--repeat", type=int, default=7)
        parser.add_argument(
            "--use-existing",
            action="store_true",
            help="time the configured database as it is instead of a scratch one",
        )
        parser.add_argument("--keep", action="store_true", help="keep the scratch database")

    def handle(self, *args, **options):
        scratch = not options["use_existing"]
        if scratch:
            # The scratch cloud's reports are synced here; no worker is asked for them.
            settings.PLACEMENT_SYNC_ON_REPORT = False
        old_name = connection.settings_dict["NAME"]
        if scratch:
            connection.settings_dict.setdefault("TEST", {})["NAME"] = f"{old_name}_bench"
            connection.creation.create_test_db(
                verbosity=0, autoclobber=True, keepdb=options["keep"]
            )
        try:
            built = ResourceProvider.objects.filter(name__startswith="cn-").count()
            if scratch and built != options["providers"]:
                started = time.perf_counter()
                build_cloud(options["providers"])
                self.stdout.write(
                    f"built {options['providers']} providers, "
                    f"{Consumer.objects.count()} consumers, "
                    f"{Allocation.objects.count()} allocations "
                    f"in {time.perf_counter() - started:.1f} s"
                )
                # Planner statistics for the bulk-loaded tables, as autovacuum would gather
                # them on a production database.
                with connection.cursor() as cursor:
                    cursor.execute("ANALYZE")
            self.ensure_fixtures()
            self.time_pages(options["repeat"])
        finally:
            if scratch and not options["keep"]:
                connection.creation.destroy_test_db(old_name, verbosity=0)

    def ensure_fixtures(self):
        """What the pages and actions name, made here when the database lacks it (one this
        command did not build: a bulk-loaded cloud has no flavor, bench host or pool), each
        said: the flavors, the bench host (reported and synced) and the first pool."""
        from providers.models import ComputeNode, ResourcePool
        from scheduling.models import Flavor

        made = []
        for name, vcpus, ram, disk in FLAVORS:
            _flavor, created = Flavor.objects.get_or_create(
                name=name, defaults={"vcpus": vcpus, "ram": ram, "disk": disk}
            )
            if created:
                made.append(f"flavor {name}")
        # Synced here rather than by a worker (no broker is asked).
        with override_settings(PLACEMENT_SYNC_ON_REPORT=False):
            if not ComputeNode.objects.filter(hostname=BENCH_HOST, provider__isnull=False).exists():
                _bench_host()
                made.append(f"host {BENCH_HOST}")
            if not ResourcePool.objects.filter(name=f"{BENCH_POOL}0").exists():
                _bench_pools(count=1)
                made.append(f"pool {BENCH_POOL}0")
        if made:
            self.stdout.write(f"made for the bench (not in the database): {', '.join(made)}")

    def time_pages(self, repeat):
        # A superuser: the pages ask for view permissions, which a superuser holds.
        user, _ = get_user_model().objects.get_or_create(
            username="bench-operator", defaults={"is_staff": True, "is_superuser": True}
        )
        # A host ALLOWED_HOSTS accepts by default (the test client's "testserver" is not).
        client = Client(HTTP_HOST="localhost")
        client.force_login(user)
        provider = ResourceProvider.objects.filter(parent__isnull=False).order_by("id").first()
        provider = provider.root if provider else ResourceProvider.objects.first()
        consumer = Consumer.objects.order_by("id").first()
        aggregate = Aggregate.objects.order_by("id").first()
        # A trait of the synthetic cloud's; a cloud without it (bulk-loaded) forbids a
        # standard one instead: an unknown name is a 400, which would time nothing.
        forbidden = "CUSTOM_MAINTENANCE"
        if not Trait.objects.filter(name=forbidden).exists():
            self.stdout.write(f"no trait {forbidden}: the requests forbid {FALLBACK_FORBIDDEN}")
            forbidden = FALLBACK_FORBIDDEN
        traits_and_groups = (
            "submit=1&resources=VCPU:8,MEMORY_MB:16384"
            f"&required=HW_CPU_X86_AVX2&forbidden={forbidden}"
            + (f"&member_of={aggregate.uuid}" if aggregate else "")
            + "&g1-resources=PCPU:4&g2-resources=DISK_GB:100&g2-required=STORAGE_DISK_SSD"
        )
        pages = {
            "overview": "/dashboard/",
            "providers": "/dashboard/providers/",
            "providers, last page": "/dashboard/providers/?page=1000000",
            "providers, filtered": "/dashboard/providers/?trait=HW_CPU_X86_AVX2"
            "&resource_class=VCPU&tree=root",
            "providers, search": "/dashboard/providers/?q=cn-01",
            "providers, most free VCPU": "/dashboard/providers/?tree=root&sort=-free:VCPU",
            "providers, fullest MEMORY_MB": "/dashboard/providers/?sort=-utilisation:MEMORY_MB",
            "search": "/dashboard/search/?q=cn-01",
            "provider": f"/dashboard/providers/{provider.uuid}/" if provider else None,
            "consumers": "/dashboard/consumers/",
            "consumer": f"/dashboard/consumers/{consumer.uuid}/" if consumer else None,
            "projects": "/dashboard/projects/",
            "traits": "/dashboard/traits/",
            "resource classes": "/dashboard/resource-classes/",
            "aggregates": "/dashboard/aggregates/",
            "aggregate": f"/dashboard/aggregates/{aggregate.uuid}/" if aggregate else None,
            "try a request": "/dashboard/try/?submit=1&resources=VCPU:8,MEMORY_MB:16384",
            "try, traits and groups": f"/dashboard/try/?{traits_and_groups}",
            "try, nothing fits": "/dashboard/try/?submit=1&resources=VCPU:100000",
            # The "try" pages' allocation candidates, fetched by the page's script: each is a
            # page of its own for the budget.
            "try a request: candidates": "/dashboard/try/candidates/"
            "?submit=1&resources=VCPU:8,MEMORY_MB:16384",
            "try, t. and g.: candidates": f"/dashboard/try/candidates/?{traits_and_groups}",
            "hosts": "/dashboard/hosts/",
            "pools": "/dashboard/pools/",
            "server groups": "/dashboard/server-groups/",
            "hosts, disabled": "/dashboard/hosts/?state=disabled",
            "migrations": "/dashboard/migrations/",
            "flavors": "/dashboard/flavors/",
            "schedule (explain)": "/dashboard/schedule/?flavor=m1.small&explain=1",
        }
        # Loaded by the pages' scripts after the page, with a progress line: timed, not
        # held to the page budget (each is a scheduling pass over every host).
        from scheduling.models import Flavor

        small = Flavor.objects.filter(name="m1.small").first()
        after = {
            "(after) schedule funnel": "/dashboard/schedule/funnel/?flavor=m1.small",
            "(after) fits, one flavor": f"/dashboard/flavors/{small.pk}/fits/" if small else None,
        }
        self.stdout.write(f"{'page':<26} {'median ms':>10} {'max ms':>8}  verdict")
        worst = 0.0
        for name, url in {**pages, **after}.items():
            if url is None:
                continue
            response = client.get(url)  # warm-up
            if response.status_code != 200:
                self.stdout.write(f"{name:<26} HTTP {response.status_code}")
                continue
            times = []
            for _ in range(repeat):
                started = time.perf_counter()
                client.get(url)
                times.append((time.perf_counter() - started) * 1000)
            median = statistics.median(times)
            if name in after:
                self.stdout.write(f"{name:<26} {median:>10.1f} {max(times):>8.1f}  after the page")
                continue
            worst = max(worst, median)
            verdict = "ok" if median < TARGET_MS else f"OVER {TARGET_MS} ms"
            self.stdout.write(f"{name:<26} {median:>10.1f} {max(times):>8.1f}  {verdict}")
        worst = max(worst, self.time_actions(client, repeat))
        self.stdout.write(
            f"slowest page median: {worst:.1f} ms (target < {TARGET_MS} ms; "
            "the (after) lines load after their page)"
        )

    def time_actions(self, client, repeat):
        """The actions' POSTs (their redirect not followed), each on data made for it
        beforehand (untimed): a host disabled and enabled in turn, resynced and drained (of
        one server each time), pools disabled, enabled and deleted, server groups created and
        deleted, and ``repeat`` moves confirmed."""
        from scheduling.models import Flavor, ServerGroup

        logging.getLogger("placement.dashboard").setLevel(logging.WARNING)  # one line a POST
        host = f"/dashboard/hosts/{BENCH_HOST}"
        pool = f"/dashboard/pools/{BENCH_POOL}0"
        group = {"name": "bench", "policy": "anti-affinity", "project_id": "bench"}
        timed = {
            "action: disable host": (f"{host}/disable/", {"reason": "bench"}),
            "action: enable host": (f"{host}/enable/", {}),
            "action: resync host": (f"{host}/resync/", {}),
            "action: disable pool": (f"{pool}/disable/", {"reason": "bench"}),
            "action: enable pool": (f"{pool}/enable/", {}),
            "action: create group": ("/dashboard/server-groups/create/", group),
        }
        worst = 0.0
        for name, (url, data) in timed.items():
            worst = max(worst, self._post(client, name, [(url, data)] * (repeat + 1)))
        groups = ServerGroup.objects.filter(name="bench").values_list("uuid", flat=True)
        deletes = [(f"/dashboard/server-groups/{g}/delete/", {}) for g in groups]
        worst = max(worst, self._post(client, "action: delete group", deletes))
        pools = [_unused_pool(f"bench-unused-{i}") for i in range(repeat + 1)]
        deletes = [(f"/dashboard/pools/{name}/delete/", {}) for name in pools]
        worst = max(worst, self._post(client, "action: delete pool", deletes))
        flavor = Flavor.objects.get(name="m1.small")
        worst = max(worst, self._drains(client, flavor, repeat))
        try:
            moves = [_moving(flavor, f"bench-{i}") for i in range(repeat + 1)]
        except DomainError as exc:
            self._skipped("action: confirm migration", f"no server to move ({exc})")
            return worst
        confirms = [(f"/dashboard/migrations/{m.uuid}/confirm/", {}) for m in moves]
        return max(worst, self._post(client, "action: confirm migration", confirms))

    def _drains(self, client, flavor, repeat):
        """Drains of the bench host holding one server each time (enabled and booted on
        beforehand, untimed); the first is the warm-up."""
        from unittest import mock

        from providers.services.compute_nodes import compute_node_enable, compute_node_report
        from scheduling.services.servers import servers_create
        from scheduling.tasks import drain_host

        # The host reports again (a kept database's would be stale, and no server lands on it).
        compute_node_report(hostname=BENCH_HOST, report=BENCH_REPORT)
        times = []
        queued = []
        for index in range(repeat + 1):
            compute_node_enable(hostname=BENCH_HOST)
            try:
                servers_create(
                    name=f"bench-drained-{index}",
                    flavor=flavor,
                    project_id="bench",
                    user_id="bench",
                    hints={"target_host": BENCH_HOST},
                )
            except DomainError as exc:
                # At 100,000 hosts the target_host hint is judged after a bounded read of
                # candidates, which the engine's time budget may cut before this host.
                compute_node_enable(hostname=BENCH_HOST)
                self._skipped("action: drain host", f"no server booted on {BENCH_HOST} ({exc})")
                return 0.0
            with mock.patch.object(
                drain_host, "apply_async", lambda args, **_options: queued.append(args)
            ):
                started = time.perf_counter()
                response = client.post(f"/dashboard/hosts/{BENCH_HOST}/drain/", {"reason": "bench"})
                times.append((time.perf_counter() - started) * 1000)
            while queued:  # the worker's part, untimed
                drain_host(*queued.pop())
            if response.status_code != 302:
                self.stdout.write(f"{'action: drain host':<26} HTTP {response.status_code}")
                return 0.0
        compute_node_enable(hostname=BENCH_HOST)
        return self._line("action: drain host (1 vm)", times[1:])

    def _skipped(self, name, reason):
        self.stdout.write(f"{name:<26} skipped: {reason}")

    def _post(self, client, name, requests):
        """Time each ``(url, data)`` POST; the first is the warm-up."""
        times = []
        for url, data in requests:
            started = time.perf_counter()
            response = client.post(url, data)
            times.append((time.perf_counter() - started) * 1000)
            if response.status_code != 302:
                self.stdout.write(f"{name:<26} HTTP {response.status_code}")
                return 0.0
        return self._line(name, times[1:])

    def _line(self, name, times):
        median = statistics.median(times)
        verdict = "ok" if median < TARGET_MS else f"OVER {TARGET_MS} ms"
        self.stdout.write(f"{name:<26} {median:>10.1f} {max(times):>8.1f}  {verdict}")
        return median


def _moving(flavor, name):
    """A server booted and being migrated, for a confirm."""
    from scheduling.services.migrations import server_move
    from scheduling.services.servers import servers_create

    (server,) = servers_create(name=name, flavor=flavor, project_id="bench", user_id="bench")
    return server_move(server=server, kind="migrate")


def _unused_pool(name):
    """A pool reported and synced, nothing allocated from it, for a delete."""
    from providers.services.pool_sync import resource_pools_sync
    from providers.services.resource_pools import resource_pool_report

    report = {"kind": "shared_storage", "inventories": {"DISK_GB": {"total": 1000}}}
    resource_pool_report(name=name, report={**report, "members": []})
    resource_pools_sync(names=[name])
    return name


def _names(model, names):
    for name in names:
        model.objects.get_or_create(name=name)
    return dict(model.objects.filter(name__in=names).values_list("name", "id"))


@transaction.atomic
def build_cloud(count, seed=42):
    """A synthetic cloud of ``count`` providers, built with bulk inserts."""
    rng = random.Random(seed)
    roots = max(1, count * 4 // 5)
    classes = _names(ResourceClass, ["VCPU", "MEMORY_MB", "DISK_GB", "PCPU", "SRIOV_NET_VF"])
    traits = _names(Trait, TRAITS + CUSTOM_TRAITS)
    aggregates = Aggregate.objects.bulk_create(
        [Aggregate(uuid=uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(100)]
    )
    nodes, kids = _provider_trees(roots, children=count - roots)
    _host_inventories_and_links(rng, nodes, classes=classes, traits=traits, aggregates=aggregates)
    Inventory.objects.bulk_create([_child_inventory(kid, classes) for kid in kids], batch_size=5000)
    consumers = _consumers(rng, roots)
    allocations = _host_allocations(rng, nodes, consumers, classes) + _child_allocations(
        rng, kids, consumers, classes
    )
    Allocation.objects.bulk_create(allocations, batch_size=5000)
    usage_rebuild()  # written past the allocation service: its usage rows follow
    _scheduling(count)


def _provider_trees(roots, *, children):
    """``roots`` compute hosts (cn-NNNNN) and ``children`` NUMA or NIC children spread over
    them, alternately."""
    nodes = ResourceProvider.objects.bulk_create(
        [ResourceProvider(name=f"cn-{i:05d}", uuid=uuid.uuid4()) for i in range(roots)],
        batch_size=2000,
    )
    ResourceProvider.objects.filter(id__in=[n.id for n in nodes]).update(root=F("id"))
    kids = ResourceProvider.objects.bulk_create(
        [
            ResourceProvider(
                name=f"cn-{i % roots:05d}-{'numa' if i % 2 else 'nic'}{i // roots}",
                uuid=uuid.uuid4(),
                parent_id=nodes[i % roots].id,
                root_id=nodes[i % roots].id,
            )
            for i in range(children)
        ],
        batch_size=2000,
    )
    return nodes, kids


def _host_inventories_and_links(rng, nodes, *, classes, traits, aggregates):
    """Each host's VCPU, MEMORY_MB and DISK_GB of random sizes, three standard traits (and
    now and then a custom one) and one aggregate."""
    inventories, links, members = [], [], []
    for node in nodes:
        cpus = rng.choice([32, 48, 64, 96])
        inventories += [
            Inventory(
                resource_provider=node,
                resource_class_id=classes["VCPU"],
                total=cpus,
                allocation_ratio=4.0,
            ),
            Inventory(
                resource_provider=node,
                resource_class_id=classes["MEMORY_MB"],
                total=cpus * 4096,
                reserved=4096,
                allocation_ratio=1.5,
            ),
            Inventory(
                resource_provider=node,
                resource_class_id=classes["DISK_GB"],
                total=rng.choice([1000, 2000, 4000]),
                reserved=50,
                step_size=10,
            ),
        ]
        for name in rng.sample(TRAITS, 3) + (
            [rng.choice(CUSTOM_TRAITS)] if rng.random() < 0.3 else []
        ):
            links.append(ResourceProviderTrait(resource_provider=node, trait_id=traits[name]))
        members.append(
            ResourceProviderAggregate(resource_provider=node, aggregate=rng.choice(aggregates))
        )
    Inventory.objects.bulk_create(inventories, batch_size=5000)
    ResourceProviderTrait.objects.bulk_create(links, batch_size=5000)
    ResourceProviderAggregate.objects.bulk_create(members, batch_size=5000)


def _child_inventory(kid, classes):
    """A NUMA child's PCPU or a NIC child's SRIOV_NET_VF."""
    pcpu = "numa" in kid.name
    return Inventory(
        resource_provider=kid,
        resource_class_id=classes["PCPU" if pcpu else "SRIOV_NET_VF"],
        total=16 if pcpu else 8,
        max_unit=8 if pcpu else 4,
    )


def _consumers(rng, roots):
    """Two INSTANCE consumers per host, of random projects (one per 40 hosts) and users (one
    per 8 hosts)."""
    projects = Project.objects.bulk_create(
        [Project(external_id=f"project-{i:04d}") for i in range(max(1, roots // 40))]
    )
    users = User.objects.bulk_create(
        [User(external_id=f"user-{i:05d}") for i in range(max(1, roots // 8))]
    )
    instance, _ = ConsumerType.objects.get_or_create(name="INSTANCE")
    return Consumer.objects.bulk_create(
        [
            Consumer(
                uuid=uuid.uuid4(),
                project=rng.choice(projects),
                user=rng.choice(users),
                consumer_type=instance,
                generation=1,
            )
            for _ in range(roots * 2)
        ],
        batch_size=5000,
    )


def _host_allocations(rng, nodes, consumers, classes):
    """Each consumer a random flavor's VCPU, MEMORY_MB and DISK_GB on its host (two per host)."""
    allocations = []
    for index, consumer in enumerate(consumers):
        node = nodes[index // 2]
        flavor = rng.choice([(2, 4096, 20), (4, 8192, 40), (8, 16384, 80), (16, 32768, 160)])
        for rc, used in zip(("VCPU", "MEMORY_MB", "DISK_GB"), flavor, strict=True):
            allocations.append(
                Allocation(
                    resource_provider=node,
                    consumer=consumer,
                    resource_class_id=classes[rc],
                    used=used,
                )
            )
    return allocations


def _child_allocations(rng, kids, consumers, classes):
    """Some PCPU of NUMA children, each held by the consumer of the same index."""
    return [
        Allocation(
            resource_provider=kid,
            consumer=consumers[index],
            resource_class_id=classes["PCPU"],
            used=rng.choice([2, 4, 8]),
        )
        for index, kid in enumerate(kids)
        if "numa" in kid.name and index < len(consumers)
    ]


def _scheduling(count):
    """Flavors, one compute host reported and synced (as a real one would be), pools and
    server groups."""
    from scheduling.models import Flavor

    for name, vcpus, ram, disk in FLAVORS:
        Flavor.objects.get_or_create(name=name, defaults={"vcpus": vcpus, "ram": ram, "disk": disk})
    _bench_host()
    _bench_pools(count=BENCH_POOLS)
    _groups()


def _bench_host():
    """The compute host the host actions act on, reported and synced."""
    from providers.services.compute_nodes import compute_node_report
    from providers.services.host_sync import compute_nodes_sync

    compute_node_report(hostname=BENCH_HOST, report=BENCH_REPORT)
    compute_nodes_sync(hostnames=[BENCH_HOST])


def _bench_pools(*, count):
    """``count`` pools, each offered to 20 of the cloud's hosts, reported and synced."""
    from providers.services.pool_sync import resource_pools_sync
    from providers.services.resource_pools import resource_pool_report

    hosts = list(
        ResourceProvider.objects.filter(parent__isnull=True)
        .exclude(name=BENCH_HOST)
        .order_by("id")
        .values_list("name", flat=True)[: count * 20]
    )
    names = []
    for index in range(count):
        members = hosts[index * 20 : index * 20 + 20]
        report = {"kind": "shared_storage", "inventories": {"DISK_GB": {"total": 100000}}}
        names.append(f"{BENCH_POOL}{index}")
        resource_pool_report(name=names[-1], report={**report, "members": members})
    resource_pools_sync(names=names)


def _groups():
    """BENCH_GROUPS server groups of two servers each (servers recorded directly, as the
    cloud's allocations are)."""
    from scheduling.models import Flavor, Server, ServerGroupMember
    from scheduling.services.server_groups import server_group_create

    hosts = list(
        ResourceProvider.objects.filter(name__startswith="cn-", parent__isnull=True)
        .order_by("id")
        .values_list("name", "id")[: BENCH_GROUPS * 2]
    )
    flavor = Flavor.objects.get(name="m1.small")
    groups = [
        server_group_create(
            name=f"group-{i:03d}",
            policy="anti-affinity" if i % 2 else "affinity",
            rules=None,
            project_id=f"project-{i % 40:04d}",
        )
        for i in range(BENCH_GROUPS)
    ]
    servers = Server.objects.bulk_create(
        [
            Server(
                name=f"member-{i:04d}",
                flavor=flavor,
                project_id=groups[i // 2].project_id,
                user_id="bench",
                host_id=hosts[i % len(hosts)][1],
            )
            for i in range(len(groups) * 2)
        ]
    )
    ServerGroupMember.objects.bulk_create(
        [ServerGroupMember(group=groups[i // 2], server=s) for i, s in enumerate(servers)]
    )
