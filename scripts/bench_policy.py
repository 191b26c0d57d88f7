#!/usr/bin/env python3
"""Benchmark one policy check (oslo.policy, as Placement 16 runs it) per defaults flavour.

    .venv/bin/python scripts/bench_policy.py [--checks 20000]

Every API request checks one rule (an /api/ detail action two: before the view and against the
row's project). This times ``placementsite.core.api.policy.check`` in process for an allowed
admin, a refused member and a project reader's own usages, under ``secure``, ``legacy`` and
``admin-only``, without and with a policy file, and prints microseconds per check (median of
five rounds). No database is touched.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CASES = [
    ("admin lists providers", "placement:resource_providers:list", ["admin"], None),
    ("member refused", "placement:resource_providers:list", ["member", "reader"], None),
    ("reader, own usages", "placement:usages", ["reader"], {"project_id": "p"}),
]


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checks", type=int, default=20000)
    return parser.parse_args()


def setup_django():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "placementsite.settings")
    os.environ.setdefault("DATABASE_URL", "sqlite:///:memory:")
    import django

    django.setup()


def per_check(check, checks):
    rounds = []
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(checks // 5):
            check()
        rounds.append((time.perf_counter() - started) / (checks // 5) * 1e6)
    return statistics.median(rounds)


def main():
    args = parse_args()
    setup_django()
    from django.conf import settings

    from placementsite.core.api import policy
    from placementsite.core.api.auth import RequestContext

    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as handle:
        handle.write('"placement:api:servers:show": "role:admin or project_id:%(project_id)s"\n')
    print(f"{'defaults':<11} {'policy file':<12} {'case':<24} us/check")
    for flavour in ("secure", "legacy", "admin-only"):
        for policy_file in ("", handle.name):
            settings.PLACEMENT_POLICY_DEFAULTS = flavour
            settings.PLACEMENT_POLICY_FILE = policy_file
            for name, rule, roles, target in CASES:
                context = RequestContext(user_id="u", project_id="p", roles=roles)
                policy.check(rule, context, target)  # the enforcer built, the file read
                figure = per_check(
                    lambda r=rule, c=context, t=target: policy.check(r, c, t), args.checks
                )
                print(
                    f"{flavour:<11} {'yes' if policy_file else 'no':<12} {name:<24} {figure:8.1f}"
                )
    os.unlink(handle.name)


if __name__ == "__main__":
    main()
