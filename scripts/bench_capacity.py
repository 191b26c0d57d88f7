#!/usr/bin/env python3
"""Benchmark ``GET /api/capacity/?flavor=``: how long "how many more fit" takes on many hosts.

    .venv/bin/python scripts/bench_capacity.py --hosts 10000

Loads ``--hosts`` compute hosts (VCPU, MEMORY_MB, DISK_GB, a quarter of them with some usage
and in an aggregate, plus a sharing storage provider; with ``--numa N``, every Nth host has its
VCPU and MEMORY_MB on two ``HW_NUMA_ROOT`` children instead) straight into a fresh PostgreSQL
database
``bench_capacity`` (bulk inserts: loading is not what is measured), analyzes it, then asks
``GET /api/capacity/`` through the whole Django stack (middleware, auth, DRF, the selector, JSON)
``--repeat`` times per query and prints median and p95 in milliseconds. The target is under
1 s for 10,000 hosts.
"""

import argparse
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import bench_candidates as bc  # noqa: E402  (database helpers)

DATABASE = os.environ.get("BENCH_CAPACITY_DB", "bench_capacity")


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=10000)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--numa", type=int, default=2, help="every Nth host is a NUMA host")
    return parser.parse_args()


def setup_django():
    os.environ["DATABASE_URL"] = f"{bc.PG_URL}/{DATABASE}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "placementsite.settings")
    os.environ["PLACEMENT_AUTH_STRATEGY"] = "noauth2"
    os.environ.setdefault("PLACEMENT_LOG_LEVEL", "WARNING")
    os.environ["DJANGO_ALLOWED_HOSTS"] = "testserver,localhost,127.0.0.1"
    import django

    django.setup()


