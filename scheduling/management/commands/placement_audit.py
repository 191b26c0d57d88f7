"""``manage.py placement_audit [--delete] [--heal]``: orphaned allocations and servers whose
allocations are missing or do not match their flavor, and device units assigned out of step
with the allocations, and usage rows that are not the sum of their allocations."""

from django.core.management.base import BaseCommand

from scheduling.services.audit import placement_audit


class Command(BaseCommand):
    help = (
        "Report allocations of unknown consumers, servers with missing or mismatched "
        "allocations, device units assigned out of step with the allocations and usage rows "
        "that are not the sum of their allocations; --delete "
        "removes orphans older than PLACEMENT_AUDIT_ORPHAN_GRACE_SECONDS, --heal re-creates "
        "servers' missing allocations, brings device assignments in step and repairs usage rows."
    )

    def add_arguments(self, parser):
        parser.add_argument("--delete", action="store_true", help="delete old orphans")
        parser.add_argument("--heal", action="store_true", help="re-create missing allocations")

    def handle(self, *args, delete=False, heal=False, **options):
        result = placement_audit(delete=delete, heal=heal, origin="command")
        for finding in [*result.findings, *result.actions]:
            about = finding.consumer_uuid or "-"  # no consumer: a usage row
            self.stdout.write(f"{finding.action}: {about} {finding.detail}")
        self.stdout.write(
            f"{len(result.findings)} findings, {len(result.actions)} actions (run {result.run})."
        )
