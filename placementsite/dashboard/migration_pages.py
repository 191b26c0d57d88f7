"""The dashboard's Migrations page: moves in flight, resources held by migration consumers per
host, expired and leftover moves, and the cleanup and audit history."""

from django.http import Http404

from scheduling.models import LifecycleRecord
from scheduling.selectors.migrations import migrations_overview
from scheduling.services.migrations import migration_steps

from .actions import MOVE_ACTIONS
from .rendering import render_page, staff_required

MIGRATIONS = (
    "scheduling.view_migration",
    "scheduling.view_lifecyclerecord",
    "allocations.view_allocation",
)


@staff_required(*MIGRATIONS)
def migration_list(request):
    action = request.GET.get("action") or None
    if action is not None and action not in LifecycleRecord.Action.values:
        raise Http404("No such action.")
    overview = migrations_overview(history_action=action)
    for migration in overview.in_flight:
        # Only the steps the services would take: a live migration is finished, not confirmed.
        migration.steps = migration_steps(migration=migration)
    return render_page(
        request,
        "migrations.html",
        "migrations",
        {
            "overview": overview,
            "actions": LifecycleRecord.Action.choices,
            "action": action,
            "can_act": request.user.has_perms(MOVE_ACTIONS),
        },
    )