def load(count, numa_every=0):
    from django.core.management import call_command
    from django.db import transaction

    from allocations.models import Allocation, Consumer, Project, User
    from allocations.services.usage import usage_rebuild
    from providers.models import (
        Aggregate,
        Inventory,
        ResourceClass,
        ResourceProvider,
        ResourceProviderAggregate,
        ResourceProviderTrait,
        Trait,
    )
    from scheduling.models import Flavor

    call_command("migrate", "--noinput", "--skip-checks", verbosity=0)
    classes = {
        rc.name: rc
        for rc in ResourceClass.objects.filter(name__in=["VCPU", "MEMORY_MB", "DISK_GB"])
    }
    with transaction.atomic():
        providers = ResourceProvider.objects.bulk_create(
            ResourceProvider(name=f"cap-{i:05d}", uuid=uuid.uuid4()) for i in range(count)
        )
        ResourceProvider.objects.filter(root__isnull=True).update(root_id=models_f("id"))
        numa_roots = providers[1::numa_every] if numa_every else []
        cells = ResourceProvider.objects.bulk_create(
            ResourceProvider(name=f"{p.name}-n{n}", uuid=uuid.uuid4(), parent=p, root=p)
            for p in numa_roots
            for n in range(2)
        )
        numa_ids = {p.id for p in numa_roots}
        numa_root = Trait.objects.get(name="HW_NUMA_ROOT")
        ResourceProviderTrait.objects.bulk_create(
            (ResourceProviderTrait(resource_provider=c, trait=numa_root) for c in cells),
            batch_size=5000,
        )
        inventories = []
        for cell in cells:
            inventories += [
                Inventory(
                    resource_provider=cell,
                    resource_class=classes["VCPU"],
                    total=16,
                    allocation_ratio=4.0,
                ),
                Inventory(resource_provider=cell, resource_class=classes["MEMORY_MB"], total=65536),
            ]
        for p in providers:
            if p.id in numa_ids:
                inventories.append(
                    Inventory(resource_provider=p, resource_class=classes["DISK_GB"], total=1000)
                )
                continue
            inventories += [
                Inventory(
                    resource_provider=p,
                    resource_class=classes["VCPU"],
                    total=32,
                    allocation_ratio=4.0,
                ),
                Inventory(
                    resource_provider=p,
                    resource_class=classes["MEMORY_MB"],
                    total=131072,
                    reserved=512,
                ),
                Inventory(resource_provider=p, resource_class=classes["DISK_GB"], total=1000),
            ]
        Inventory.objects.bulk_create(inventories, batch_size=5000)
        aggregate = Aggregate.objects.create(uuid=uuid.uuid4())
        ResourceProviderAggregate.objects.bulk_create(
            (
                ResourceProviderAggregate(resource_provider=p, aggregate=aggregate)
                for p in providers[::4]
            ),
            batch_size=5000,
        )
        storage = ResourceProvider.objects.create(name="cap-shared-storage", uuid=uuid.uuid4())
        storage.root = storage
        storage.save(update_fields=["root"])
        Inventory.objects.create(
            resource_provider=storage, resource_class=classes["DISK_GB"], total=100000
        )
        ResourceProviderTrait.objects.create(
            resource_provider=storage, trait=Trait.objects.get(name="MISC_SHARES_VIA_AGGREGATE")
        )
        ResourceProviderAggregate.objects.create(resource_provider=storage, aggregate=aggregate)
        project = Project.objects.create(external_id="bench")
        user = User.objects.create(external_id="bench")
        consumers = Consumer.objects.bulk_create(
            Consumer(uuid=uuid.uuid4(), project=project, user=user, generation=1)
            for _ in providers[::4]
        )
        allocations = []
        for consumer, p in zip(consumers, providers[::4], strict=True):
            if p.id in numa_ids:
                continue  # (every 4th host is even: never a NUMA one with --numa 2)
            allocations += [
                Allocation(
                    resource_provider=p, consumer=consumer, resource_class=classes["VCPU"], used=8
                ),
                Allocation(
                    resource_provider=p,
                    consumer=consumer,
                    resource_class=classes["MEMORY_MB"],
                    used=16384,
                ),
            ]
        Allocation.objects.bulk_create(allocations, batch_size=5000)
        usage_rebuild()  # written past the allocation service: its usage rows follow
        Flavor.objects.create(name="bench.small", vcpus=2, ram=4096, disk=20)
        Flavor.objects.create(name="bench.large", vcpus=8, ram=32768, disk=100)
        Flavor.objects.create(
            name="bench.numa", vcpus=4, ram=8192, disk=20, extra_specs={"hw:numa_nodes": "2"}
        )
    return str(aggregate.uuid)


def models_f(name):
    from django.db.models import F

    return F(name)


def measure(client, path, repeat):
    samples = []
    body = None
    for _ in range(repeat):
        started = time.perf_counter()
        response = client.get(path, HTTP_X_AUTH_TOKEN="admin")
        samples.append(time.perf_counter() - started)
        assert response.status_code == 200, response.content[:300]
        body = response.json()
    return samples, body


def main():
    args = parse_args()
    bc.recreate_database(DATABASE)
    setup_django()
    bc.log(f"loading {args.hosts} hosts into {DATABASE}")
    aggregate = load(args.hosts, args.numa)
    bc.analyze_database(DATABASE)
    from django.test import Client

    client = Client()
    print(f"| query ({args.hosts} hosts) | hosts listed | total | median ms | p95 ms |")
    print("|---|---|---|---|---|")
    for query in (
        "flavor=bench.small",
        "flavor=bench.large",
        "flavor=bench.numa",
        f"flavor=bench.small&aggregate={aggregate}",
    ):
        samples, body = measure(client, f"/api/capacity/?{query}", args.repeat)
        label = query.replace(aggregate, "AGG")
        median = statistics.median(samples) * 1000
        p95 = bc.percentile(samples, 95) * 1000
        print(f"| {label} | {len(body['hosts'])} | {body['total']} | {median:.0f} | {p95:.0f} |")


if __name__ == "__main__":
    main()
