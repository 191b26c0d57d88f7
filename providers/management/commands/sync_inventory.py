"""``manage.py sync_inventory [--host H ...] [--all] [--force]``: the host sync, run now, in
this process."""

from django.core.management.base import BaseCommand, CommandError

from providers.models import ComputeNode, ResourcePool
from providers.services.host_sync import compute_nodes_sync
from providers.services.pool_sync import resource_pools_sync


class Command(BaseCommand):
    help = (
        "Turn host reports into providers, inventories and traits (as the beat task): every "
        "host that needs it, blocked and failed ones included whether their retry is due or "
        "not (the default, or --all); --force: every host; --host: those hosts, always. "
        "Resource pools are synced after the hosts (all of them with --all or by default, "
        "--pool for some)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--host",
            action="append",
            dest="hosts",
            help="sync this host, even if its report is unchanged (repeatable)",
        )
        parser.add_argument(
            "--all", action="store_true", help="every host that needs a sync (the default)"
        )
        parser.add_argument(
            "--force", action="store_true", help="every host, whether it needs a sync or not"
        )
        parser.add_argument(
            "--pool",
            action="append",
            dest="pools",
            help="sync this resource pool, even if its report is unchanged (repeatable)",
        )

    def handle(self, *args, hosts=None, pools=None, force=False, **options):
        if (hosts or pools) and options["all"]:
            raise CommandError("--host, --pool and --all exclude each other")
        _refuse_unreported(hosts=hosts or [], pools=pools or [])
        if hosts or not pools:
            outcomes = compute_nodes_sync(
                hostnames=hosts, force=force or bool(hosts), due_only=False
            )
            self._show(outcomes)
            self.stdout.write(f"{len(outcomes)} host(s) synced")
        if pools or not hosts:
            synced = resource_pools_sync(names=pools, force=force or bool(pools), due_only=False)
            self._show(synced)
            self.stdout.write(f"{len(synced)} pool(s) synced")

    def _show(self, outcomes):
        for outcome in outcomes:
            line = f"{outcome.hostname}: {outcome.status}, {outcome.changes} change(s)"
            for plugin, error in outcome.plugin_errors.items():
                line += f"\n  plugin {plugin} failed: {error}"
            for error in outcome.errors:
                line += f"\n  {error}"
            self.stdout.write(line)


def _refuse_unreported(*, hosts, pools):
    """A CommandError naming the ``--host`` or ``--pool`` names that have never reported."""
    if hosts:
        known = set(
            ComputeNode.objects.filter(hostname__in=hosts).values_list("hostname", flat=True)
        )
        unknown = [h for h in hosts if h not in known]
        if unknown:
            raise CommandError(f"No compute host {', '.join(map(repr, unknown))} has reported")
    if pools:
        known = set(ResourcePool.objects.filter(name__in=pools).values_list("name", flat=True))
        unknown = [p for p in pools if p not in known]
        if unknown:
            raise CommandError(f"No resource pool {', '.join(map(repr, unknown))} has reported")
