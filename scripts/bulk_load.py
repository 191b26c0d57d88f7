#!/usr/bin/env python3
"""Load a large cloud straight into PostgreSQL with COPY, for benchmarks (not the API's path).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_100k \\
        .venv/bin/python scripts/bulk_load.py --fresh --compute 100000 --nested 1000 --usage 0.25

The topologies are ``scripts/bench_candidates.py``'s, with the same names and uuids, so its
queries (and ``scripts/bench_bare.py``'s) apply unchanged:

- ``--compute N``: compute nodes ``compute-00000``... with VCPU 32 (ratio 16), MEMORY_MB 131072
  (512 reserved, ratio 1.5), DISK_GB 1024 (10 reserved); every fourth in the shared aggregate
  with ``HW_CPU_X86_AVX2``; one sharing storage provider in that aggregate;
- ``--nested N``: hosts ``nested-00000``... holding DISK_GB, each with two NUMA children (VCPU,
  MEMORY_MB, ``HW_NUMA_ROOT``), each with an SR-IOV PF child (SRIOV_NET_VF,
  ``CUSTOM_PHYSNET_PUBLIC``): 5 providers a host;
- ``--wide N``: roots ``wide-000``... without inventory, each with 8 children holding VGPU 8;
- ``--usage F``: a fraction F of the compute nodes hold one instance each (VCPU 4, MEMORY_MB
  8192, DISK_GB 40), and as many of the nested hosts one on their first NUMA node.

Rows are built from the models' own fields (every column gets the field's default unless set),
ids are taken after the tables' current maximum and the sequences moved past them. ``--fresh``
drops and recreates the database and migrates it first. Ends with ``VACUUM ANALYZE`` (unless
``--no-vacuum``).
"""

import argparse
import datetime as dt
import io
import json
import os
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "placementsite.settings")

from bench_candidates import COMPUTE_INVENTORY, SHARED_AGGREGATE, provider_uuid  # noqa: E402

NESTED_DISK = {"total": 1024, "max_unit": 1024}
NUMA_INVENTORY = {
    "VCPU": {"total": 16, "allocation_ratio": 4.0, "max_unit": 16},
    "MEMORY_MB": {"total": 65536, "max_unit": 65536},
}
WIDE_GPU = {"total": 8, "max_unit": 8}
PF_INVENTORY = {"SRIOV_NET_VF": {"total": 16, "max_unit": 16}}
INSTANCE = {"VCPU": 4, "MEMORY_MB": 8192, "DISK_GB": 40}
NUMA_INSTANCE = {"VCPU": 4, "MEMORY_MB": 8192}


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def recreate_database(url):
    import psycopg2

    name = url.rsplit("/", 1)[1]
    admin = psycopg2.connect(url.rsplit("/", 1)[0] + "/postgres")
    admin.autocommit = True
    with admin.cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        cursor.execute(f'CREATE DATABASE "{name}"')
    admin.close()


def _text(value):
    """One value in COPY's text format."""
    if value is None:
        return r"\N"
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, (dict, list)):
        value = json.dumps(value)
    elif isinstance(value, (dt.datetime, dt.date)):
        value = value.isoformat()
    value = str(value)
    return value.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


class Table:
    """Rows of one model, written with one COPY."""

    def __init__(self, model, cursor):
        self.model = model
        self.fields = [f for f in model._meta.concrete_fields]
        self.columns = [f.column for f in self.fields]
        table = model._meta.db_table
        cursor.execute(f'SELECT COALESCE(MAX(id), 0) FROM "{table}"')
        self.next_id = cursor.fetchone()[0] + 1
        self.buffer = io.StringIO()
        self.count = 0
        self.now = dt.datetime.now(dt.UTC)

    def add(self, **values):
        pk = self.next_id
        self.next_id += 1
        values["id"] = pk
        row = []
        for field in self.fields:
            if field.attname in values:
                value = values[field.attname]
            elif getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
                value = self.now
            else:
                value = field.get_default()
            row.append(_text(value))
        self.buffer.write("\t".join(row) + "\n")
        self.count += 1
        return pk

    def copy(self, cursor):
        if not self.count:
            return
        table = self.model._meta.db_table
        self.buffer.seek(0)
        columns = ", ".join(f'"{c}"' for c in self.columns)
        cursor.copy_expert(f'COPY "{table}" ({columns}) FROM STDIN', self.buffer)
        cursor.execute(
            "SELECT setval(pg_get_serial_sequence(%s, 'id'), %s)", [table, self.next_id - 1]
        )
        log(f"  {table}: {self.count} rows")


