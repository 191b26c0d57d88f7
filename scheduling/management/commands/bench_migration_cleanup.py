"""Time one cleanup run over N finished migrations that each left allocations behind.

    python manage.py bench_migration_cleanup --migrations 10000

A scratch database (``<NAME>_bench``) is created next to the configured one, filled with N
migrations in a final state (confirmed, reverted, error in turn), each migration consumer
still holding VCPU, MEMORY_MB and DISK_GB on one of the hosts, and dropped at the end
(``--keep`` keeps it). The cleanup runs once, as the periodic task does; its time, its query
count and what it freed are printed.
"""

import time
import uuid

from django.core.management.base import BaseCommand
from django.db import connection, reset_queries, transaction
from django.test.utils import CaptureQueriesContext

from allocations.models import Allocation, Consumer, ConsumerType, Project, User
from allocations.services.usage import usage_rebuild
from providers.models import Inventory, ResourceClass, ResourceProvider
from scheduling.models import Flavor, Migration
from scheduling.services.cleanup import migrations_cleanup

HELD = {"VCPU": 2, "MEMORY_MB": 2048, "DISK_GB": 20}
FINAL = [Migration.Status.CONFIRMED, Migration.Status.REVERTED, Migration.Status.ERROR]


@transaction.atomic
def seed_finished_migrations(count, *, hosts=50):
    """``count`` final migrations whose consumers still hold ``HELD`` on one of ``hosts``
    providers; bulk-written (the cleanup is what is measured, not this). Returns the hosts.

    One transaction: a cleanup running meanwhile (beat, in the worker test) must never see a
    finished migration before its consumer's allocations exist, or it marks it cleaned and
    the allocations written after it stay behind."""
    classes = {name: ResourceClass.objects.get_or_create(name=name)[0] for name in HELD}
    providers = []
    for _index in range(hosts):
        host_uuid = uuid.uuid4()
        providers.append(ResourceProvider(uuid=host_uuid, name=f"bench-host-{host_uuid}"))
    ResourceProvider.objects.bulk_create(providers)
    for provider in providers:
        ResourceProvider.objects.filter(pk=provider.pk).update(root=provider)
    per_host = count // hosts + 1
    Inventory.objects.bulk_create(
        [
            Inventory(
                resource_provider=provider,
                resource_class=classes[name],
                total=amount * per_host,
            )
            for provider in providers
            for name, amount in HELD.items()
        ]
    )
    flavor, _ = Flavor.objects.get_or_create(
        name="bench.cleanup", defaults={"vcpus": 2, "ram": 2048, "disk": 20}
    )
    project = Project.objects.get_or_create(external_id="bench")[0]
    user = User.objects.get_or_create(external_id="bench")[0]
    migration_type = ConsumerType.objects.get_or_create(name="MIGRATION")[0]
    migrations, consumers = [], []
    for index in range(count):
        source = providers[index % hosts]
        migrations.append(
            Migration(
                server_uuid=uuid.uuid4(),
                kind=Migration.Kind.MIGRATE,
                status=FINAL[index % len(FINAL)],
                source=source,
                dest=providers[(index + 1) % hosts],
                old_flavor=flavor,
                new_flavor=flavor,
                source_allocations={str(source.uuid): HELD},
                project_id="bench",
                user_id="bench",
                lease_started_at="2100-01-01T00:00:00Z",
            )
        )
    Migration.objects.bulk_create(migrations, batch_size=2000)
    for migration in migrations:
        consumers.append(
            Consumer(
                uuid=migration.uuid,
                project=project,
                user=user,
                consumer_type=migration_type,
                generation=1,
            )
        )
    Consumer.objects.bulk_create(consumers, batch_size=2000)
    Allocation.objects.bulk_create(
        [
            Allocation(
                resource_provider_id=migration.source_id,
                consumer=consumer,
                resource_class=classes[name],
                used=amount,
            )
            for migration, consumer in zip(migrations, consumers, strict=True)
            for name, amount in HELD.items()
        ],
        batch_size=5000,
    )
    usage_rebuild()  # written past the allocation service: its usage rows follow
    return providers


class Command(BaseCommand):
    help = "Time one migration cleanup over N finished migrations with leftover allocations."

    def add_arguments(self, parser):
        parser.add_argument("--migrations", type=int, default=10000)
        parser.add_argument("--keep", action="store_true", help="keep the scratch database")
        parser.add_argument("--slowest", type=int, default=0, help="print the N slowest queries")

    def handle(self, *args, **options):
        count = options["migrations"]
        old_name = connection.settings_dict["NAME"]
        connection.settings_dict.setdefault("TEST", {})["NAME"] = f"{old_name}_bench"
        connection.creation.create_test_db(verbosity=0, autoclobber=True, keepdb=options["keep"])
        try:
            Migration.objects.all().delete()
            Allocation.objects.filter(consumer__consumer_type__name="MIGRATION").delete()
            usage_rebuild()
            started = time.perf_counter()
            seed_finished_migrations(count)
            self.stdout.write(
                f"seeded {count} finished migrations, "
                f"{Allocation.objects.count()} allocations in "
                f"{time.perf_counter() - started:.1f} s ({connection.vendor})"
            )
            reset_queries()
            with CaptureQueriesContext(connection) as queries:
                started = time.perf_counter()
                result = migrations_cleanup(origin="command")
                elapsed = time.perf_counter() - started
            sql_seconds = sum(float(q["time"]) for q in queries.captured_queries)
            self.stdout.write(
                f"cleanup: {elapsed:.2f} s ({sql_seconds:.2f} s in SQL), {len(queries)} queries, "
                f"checked {result.checked}, "
                f"freed {result.freed_allocations} allocations of {result.freed_migrations} "
                f"migrations ({result.freed_migrations / elapsed:.0f} migrations/s)"
            )
            timed = sorted(queries.captured_queries, key=lambda q: -float(q["time"]))
            for query in timed[: options["slowest"]]:
                self.stdout.write(f"  {float(query['time']) * 1000:8.1f} ms  {query['sql'][:150]}")
            left = Allocation.objects.filter(consumer__uuid__in=Migration.objects.values("uuid"))
            self.stdout.write(f"left behind: {left.count()} allocations")
        finally:
            if not options["keep"]:
                connection.creation.destroy_test_db(old_name, verbosity=0)
