#!/usr/bin/env python3
"""Differential check of the project's NUMA placement against Nova's own NUMA fitting.

    .venv/bin/python scripts/numa_differential.py --seed 1 --cases 200 [--nova-python PATH]
        [--page-sizes]

Random hosts (1-4 NUMA cells of 2-16 CPUs and 2-64 GiB, some with SMT -- two threads a core,
``cpu_info.topology.threads`` -- some with dedicated CPUs, whole cores on SMT hosts, some with
2 MiB huge pages) and random flavors (``hw:numa_nodes`` 1-4, some asymmetric with
``hw:numa_cpus.N``/``hw:numa_mem.N``, some ``hw:cpu_policy=dedicated`` or ``mixed`` with a
``hw:cpu_dedicated_mask`` in either form, some of those with a ``hw:cpu_thread_policy``, some
with a page size), each case a host and a few flavors booted on it one after the other (earlier
instances use the cells the later ones see). Each boot is judged twice:

* the project: the host reported (``PUT /api/compute-nodes/``) and synced, the flavor created,
  ``POST /api/scheduler/explain/`` with ``target_host``: placeable or not, then a real boot
  when Nova (or a variant of it, below) places it, whose cells are compared;
* Nova 34 (installed from PyPI in a virtualenv of its own, ``/work/nova-venv``, never in the
  project's): the whole-host Placement check Nova makes first (VCPU, PCPU and MEMORY_MB of the
  root provider, the host's reservation subtracted, and ``HW_CPU_HYPERTHREADING`` for a thread
  policy, as Nova's scheduler translates the flavor with Nova's own helpers), then
  ``numa_get_constraints`` for the flavor and ``numa_fit_instance_to_host`` as
  ``NUMATopologyFilter`` calls it (host cells with their SMT siblings); an accepted instance's
  usage is added to the host (``numa_usage_from_instance_numa``).

``--page-sizes`` draws other cases: cells with 1 GiB pages, 2 MiB pages, both or neither, and
flavors of every ``hw:mem_page_size`` (``large``, ``any``, ``small``, ``2MB``, ``1GB``); each
cell compared also says which page size it took (4 for small pages).

Nova runs in a child process of the Nova virtualenv (this file with ``--nova-worker``, JSON
lines on its stdin and stdout). The project runs in this process on a fresh PostgreSQL database
(``numa_diff``; ``DATABASE_URL``'s server), ratios 1.0, the default reserved host memory.

Two Nova behaviours the project deliberately does not follow are proved case by case, not
assumed: Nova's fit is run again with each turned off (:data:`VARIANTS`) -- its fit/no-fit
caches defeated (Nova's own host cell order, then Nova's own ``_numa_fit_instance_cell`` on a
fresh copy of the instance cells for every permutation), and its page-size check counting the
pages earlier instances use for a shared-CPU instance too (``can_fit_pagesize(use_free=True)``).
A boot where the project's verdict and cells are exactly those of such a variant is printed as
``explained: <kind>`` (Nova's host then takes the instance as that variant placed it, so the
case goes on); a boot no variant agrees with is a disagreement, printed as a reproduction (host
report, flavor, earlier boots, every verdict) and ending its case. The summary counts cases,
boots, agreements, explained differences by kind and disagreements (unexplained) by kind. Exit
status 1 when any disagreement is left.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import random
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESERVED_MB = 512
PAGE_KB = 2048
GIB_KB = 1048576
MEMPAGE_PREFIX = "CUSTOM_MEMPAGE_"


# --- random cases ----------------------------------------------------------------------------


def random_host(rng, page_sizes=False):
    cells = _random_cells(rng)
    cpu = sum(len(cell["cpus"]) for cell in cells)
    host = {"vcpus": cpu, "memory_mb": sum(c["memory_mb"] for c in cells), "local_gb": 1000}
    # SMT: CPUs 2k and 2k+1 are one core's threads (not with --page-sizes, whose cases stay)
    threads = 2 if not page_sizes and rng.random() < 0.3 else 1
    if threads > 1:
        host["cpu_info"] = {"topology": {"threads": threads}}
    # Dedicated CPUs: some of each cell's (whole cores on SMT hosts); more often than not, so
    # that pinned, mixed and thread-policy flavors find some (--page-sizes keeps its 0.3).
    if rng.random() < (0.3 if page_sizes else 0.6):
        dedicated = _random_dedicated(rng, cells, threads)
        host["cpu_dedicated_set"] = dedicated
        host["cpu_shared_set"] = [c for c in range(cpu) if c not in dedicated]
    if page_sizes:
        for cell in cells:
            _random_pages(rng, cell)
    elif rng.random() < 0.3:
        _random_huge_pages(rng, cells)
    # Some hosts report no NUMA topology at all (Nova refuses them any NUMA instance).
    host["numa_topology"] = {"cells": cells} if rng.random() > 0.1 else None
    return host


def _random_cells(rng):
    """1 to 4 cells, numbering their CPUs on from the previous cell's."""
    cells, cpu = [], 0
    for cell_id in range(rng.randint(1, 4)):
        count = rng.choice([2, 4, 4, 8, 16])
        cell = {
            "id": cell_id,
            "cpus": list(range(cpu, cpu + count)),
            "memory_mb": 1024 * rng.choice([2, 4, 8, 16, 32, 64]),
        }
        cpu += count
        cells.append(cell)
    return cells


