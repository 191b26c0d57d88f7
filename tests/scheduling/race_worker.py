"""One process of a race test: ``python -m tests.scheduling.race_worker OP START ARGS...``.

Waits until the wall-clock time START (so every process begins together), runs OP against the
database named by DATABASE_URL and prints one JSON line of what it did.

OP ``cleanup ROUNDS``: that many cleanup runs. ``settle VERB UUID...``: confirm or revert each
migration, counting successes and refusals. ``hold-cleanup``: one cleanup batch left open in
its transaction (prints ``holding`` and sleeps until killed).
"""

import json
import os
import sys
import time

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "placementsite.settings")

import django  # noqa: E402

django.setup()

from django.db import transaction  # noqa: E402

from placementsite.core.exceptions import Conflict  # noqa: E402
from scheduling.models import Migration  # noqa: E402
from scheduling.services import cleanup, migrations  # noqa: E402


def _cleanup(rounds):
    freed = checked = 0
    expired = []
    for _ in range(int(rounds)):
        result = cleanup.migrations_cleanup(origin="race")
        freed += result.freed_allocations
        checked += result.checked
        expired += [(str(uuid), what) for uuid, what in result.expired]
    return {"freed": freed, "checked": checked, "expired": expired}


def _settle(verb, *uuids):
    service = migrations.migration_confirm if verb == "confirm" else migrations.migration_revert
    done, refused = [], []
    for uuid in uuids:
        try:
            service(migration=Migration.objects.get(uuid=uuid))
            done.append(uuid)
        except Conflict as exc:
            refused.append([uuid, exc.code])
    return {"done": done, "refused": refused}


def _hold_cleanup():
    result = cleanup.CleanupResult(run=__import__("uuid").uuid4())
    with transaction.atomic():
        cleanup._clean_batch(result, after=0, size=10**6, origin="race", now=_now())
        print(json.dumps({"holding": result.freed_allocations}), flush=True)
        time.sleep(300)  # killed meanwhile: the batch never commits


def _now():
    from django.utils import timezone

    return timezone.now()


def main():
    op, start, *args = sys.argv[1:]
    time.sleep(max(0.0, float(start) - time.time()))
    if op == "hold-cleanup":
        _hold_cleanup()
        return
    result = _cleanup(*args) if op == "cleanup" else _settle(*args)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
