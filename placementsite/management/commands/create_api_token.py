"""``manage.py create_api_token USERNAME [--days N] [--rotate]``: a new API token, printed once."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from placementsite.core.api.tokens import token_create


class Command(BaseCommand):
    help = "Create an API token (X-Auth-Token) for a user and print it; it is stored hashed."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument(
            "--days", type=int, default=None, help="days before it expires (0: never)"
        )
        parser.add_argument("--rotate", action="store_true", help="delete the user's other tokens")

    def handle(self, *args, username, days, rotate, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No user {username!r}")
        if days is not None and days < 0:
            raise CommandError("--days must be 0 (never expires) or more")
        created, token = token_create(user=user, days=days, rotate=rotate)
        expiry = created.expiry.isoformat() if created.expiry else "never"
        self.stderr.write(f"API token of {username}, expires {expiry} (not shown again):")
        self.stdout.write(token)
