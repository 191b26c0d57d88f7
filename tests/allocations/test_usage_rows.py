"""The maintained usage rows (allocations.ProviderUsage) equal the sum of the allocations.

The rule tested: for every provider and class, the row's ``used`` is the sum of its
allocations; a pair without allocations has no row or a row at 0 (a row is never removed by
the allocation service, only brought to 0); no row is ever negative. Random writes (PUT and
POST of allocations, emptied consumers, deletes, frees, the migration cleanup, reshapes,
provider deletes) run one after the other on any database, then from several threads at once
on PostgreSQL (each thread its own connection, so its own transactions and row locks).
"""

import random
import threading
import traceback
import uuid as uuidlib
from datetime import timedelta

import pytest
from django.db import connections
from django.db.models import Sum
from django.utils import timezone

from allocations.models import Allocation, ProviderUsage
from allocations.selectors.usage import usage_by_provider_and_class, usage_drift
from allocations.services.allocations import (
    ConsumerAllocationWrite,
    allocation_delete,
    allocation_replace,
    allocations_replace,
    allocations_reshape,
    consumers_free,
)
from allocations.services.usage import usage_rebuild
from placementsite.core.exceptions import DomainError
from providers.capacity import Capacity
from providers.models import ResourceProvider
from providers.services.inventories import ProviderInventories
from providers.services.resource_providers import resource_provider_delete
from scheduling.models import Flavor, Migration
from scheduling.services.cleanup import migrations_cleanup
from tests.factories import make_provider

CLASSES = {"VCPU": 32, "MEMORY_MB": 8192, "DISK_GB": 200}
PROVIDERS = 5
CONSUMERS = 24


def summed_allocations():
    """``{(provider id, class id): SUM(used)}`` straight from the allocations."""
    return {
        (row["resource_provider_id"], row["resource_class_id"]): row["total"]
        for row in Allocation.objects.values("resource_provider_id", "resource_class_id")
        .annotate(total=Sum("used"))
        .order_by()
    }


def assert_rows_equal_the_sums():
    rows = {
        (p, c): used
        for p, c, used in ProviderUsage.objects.values_list(
            "resource_provider_id", "resource_class_id", "used"
        )
    }
    assert all(used >= 0 for used in rows.values()), rows
    in_use = {key: used for key, used in rows.items() if used}
    assert in_use == summed_allocations()
    assert usage_by_provider_and_class() == in_use
    assert usage_drift() == []