class Cloud:
    """The rows of one load: providers with their inventories, traits and aggregates, and
    instances holding allocations."""

    def __init__(self, cursor, ids):
        from allocations.models import Allocation, Consumer, ProviderUsage
        from providers.models import (
            Inventory,
            ResourceProvider,
            ResourceProviderAggregate,
            ResourceProviderTrait,
        )

        self.ids = ids
        self.providers = Table(ResourceProvider, cursor)
        self.inventories = Table(Inventory, cursor)
        self.traits = Table(ResourceProviderTrait, cursor)
        self.aggregates = Table(ResourceProviderAggregate, cursor)
        self.consumers = Table(Consumer, cursor)
        self.allocations = Table(Allocation, cursor)
        # The usage rows the allocation service would keep: the allocations summed per
        # provider and class (the providers are new, so are their rows).
        self.usages = Table(ProviderUsage, cursor)
        self.used = {}

    def provider(self, name, spec, *, parent=None, root=None, traits=(), aggregates=()):
        pk = self.providers.next_id
        self.providers.add(
            uuid=provider_uuid(name), name=name, generation=1, parent_id=parent, root_id=root or pk
        )
        for class_name, fields in spec.items():
            self.inventories.add(
                resource_provider_id=pk, resource_class_id=self.ids[class_name], **fields
            )
        for trait in traits:
            self.traits.add(resource_provider_id=pk, trait_id=self.ids[trait])
        for aggregate in aggregates:
            self.aggregates.add(resource_provider_id=pk, aggregate_id=aggregate)
        return pk

    def instance(self, holdings):
        consumer = self.consumers.add(
            uuid=uuid.uuid4(),
            project_id=self.ids["project"],
            user_id=self.ids["user"],
            consumer_type_id=self.ids["INSTANCE"],
            generation=1,
        )
        for pk, resources in holdings:
            for class_name, used in resources.items():
                self.allocations.add(
                    resource_provider_id=pk,
                    consumer_id=consumer,
                    resource_class_id=self.ids[class_name],
                    used=used,
                )
                key = (pk, self.ids[class_name])
                self.used[key] = self.used.get(key, 0) + used

    def copy(self, cursor):
        for (provider_id, class_id), used in sorted(self.used.items()):
            self.usages.add(resource_provider_id=provider_id, resource_class_id=class_id, used=used)
        for table in (
            self.providers,
            self.inventories,
            self.traits,
            self.aggregates,
            self.consumers,
            self.allocations,
            self.usages,
        ):
            table.copy(cursor)


def load_compute(cloud, count, every):
    if count:
        cloud.provider(
            "shared-storage",
            {"DISK_GB": {"total": 100000, "max_unit": 100000}},
            traits=["MISC_SHARES_VIA_AGGREGATE"],
            aggregates=[cloud.ids["aggregate"]],
        )
    for index in range(count):
        subset = index % 4 == 0
        pk = cloud.provider(
            f"compute-{index:05d}",
            COMPUTE_INVENTORY,
            traits=["HW_CPU_X86_AVX2"] if subset else (),
            aggregates=[cloud.ids["aggregate"]] if subset else (),
        )
        if every and index % every == 1 % every:
            cloud.instance([(pk, INSTANCE)])


