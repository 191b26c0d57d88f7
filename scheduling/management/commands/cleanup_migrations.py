"""``manage.py cleanup_migrations [--dry-run]``: the periodic migration cleanup, now."""

from django.core.management.base import BaseCommand

from scheduling.services.cleanup import migrations_cleanup


class Command(BaseCommand):
    help = (
        "Free allocations left by finished migrations and act on migrations whose lease "
        "expired (PLACEMENT_MIGRATION_EXPIRED_ACTION)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--dry-run", action="store_true", help="say what would be done; change nothing"
        )

    def handle(self, *args, dry_run=False, **options):
        result = migrations_cleanup(dry_run=dry_run, origin="command")
        would = "would free" if dry_run else "freed"
        self.stdout.write(
            f"Checked {result.checked} finished migrations: {would} "
            f"{result.freed_allocations} allocations of {result.freed_migrations}."
        )
        for uuid, what in result.expired:
            self.stdout.write(f"Expired migration {uuid}: {what}{' (dry run)' if dry_run else ''}")
        if not dry_run:
            self.stdout.write(f"Run {result.run}.")
