"""Create the first admin user, once, and print how to use it.

Run by scripts/serve after migrating. When no user exists yet it creates a
superuser with a generated password and an API token (the ``X-Auth-Token`` of
the default ``token`` auth strategy), writes both to a file only the service
user can read (var/initial-admin-credentials.txt) and prints that file's path;
otherwise it does nothing but say so.
"""

import os
import secrets
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "placementsite.settings")


def main():
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model

    from placementsite.core.api.tokens import token_create
    from placementsite.core.private_files import write_private

    user_model = get_user_model()
    base_url = os.environ.get(
        "PLACEMENT_PUBLIC_URL", f"http://127.0.0.1:{os.environ.get('PORT', '8000')}"
    )
    if user_model.objects.exists():
        print(
            f"Users exist already; log in at {base_url}/dashboard/ (or {base_url}/admin/)"
            " with your account. Lost password: .venv/bin/python manage.py changepassword"
            " USERNAME"
        )
        return
    username = os.environ.get("PLACEMENT_ADMIN_USERNAME", "admin")
    password = secrets.token_urlsafe(15)
    user = user_model.objects.create_superuser(username=username, email="", password=password)
    token_row, token = token_create(user=user)
    expiry = token_row.expiry.date().isoformat() if token_row.expiry else "never"
    # The secrets go to a file only the service user can read, never to standard output
    # (which ends up in service logs).
    credentials = Path(settings.VAR_DIR) / "initial-admin-credentials.txt"
    write_private(
        credentials,
        "\n".join(
            [
                "The first admin user of the Placement service (delete this file once read).",
                f"username:  {username}",
                f"password:  {password}",
                f"API token: {token}  (expires {expiry}; new ones: manage.py create_api_token)",
                f"try:       curl -H 'X-Auth-Token: {token}' {base_url}/resource_providers",
                "",
            ]
        ),
    )
    print(
        "\n".join(
            [
                "",
                "=" * 72,
                f"Created the first admin user {username!r}. Its password and an API token",
                f"are in {credentials} (readable by this user only).",
                f"  dashboard: {base_url}/dashboard/",
                f"  admin:     {base_url}/admin/",
                f"  lost the password? .venv/bin/python manage.py changepassword {username}",
                "=" * 72,
                "",
            ]
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
