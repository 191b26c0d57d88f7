"""``manage.py sync_inventory [--host H]``: the periodic host sync, run now, in this process."""

from django.core.management.base import BaseCommand, CommandError

from providers.models import ComputeNode
from providers.services.compute_nodes import compute_nodes_sync


class Command(BaseCommand):
    help = "Turn changed host reports into providers, inventories and traits (as the beat task)."

    def add_arguments(self, parser):
        parser.add_argument("--host", help="sync only this host, even if its report is unchanged")

    def handle(self, *args, host=None, **options):
        if host is not None and not ComputeNode.objects.filter(hostname=host).exists():
            raise CommandError(f"No compute host {host!r} has reported")
        outcomes = compute_nodes_sync(hostname=host)
        for outcome in outcomes:
            line = f"{outcome.hostname}: {outcome.status}, {outcome.changes} change(s)"
            for plugin, error in outcome.plugin_errors.items():
                line += f"\n  plugin {plugin} failed: {error}"
            for error in outcome.errors:
                line += f"\n  {error}"
            self.stdout.write(line)
        self.stdout.write(f"{len(outcomes)} host(s) synced")