def _random_dedicated(rng, cells, threads):
    """About half of each cell's cores, every thread of a chosen core."""
    return [
        c
        for cell in cells
        for core in cell["cpus"][::threads]
        if rng.random() < 0.5
        for c in range(core, core + threads)
    ]


def _random_huge_pages(rng, cells):
    """2 MiB pages, up to half of each cell's memory; the rest in 4 KiB pages."""
    for cell in cells:
        huge = rng.randint(0, cell["memory_mb"] // 2 // 2)
        small = (cell["memory_mb"] * 1024 - huge * PAGE_KB) // 4
        cell["mempages"] = [
            {"size_kb": 4, "total": small},
            {"size_kb": PAGE_KB, "total": huge},
        ]


def _random_pages(rng, cell):
    """Up to half of the cell's memory in 1 GiB pages, 2 MiB pages, both, or none."""
    kinds = rng.choice([(), (GIB_KB,), (PAGE_KB,), (GIB_KB, PAGE_KB)])
    budget_kb = cell["memory_mb"] * 1024 // 2
    pages = []
    for size_kb in kinds:
        count = rng.randint(0, budget_kb // len(kinds) // size_kb)
        pages.append({"size_kb": size_kb, "total": count})
    small = (cell["memory_mb"] * 1024 - sum(p["size_kb"] * p["total"] for p in pages)) // 4
    cell["mempages"] = [{"size_kb": 4, "total": small}, *pages]


def _split(rng, total, parts, unit=1):
    """``total`` (a multiple of ``unit``) in ``parts`` positive multiples of ``unit``."""
    units = total // unit
    cuts = sorted(rng.sample(range(1, units), parts - 1)) if parts > 1 else []
    edges = [0, *cuts, units]
    return [(b - a) * unit for a, b in zip(edges, edges[1:], strict=False)]


def random_flavor(rng, page_sizes=False):
    nodes = rng.choice([1, 1, 2, 2, 3, 4])
    vcpus = nodes * rng.randint(1, 4)
    ram = nodes * 1024 * rng.choice([1, 2, 4, 8])
    specs = {"hw:numa_nodes": str(nodes)}
    if nodes > 1 and vcpus > nodes and rng.random() < 0.3:
        specs.update(_random_asymmetric_cells(rng, vcpus, ram, nodes))
    specs.update(_random_cpu_policy(rng, vcpus, page_sizes))
    if page_sizes and rng.random() < 0.8:
        specs["hw:mem_page_size"] = rng.choice(["large", "large", "any", "small", "2MB", "1GB"])
    elif not page_sizes and rng.random() < 0.25:
        specs["hw:mem_page_size"] = rng.choice(["2MB", "2048", "small", "large"])
    return {"vcpus": vcpus, "ram": ram, "disk": 1, "extra_specs": specs}


def _random_asymmetric_cells(rng, vcpus, ram, nodes):
    """``hw:numa_cpus.N`` and ``hw:numa_mem.N``: the vCPUs and memory cut unevenly."""
    specs = {}
    cpu_counts = _split(rng, vcpus, nodes)
    memory = _split(rng, ram, nodes, unit=1024)
    first = 0
    for index, (count, mb) in enumerate(zip(cpu_counts, memory, strict=True)):
        specs[f"hw:numa_cpus.{index}"] = ",".join(str(c) for c in range(first, first + count))
        specs[f"hw:numa_mem.{index}"] = str(mb)
        first += count
    return specs


def _random_cpu_policy(rng, vcpus, page_sizes):
    """``hw:cpu_policy`` (dedicated, or mixed with a mask in either form) and sometimes a
    thread policy."""
    specs = {}
    policy = rng.random()
    if policy < 0.25:
        specs["hw:cpu_policy"] = "dedicated"
    elif not page_sizes and policy < 0.4 and vcpus > 1:  # mixed: some, not all, dedicated
        pinned = sorted(rng.sample(range(vcpus), rng.randint(1, vcpus - 1)))
        specs["hw:cpu_policy"] = "mixed"
        if rng.random() < 0.5:
            specs["hw:cpu_dedicated_mask"] = ",".join(str(c) for c in pinned)
        else:  # the exclusion form: every vCPU but the shared ones
            shared = sorted(set(range(vcpus)) - set(pinned))
            specs["hw:cpu_dedicated_mask"] = "^" + ",".join(str(c) for c in shared)
    if not page_sizes and "hw:cpu_policy" in specs and rng.random() < 0.4:
        specs["hw:cpu_thread_policy"] = rng.choice(["prefer", "require", "isolate"])
    return specs


def random_case(rng, page_sizes=False):
    return {
        "host": random_host(rng, page_sizes),
        "flavors": [random_flavor(rng, page_sizes) for _ in range(3)],
    }


# --- Nova's side (runs in the Nova virtualenv) ---------------------------------------------


def nova_worker():  # pragma: no cover - runs under /work/nova-venv
    import logging
    import warnings

    warnings.simplefilter("ignore")
    logging.disable(logging.CRITICAL)
    from nova import conf, objects

    objects.register_all()
    from nova.virt import hardware

    conf.CONF([], project="nova")
    limits = objects.NUMATopologyLimits(cpu_allocation_ratio=1.0, ram_allocation_ratio=1.0)
    image = objects.ImageMeta.from_dict({"properties": {}})
    state = {}

    def host_topology(report):
        dedicated = set(report.get("cpu_dedicated_set") or ())
        shared = report.get("cpu_shared_set")
        threads = _threads(report)
        cells = []
        for cell in (report.get("numa_topology") or {}).get("cells") or []:
            cpus = set(cell["cpus"])
            pages = cell.get("mempages") or [{"size_kb": 4, "total": cell["memory_mb"] * 1024 // 4}]
            cells.append(
                objects.NUMACell(
                    id=cell["id"],
                    cpuset=(cpus & set(shared)) if shared is not None else cpus - dedicated,
                    pcpuset=cpus & dedicated,
                    memory=cell["memory_mb"],
                    cpu_usage=0,
                    memory_usage=0,
                    pinned_cpus=set(),
                    siblings=[set(range(c, c + threads)) for c in sorted(cpus)[::threads]],
                    mempages=[
                        objects.NUMAPagesTopology(size_kb=p["size_kb"], total=p["total"], used=0)
                        for p in pages
                    ],
                    network_metadata=objects.NetworkMetadata(physnets=set(), tunneled=False),
                    socket=0,
                )
            )
        return objects.NUMATopology(cells=cells) if cells else None

    def placement_check(report, flavor, used):
        """Nova's whole-host Placement query: the root's VCPU, PCPU and MEMORY_MB, and the
        hyperthreading trait, as Nova's scheduler translates the flavor (its own helpers)."""
        dedicated = len(report.get("cpu_dedicated_set") or ())
        shared = report.get("cpu_shared_set")
        vcpu_total = len(shared) if shared is not None else report["vcpus"] - dedicated
        nova_flavor = _nova_flavor(objects, flavor)
        policy = hardware.get_cpu_policy_constraint(nova_flavor, image)
        pcpus = 0
        if policy == "dedicated":
            pcpus = flavor["vcpus"]
        elif policy == "mixed":
            pcpus = len(
                hardware.get_dedicated_cpu_constraint(nova_flavor)
                or hardware.get_realtime_cpu_constraint(nova_flavor, image)
                or ()
            )
        asked = {
            name: amount
            for name, amount in (
                ("VCPU", flavor["vcpus"] - pcpus),
                ("PCPU", pcpus),
                ("MEMORY_MB", flavor["ram"]),
            )
            if amount
        }
        capacity = {
            "VCPU": vcpu_total,
            "PCPU": dedicated,
            "MEMORY_MB": report["memory_mb"] - RESERVED_MB,
        }
        for name, amount in asked.items():
            if used.get(name, 0) + amount > capacity[name]:
                return None, f"placement: {name} {used.get(name, 0)} + {amount} > {capacity[name]}"
        thread_policy = hardware.get_cpu_thread_policy_constraint(nova_flavor, image)
        smt = _threads(report) > 1  # libvirt: HW_CPU_HYPERTHREADING when a core has siblings
        if (thread_policy == "isolate" and smt) or (thread_policy == "require" and not smt):
            return None, f"placement: HW_CPU_HYPERTHREADING (thread policy {thread_policy})"
        return asked, None

    for line in sys.stdin:
        message = json.loads(line)
        if message["op"] == "host":
            state = {
                "report": message["report"],
                "topology": host_topology(message["report"]),
                "used": {},
            }
            print(json.dumps({"ok": True}), flush=True)
            continue
        answer = _nova_fit(hardware, objects, state, message, limits, image, placement_check)
        print(json.dumps(answer), flush=True)


def _threads(report):
    return int(((report.get("cpu_info") or {}).get("topology") or {}).get("threads") or 1)


def _nova_flavor(objects, flavor):
    return objects.Flavor(
        vcpus=flavor["vcpus"],
        memory_mb=flavor["ram"],
        root_gb=1,
        ephemeral_gb=0,
        swap=0,
        extra_specs=flavor["extra_specs"],
    )


# Nova's fitting run four ways: as Nova runs it, then with each of the two known Nova
# behaviours the project does not follow turned off, alone and together. A boot where the
# project agrees with a variant but not with Nova itself is an explained difference of that
# variant's kind(s); a boot no variant agrees with is a disagreement.
KIND_TEXT = {
    "fit cache": "Nova's fit caches keyed on the instance cell's id miss a fitting permutation",
    "small pages usage": "Nova fits a shared-CPU cell against the small-page pool's total, "
    "ignoring earlier instances' usage",
    "isolate without dedicated vCPUs": "Nova's isolate packing takes a mixed instance's NUMA "
    "node without dedicated vCPUs (nothing to pin) for no fit",
}
# Nova itself first, then each kind alone, then the pairs, then all three.
VARIANTS = {
    " + ".join(kinds) or "nova": kinds
    for size in range(len(KIND_TEXT) + 1)
    for kinds in itertools.combinations(KIND_TEXT, size)
}


def _nothing_to_isolate(constraints):
    """The instance cells a mixed ``isolate`` instance has without dedicated vCPUs take the
    default thread policy: they pin nothing, so there is nothing to isolate (Nova's isolate
    packing alone refuses an empty pinning; ``prefer`` and ``require`` accept it)."""
    for cell in constraints.cells:
        if cell.cpu_policy == "mixed" and cell.cpu_thread_policy == "isolate" and not cell.pcpuset:
            cell.cpu_thread_policy = None
    return constraints


def _uncached_fit(hardware, objects, host_topology, constraints, limits):
    """``numa_fit_instance_to_host`` without its fit/no-fit caches: Nova's own host cell order
    (read from Nova's code as it hands the cells to ``itertools.permutations``), then Nova's
    own per-cell fit (``_numa_fit_instance_cell``) on a fresh copy of each instance cell for
    every permutation, the first permutation all of whose cells fit taken."""
    seen = []

    class Recorder:
        def __getattr__(self, name):
            return getattr(itertools, name)

        @staticmethod
        def permutations(cells, count):
            seen.append(list(cells))
            return iter(())

    real = hardware.itertools
    hardware.itertools = Recorder()
    try:
        hardware.numa_fit_instance_to_host(host_topology, constraints, None, limits)
    finally:
        hardware.itertools = real
    if not seen:  # Nova stopped before permuting (no topology, too few cells)
        return None
    from nova import exception

    for permutation in itertools.permutations(seen[0], len(constraints)):
        chosen = []
        for host_cell, instance_cell in zip(permutation, constraints.cells, strict=False):
            # As Nova: isolated emulator threads take one more CPU of the first cell.
            reserved = 1 if constraints.emulator_threads_isolated and not chosen else 0
            try:
                got = hardware._numa_fit_instance_cell(
                    host_cell, instance_cell.obj_clone(), limits, reserved
                )
            except exception.MemoryPageSizeNotSupported:
                got = None
            if got is None:
                break
            chosen.append(got)
        if len(chosen) == len(constraints.cells):
            return objects.InstanceNUMATopology(
                cells=chosen,
                emulator_threads_policy=constraints.emulator_threads_policy
                if "emulator_threads_policy" in constraints
                else None,
            )
    return None


class _UsageCounted:
    """Within it, Nova's page-size check counts the pages earlier instances use
    (``can_fit_pagesize(use_free=True)``, what Nova does for pinned instances) for every
    instance, a shared-CPU one included."""

    def __init__(self, objects):
        self.cls = objects.NUMACell
        self.real = self.cls.can_fit_pagesize

    def __enter__(self):
        real = self.real

        def counted(cell, pagesize, memory, use_free=True):
            return real(cell, pagesize, memory, use_free=True)

        self.cls.can_fit_pagesize = counted

    def __exit__(self, *exc):
        self.cls.can_fit_pagesize = self.real


def _variant_fit(hardware, objects, state, constraints, limits, kinds):
    """Nova's ``numa_fit_instance_to_host`` with the behaviours ``kinds`` names turned off."""
    counted = _UsageCounted(objects) if "small pages usage" in kinds else None
    with counted or contextlib.nullcontext():
        if "fit cache" in kinds:
            return _uncached_fit(hardware, objects, state["topology"], constraints, limits)
        return hardware.numa_fit_instance_to_host(state["topology"], constraints, None, limits)


def _variant_verdict(hardware, objects, state, constraints, limits, kinds, message):
    """``(fitted instance topology or None, verdict)`` of Nova's fit without ``kinds``."""
    if constraints is None:
        return None, {"fits": True, "cells": [], "why": ""}
    if state["topology"] is None:
        return None, {"fits": False, "cells": None, "why": "the host has no NUMA topology"}
    fitted = _variant_fit(hardware, objects, state, constraints, limits, kinds)
    if fitted is None:
        return None, {"fits": False, "cells": None, "why": "numa_fit_instance_to_host: no fit"}
    cells = sorted(
        [c.id, len(c.cpuset) + len(c.pcpuset), c.memory]
        + ([c.pagesize or 4] if message.get("page_sizes") else [])
        for c in fitted.cells
    )
    return fitted, {"fits": True, "cells": cells, "why": ""}


def _nova_fit(hardware, objects, state, message, limits, image, placement_check):
    """Nova's verdict on one flavor for the worker's host, as Nova and as each variant of
    :data:`VARIANTS` (``variants``), and the usage of the variant ``commit`` names."""
    flavor = message["flavor"]

    def constraints_of():
        return hardware.numa_get_constraints(_nova_flavor(objects, flavor), image)

    answer = {"fits": False, "cells": None, "why": ""}
    try:
        constraints_of()
    except Exception as exc:  # Nova refuses the flavor itself
        answer["why"] = f"invalid: {type(exc).__name__}: {exc}"
        answer["invalid"] = True
        return answer
    asked, why = placement_check(state["report"], flavor, state["used"])
    variants, fitted_by = {}, {}
    for name, kinds in VARIANTS.items():
        constraints = constraints_of()  # Nova's fit changes the instance cells it is given
        if constraints is not None and "isolate without dedicated vCPUs" in kinds:
            constraints = _nothing_to_isolate(constraints)
        if asked is None:
            variants[name] = {"fits": False, "cells": None, "why": why}
            continue
        fitted, variants[name] = _variant_verdict(
            hardware, objects, state, constraints, limits, kinds, message
        )
        if fitted is not None:
            fitted_by[name] = fitted
    answer.update(variants["nova"])
    answer["variants"] = variants
    chosen = message.get("commit")
    if chosen and variants[chosen]["fits"]:
        if chosen in fitted_by:
            state["topology"] = hardware.numa_usage_from_instance_numa(
                state["topology"], fitted_by[chosen]
            )
        for name, amount in asked.items():
            state["used"][name] = state["used"].get(name, 0) + amount
    return answer


class Nova:
    def __init__(self, python):
        self.process = subprocess.Popen(
            [python, __file__, "--nova-worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=open(os.environ.get("NOVA_WORKER_LOG", os.devnull), "w"),
            text=True,
        )

    def ask(self, **message):
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=30)


# --- the project's side --------------------------------------------------------------------


class Project:
    """The project in this process on a fresh database, driven through its HTTP stack."""

    def __init__(self, database):
        base = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
        server = base.rsplit("/", 1)[0]
        os.environ.update(
            DATABASE_URL=f"{server}/{database}",
            DJANGO_SETTINGS_MODULE="placementsite.settings",
            PLACEMENT_AUTH_STRATEGY="noauth2",
            PLACEMENT_RESOURCE_PLUGINS="vcpu,memory,disk,numa,pci",
            PLACEMENT_CPU_ALLOCATION_RATIO="1.0",
            PLACEMENT_RAM_ALLOCATION_RATIO="1.0",
            PLACEMENT_RESERVED_HOST_MEMORY_MB=str(RESERVED_MB),
            PLACEMENT_SYNC_ON_REPORT="0",
            PLACEMENT_LOG_LEVEL="ERROR",
        )
        subprocess.run(
            ["psql", server + "/postgres", "-qc", f"DROP DATABASE IF EXISTS {database}"],
            check=True,
            capture_output=True,
        )
        subprocess.run(
            ["psql", server + "/postgres", "-qc", f"CREATE DATABASE {database}"],
            check=True,
            capture_output=True,
        )
        sys.path.insert(0, str(ROOT))
        import django

        django.setup()
        import logging

        logging.disable(logging.WARNING)
        from django.core.management import call_command
        from django.test import Client

        call_command("migrate", "--noinput", verbosity=0)
        self.call_command = call_command
        self.client = Client(
            HTTP_X_AUTH_TOKEN="admin",
            HTTP_OPENSTACK_API_VERSION="placement latest",
            SERVER_NAME="localhost",
        )

    def _json(self, method, path, body=None):
        response = getattr(self.client, method)(
            path,
            data=json.dumps(body) if body is not None else None,
            content_type="application/json",
        )
        return response.status_code, (response.json() if response.content else None)

    def host(self, name, report):
        status, payload = self._json("put", f"/api/compute-nodes/{name}/", report)
        if status not in (200, 201):
            return f"report refused: {status} {payload}"
        self.call_command("sync_inventory", "--host", name, stdout=open(os.devnull, "w"))
        return None

    def flavor(self, name, flavor):
        status, payload = self._json("post", "/api/flavors/", {"name": name, **flavor})
        return None if status == 201 else f"{status}: {payload['errors'][0]['detail']}"

    def judge(self, flavor_name, host, commit, page_sizes=False):
        body = {
            "name": "vm",
            "flavor": flavor_name,
            "project_id": "p",
            "user_id": "u",
            "scheduler_hints": {"target_host": host},
        }
        status, payload = self._json("post", "/api/scheduler/explain/", body)
        if status == 409:
            return {"fits": False, "why": _why(payload["errors"][0].get("explain") or {})}
        if status != 200:
            return {"fits": False, "why": f"explain {status}: {payload}"}
        answer = {"fits": True, "cells": None}
        if commit:
            status, payload = self._json("post", "/api/servers/", body)
            if status != 201:
                return {"fits": False, "why": f"boot {status} after explain 200", "boot": True}
            answer["cells"] = self.cells(host, payload["servers"][0]["id"], page_sizes)
        return answer

    def cells(self, host, server_id, page_sizes=False):
        _status, payload = self._json("get", f"/allocations/{server_id}")
        names = {}
        for uuid in payload["allocations"]:
            _s, provider = self._json("get", f"/resource_providers/{uuid}")
            names[uuid] = provider["name"]
        found = []
        for uuid, allocation in payload["allocations"].items():
            name = names[uuid]
            if "_NUMA" in name:
                resources = allocation["resources"]
                cpus = resources.get("VCPU", 0) + resources.get("PCPU", 0)
                memory, size_kb = resources.get("MEMORY_MB", 0), 4
                for class_name, amount in resources.items():
                    if class_name.startswith(MEMPAGE_PREFIX):
                        size_kb = int(class_name[len(MEMPAGE_PREFIX) : -2])
                        memory += amount * size_kb // 1024
                cell = [int(name.rsplit("_NUMA", 1)[1]), cpus, memory]
                found.append(cell + ([size_kb] if page_sizes else []))
        return sorted(found)


def _why(funnel):
    for step in funnel.get("funnel", []):
        if step.get("dropped_count"):
            return f"{step['step']} dropped the host"
    return "no valid host"


# --- the run --------------------------------------------------------------------------------


class Tally:
    """What a run found: the counts, the disagreements and explained differences by kind,
    and the agreements by feature."""

    def __init__(self):
        self.counts = dict.fromkeys(
            ["cases", "boots", "agree", "both_place", "both_refuse", "explained", "disagree"]
            + ["both_invalid"],
            0,
        )
        self.kinds, self.explained, self.placed_by, self.refused_by = {}, {}, {}, {}

    def disagree(self, kind, case, flavors, host, ours, theirs):
        report(self.kinds, self.counts, kind, case, flavors, host, ours, theirs)

    def agree(self, case, flavor, fits):
        self.counts["agree"] += 1
        self.counts["both_place" if fits else "both_refuse"] += 1
        slot = self.placed_by if fits else self.refused_by
        for feature in _features(case["host"], flavor):
            slot[feature] = slot.get(feature, 0) + 1

    def explain(self, kind):
        self.counts["explained"] += 1
        self.explained[kind] = self.explained.get(kind, 0) + 1

    def summary(self, seed):
        return {
            "seed": seed,
            **self.counts,
            "disagreements": self.kinds,
            "explained_by_kind": self.explained,
            "both_place_by_feature": dict(sorted(self.placed_by.items())),
            "both_refuse_by_feature": dict(sorted(self.refused_by.items())),
        }


def run(args):
    rng = random.Random(args.seed)
    project = Project(args.database)
    nova = Nova(args.nova_python)
    tally = Tally()
    for index in range(args.cases):
        case = random_case(rng, args.page_sizes)
        host = f"h{args.seed}-{index}"
        tally.counts["cases"] += 1
        refused = project.host(host, case["host"])
        nova.ask(op="host", report=case["host"])
        if refused:
            tally.disagree("project refuses the report", case, [], host, refused, None)
            continue
        _boot_case(args, project, nova, tally, case, index)
    nova.close()
    print(json.dumps(tally.summary(args.seed), indent=1))
    print(f"{tally.counts['disagree']} disagreements (unexplained)")
    print(f"{tally.counts['explained']} explained differences by kind:")
    for kind in sorted(tally.explained):
        reasons = "; ".join(KIND_TEXT[k] for k in kind.split(" + "))
        print(f"  {tally.explained[kind]} {kind}: {reasons}")
    return 1 if tally.counts["disagree"] else 0


def _boot_case(args, project, nova, tally, case, index):
    """Boot the case's flavors one after the other on both sides, until they first disagree."""
    host = f"h{args.seed}-{index}"
    earlier = []
    for number, flavor in enumerate(case["flavors"]):
        tally.counts["boots"] += 1
        name = f"f{args.seed}-{index}-{number}"
        invalid = project.flavor(name, flavor)
        theirs = nova.ask(op="fit", flavor=flavor, page_sizes=args.page_sizes)
        if invalid or theirs.get("invalid"):
            if invalid and theirs.get("invalid"):
                tally.counts["both_invalid"] += 1
                continue
            kind = (
                "flavor refused by the project only" if invalid else "flavor refused by Nova only"
            )
            tally.disagree(kind, case, earlier, host, invalid or "201", theirs)
            return
        variants = theirs["variants"]
        ours = project.judge(
            name,
            host,
            commit=any(v["fits"] for v in variants.values()),
            page_sizes=args.page_sizes,
        )
        matched = None if ours.get("boot") else _matching_variant(ours, variants)
        if matched is None:
            tally.disagree(
                _disagreement(ours, theirs), case, earlier + [flavor], host, ours, theirs
            )
            return
        if matched == "nova":
            tally.agree(case, flavor, ours["fits"])
        else:
            kind = " + ".join(VARIANTS[matched])
            tally.explain(kind)
            print(f"--- explained: {kind} on {host}, flavor {number}: {json.dumps(flavor)}")
            print(f"    project: {json.dumps(ours)}")
            print(f"    nova:    {json.dumps(_verdict(theirs))}")
            print(f"    nova without {kind}: {json.dumps(_verdict(variants[matched]))}")
        # Nova's host takes the instance as the variant the project agrees with placed it.
        nova.ask(op="fit", flavor=flavor, commit=matched, page_sizes=args.page_sizes)
        if ours["fits"]:
            earlier.append(flavor)


def _disagreement(ours, theirs):
    if ours["fits"] == theirs["fits"]:
        return "other cells"
    return "project places, Nova refuses" if ours["fits"] else "Nova places, project refuses"


def _features(host, flavor):
    """What a boot exercises, for the summary's agreements by feature."""
    specs = flavor["extra_specs"]
    found = []
    if _threads(host) > 1:
        found.append("smt host")
    if host.get("cpu_dedicated_set"):
        found.append("host with dedicated CPUs")
    if any(c.get("mempages") for c in (host.get("numa_topology") or {}).get("cells") or []):
        found.append("host with huge pages")
    if "hw:cpu_policy" in specs:
        found.append(f"cpu_policy={specs['hw:cpu_policy']}")
    if "hw:cpu_thread_policy" in specs:
        found.append(f"cpu_thread_policy={specs['hw:cpu_thread_policy']}")
    if "hw:numa_cpus.0" in specs:
        found.append("asymmetric cells")
    if "hw:mem_page_size" in specs:
        found.append("mem_page_size")
    return found


def _verdict(answer):
    return {key: answer[key] for key in ("fits", "cells", "why") if key in answer}


def _matching_variant(ours, variants):
    """The first variant of :data:`VARIANTS` (Nova itself first) whose verdict is the
    project's: the same answer and, when both place, the same cells."""
    for name in VARIANTS:
        theirs = variants[name]
        if ours["fits"] != theirs["fits"]:
            continue
        if ours["fits"] and theirs["cells"] and ours["cells"] != theirs["cells"]:
            continue
        return name
    return None


def report(kinds, counts, kind, case, flavors, host, ours, theirs):
    counts["disagree"] += 1
    kinds[kind] = kinds.get(kind, 0) + 1
    print(f"--- DISAGREEMENT ({kind}) on {host}")
    print("host report:", json.dumps(case["host"]))
    for number, flavor in enumerate(flavors):
        last = " (the one judged)" if number == len(flavors) - 1 else " (booted before)"
        print(f"flavor {number}{last}:", json.dumps(flavor))
    print("project:", json.dumps(ours))
    print("nova:   ", json.dumps(theirs))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--database", default="numa_diff")
    parser.add_argument("--nova-python", default="/work/nova-venv/bin/python")
    parser.add_argument(
        "--page-sizes",
        action="store_true",
        help="cells with 1 GiB and/or 2 MiB pages, flavors of every hw:mem_page_size",
    )
    parser.add_argument("--nova-worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.nova_worker:
        nova_worker()
        return 0
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