def load_nested(cloud, count, every):
    for index in range(count):
        name = f"nested-{index:05d}"
        root = cloud.provider(name, {"DISK_GB": NESTED_DISK})
        for numa in (0, 1):
            numa_pk = cloud.provider(
                f"{name}-numa{numa}",
                NUMA_INVENTORY,
                parent=root,
                root=root,
                traits=["HW_NUMA_ROOT"],
            )
            cloud.provider(
                f"{name}-numa{numa}-pf{numa}",
                PF_INVENTORY,
                parent=numa_pk,
                root=root,
                traits=["CUSTOM_PHYSNET_PUBLIC"],
            )
            if numa == 0 and every and index % every == 1 % every:
                cloud.instance([(numa_pk, NUMA_INSTANCE), (root, {"DISK_GB": 40})])


def load_wide(cloud, count):
    for index in range(count):
        name = f"wide-{index:03d}"
        root = cloud.provider(name, {})
        for child in range(8):
            cloud.provider(f"{name}-gpu{child}", {"VGPU": WIDE_GPU}, parent=root, root=root)


def reference_ids():
    """Ids of the classes, traits, aggregate, project, user and consumer type rows use."""
    from allocations.models import ConsumerType, Project, User
    from providers.models import Aggregate, ResourceClass, Trait

    ids = dict(ResourceClass.objects.values_list("name", "id"))
    for name in (
        "HW_CPU_X86_AVX2",
        "MISC_SHARES_VIA_AGGREGATE",
        "HW_NUMA_ROOT",
        "CUSTOM_PHYSNET_PUBLIC",
    ):
        ids[name] = Trait.objects.get_or_create(name=name)[0].id
    ids["aggregate"] = Aggregate.objects.get_or_create(uuid=SHARED_AGGREGATE)[0].id
    ids["project"] = Project.objects.get_or_create(external_id="bench")[0].id
    ids["user"] = User.objects.get_or_create(external_id="bench")[0].id
    ids["INSTANCE"] = ConsumerType.objects.get_or_create(name="INSTANCE")[0].id
    return ids


def load(args):
    import django

    django.setup()
    from django.db import connection, transaction

    started = time.monotonic()
    every = round(1 / args.usage) if args.usage > 0 else 0
    with transaction.atomic(), connection.cursor() as cursor:
        raw = getattr(cursor, "cursor", cursor)  # psycopg2's own, for copy_expert
        cloud = Cloud(raw, reference_ids())
        load_compute(cloud, args.compute, every)
        load_nested(cloud, args.nested, every)
        load_wide(cloud, args.wide)
        log(f"built rows in {time.monotonic() - started:.1f} s")
        cloud.copy(raw)
    log(f"loaded in {time.monotonic() - started:.1f} s")
    if args.no_vacuum:
        return
    connection.close()
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    log(f"analyzed; total {time.monotonic() - started:.1f} s")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compute", type=int, default=0, help="compute nodes")
    parser.add_argument("--nested", type=int, default=0, help="nested hosts (5 providers each)")
    parser.add_argument("--wide", type=int, default=0, help="roots with 8 VGPU children each")
    parser.add_argument("--usage", type=float, default=0.25, help="fraction holding an instance")
    parser.add_argument("--fresh", action="store_true", help="drop, create and migrate first")
    parser.add_argument(
        "--no-vacuum",
        action="store_true",
        help="leave the tables as loaded (no VACUUM ANALYZE: no planner statistics, no "
        "visibility map), as a database loaded over the API is while autovacuum is off",
    )
    args = parser.parse_args(argv)
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith("postgres"):
        parser.error("set DATABASE_URL to a PostgreSQL database")
    if args.fresh:
        recreate_database(url)
        import django
        from django.core.management import call_command

        django.setup()
        call_command("migrate", verbosity=0, interactive=False)
        log("migrated")
    load(args)


if __name__ == "__main__":
    main()