class Cloud:
    """A few providers with room for some of the consumers, and random writes on them."""

    def __init__(self):
        self.providers = [
            str(make_provider(f"usage-{n}", inventories=CLASSES).uuid) for n in range(PROVIDERS)
        ]
        self.consumers = [str(uuidlib.uuid4()) for _ in range(CONSUMERS)]
        self.flavor = Flavor.objects.create(name="usage", vcpus=1, ram=64, disk=1)

    def holdings(self, rng):
        return {
            provider: {
                name: rng.randint(1, total // 3)
                for name, total in CLASSES.items()
                if rng.random() < 0.7
            }
            or {"VCPU": 1}
            for provider in rng.sample(self.providers, rng.randint(1, 2))
        }

    def put(self, rng):
        allocation_replace(
            consumer=ConsumerAllocationWrite(
                consumer_uuid=rng.choice(self.consumers), allocations=self.holdings(rng)
            )
        )

    def post(self, rng):
        chosen = rng.sample(self.consumers, 3)
        allocations_replace(
            consumers=[
                ConsumerAllocationWrite(consumer_uuid=chosen[0], allocations=self.holdings(rng)),
                ConsumerAllocationWrite(consumer_uuid=chosen[1], allocations=self.holdings(rng)),
                ConsumerAllocationWrite(consumer_uuid=chosen[2], allocations={}),  # emptied
            ]
        )

    def delete(self, rng):
        allocation_delete(consumer_uuid=rng.choice(self.consumers))

    def free(self, rng):
        consumers_free(consumer_uuids=rng.sample(self.consumers, 2))

    def cleanup(self, rng):
        """A finished migration whose consumer still holds allocations: the cleanup frees it."""
        consumer = rng.choice(self.consumers)
        Migration.objects.get_or_create(
            uuid=consumer,
            defaults={
                "server_uuid": uuidlib.uuid4(),
                "kind": Migration.Kind.MIGRATE,
                "status": Migration.Status.COMPLETED,
                "old_flavor": self.flavor,
                "new_flavor": self.flavor,
                "project_id": "p",
                "user_id": "u",
                "lease_started_at": timezone.now() - timedelta(hours=1),
            },
        )
        migrations_cleanup(origin="command")

    def reshape(self, rng):
        """A consumer's allocations moved to another provider, with an inventory write (the
        same inventory) of the provider it leaves, as the host sync's reshape does."""
        source, target = rng.sample(self.providers, 2)
        generation = ResourceProvider.objects.get(uuid=source).generation
        inventory = {name: Capacity(total=total) for name, total in CLASSES.items()}
        allocations_reshape(
            inventories={source: ProviderInventories(generation, inventory)},
            consumers=[
                ConsumerAllocationWrite(
                    consumer_uuid=rng.choice(self.consumers),
                    allocations={target: {"VCPU": rng.randint(1, 4)}},
                )
            ],
            allow_reserved_equal_total=True,
        )

    def provider_churn(self, rng):
        """A provider made, allocated from, freed and deleted (its rows at 0 go with it); a
        delete of one that holds allocations is refused."""
        provider = str(make_provider(f"churn-{uuidlib.uuid4()}", inventories=CLASSES).uuid)
        consumer = str(uuidlib.uuid4())
        allocation_replace(
            consumer=ConsumerAllocationWrite(
                consumer_uuid=consumer, allocations={provider: {"VCPU": 2}}
            )
        )
        with pytest.raises(DomainError):
            resource_provider_delete(uuid=provider)
        allocation_delete(consumer_uuid=consumer)
        resource_provider_delete(uuid=provider)

    def random_write(self, rng):
        operation = rng.choice(
            [self.put, self.put, self.post, self.delete, self.free, self.reshape]
            + [self.cleanup, self.provider_churn]
        )
        try:
            operation(rng)
        except DomainError:
            pass  # refused (capacity, conflict, nothing to delete): nothing changed


@pytest.mark.django_db
def test_the_rows_equal_the_sums_after_random_writes_one_after_the_other():
    cloud = Cloud()
    rng = random.Random(28)
    for step in range(150):
        cloud.random_write(rng)
        if step % 25 == 0:
            assert_rows_equal_the_sums()
    assert_rows_equal_the_sums()
    assert ProviderUsage.objects.filter(used=0).exists()  # rows at 0 stay (see the module doc)


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_the_rows_equal_the_sums_after_random_concurrent_writes():
    cloud = Cloud()
    threads, errors = 6, []
    barrier = threading.Barrier(threads)

    def run(seed):
        rng = random.Random(seed)
        try:
            barrier.wait()
            for _ in range(40):
                cloud.random_write(rng)
        except Exception:  # surfaced below, with where it was raised
            errors.append(traceback.format_exc())
        finally:
            connections.close_all()

    workers = [threading.Thread(target=run, args=(seed,)) for seed in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert errors == []
    assert Allocation.objects.exists()
    assert_rows_equal_the_sums()


@pytest.mark.django_db
def test_drift_is_found_and_a_rebuild_repairs_it():
    cloud = Cloud()
    rng = random.Random(7)
    for _ in range(20):
        cloud.random_write(rng)
    rows = list(ProviderUsage.objects.filter(used__gt=0).order_by("id")[:2])
    ProviderUsage.objects.filter(pk=rows[0].pk).update(used=rows[0].used + 5)
    rows[1].delete()
    drift = usage_drift()
    assert {(type(d.used), type(d.summed)) for d in drift} == {(int, int)}
    assert [(d.provider_id, d.class_id, d.used - d.summed) for d in drift] == sorted(
        [
            (rows[0].resource_provider_id, rows[0].resource_class_id, 5),
            (rows[1].resource_provider_id, rows[1].resource_class_id, -rows[1].used),
        ]
    )
    assert usage_rebuild(provider_ids=[d.provider_id for d in drift]) == 2
    assert_rows_equal_the_sums()
    # The whole table lost (a load written past the service): rebuilt from the allocations.
    ProviderUsage.objects.all().delete()
    assert usage_rebuild() > 0
    assert_rows_equal_the_sums()


@pytest.mark.django_db(transaction=True)
def test_the_migration_backfills_the_rows_from_the_allocations():
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    cloud = Cloud()
    rng = random.Random(3)
    for _ in range(15):
        cloud.random_write(rng)
    assert Allocation.objects.exists()
    before = ("allocations", "0002_device_assignments")
    executor = MigrationExecutor(connection)
    latest = executor.loader.graph.leaf_nodes("allocations")
    executor.migrate([before])  # the table goes
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(latest)  # made again, from the allocations
    assert_rows_equal_the_sums()
    assert not ProviderUsage.objects.filter(used=0).exists()  # the backfill writes sums only
