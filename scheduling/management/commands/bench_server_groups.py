"""Time boots into server groups beside plain boots, and count their SQL statements.

    python manage.py bench_server_groups --hosts 200 --boots 50

A scratch database (``<NAME>_bench``) is created next to the configured one and dropped at the
end (``--keep`` keeps it). On ``--hosts`` empty hosts, ``--boots`` sequential single boots are
timed three ways: without a group, into an anti-affinity group (one member per host) and into
an affinity group; then one ``count=10`` boot into each kind of group. What a group costs is
its lock, the members' hosts read once per pass and the policy checked again in the claim.
"""

import statistics
import time
import uuid

from django.core.management.base import BaseCommand
from django.db import connection
from django.test.utils import CaptureQueriesContext

from providers.models import Inventory, ResourceClass, ResourceProvider
from scheduling.models import Flavor, ServerGroup
from scheduling.services.servers import servers_create

INVENTORY = {"VCPU": 64, "MEMORY_MB": 262144, "DISK_GB": 4000}


def seed_hosts(count):
    classes = {name: ResourceClass.objects.get_or_create(name=name)[0] for name in INVENTORY}
    providers = [
        ResourceProvider(uuid=uuid.uuid4(), name=f"bench-sg-{index}") for index in range(count)
    ]
    ResourceProvider.objects.bulk_create(providers)
    for provider in providers:
        ResourceProvider.objects.filter(pk=provider.pk).update(root=provider)
    Inventory.objects.bulk_create(
        [
            Inventory(resource_provider=p, resource_class=classes[name], total=total)
            for p in providers
            for name, total in INVENTORY.items()
        ]
    )


class Command(BaseCommand):
    help = "Time boots into server groups beside plain boots."

    def add_arguments(self, parser):
        parser.add_argument("--hosts", type=int, default=200)
        parser.add_argument("--boots", type=int, default=50)
        parser.add_argument("--keep", action="store_true", help="keep the scratch database")

    def handle(self, *args, **options):
        old_name = connection.settings_dict["NAME"]
        connection.settings_dict.setdefault("TEST", {})["NAME"] = f"{old_name}_bench"
        connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=options["keep"])
        try:
            self._run(options["hosts"], options["boots"])
        finally:
            if not options["keep"]:
                connection.creation.destroy_test_db(old_name, verbosity=0)

    def _run(self, hosts, boots):
        seed_hosts(hosts)
        flavor = Flavor.objects.create(name="bench.sg", vcpus=1, ram=512, disk=1)
        self.stdout.write(f"{hosts} hosts, {boots} sequential boots each ({connection.vendor})")
        for label, policy in (
            ("no group", None),
            ("anti-affinity", "anti-affinity"),
            ("affinity", "affinity"),
        ):
            group = self._group(policy, label)
            self._time(label, flavor, group, boots, count=1)
        for policy in ("anti-affinity", "affinity"):
            self._time(f"{policy} count=10", flavor, self._group(policy, policy), 1, count=10)

    def _group(self, policy, label):
        if policy is None:
            return None
        return ServerGroup.objects.create(name=label, policy=policy, project_id="bench")

    def _time(self, label, flavor, group, boots, *, count):
        seconds, statements = [], []
        for index in range(boots):
            with CaptureQueriesContext(connection) as queries:
                started = time.perf_counter()
                servers_create(
                    name=f"{label}-{index}",
                    flavor=flavor,
                    project_id="bench",
                    user_id="bench",
                    count=count,
                    group=group,
                )
                seconds.append(time.perf_counter() - started)
            statements.append(len(queries))
        self.stdout.write(
            f"{label:>24}: median {statistics.median(seconds) * 1000:7.1f} ms, "
            f"max {max(seconds) * 1000:7.1f} ms, {statistics.median(statements):.0f} statements "
            f"per request (count={count})"
        )
