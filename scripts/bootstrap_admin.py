"""Create the first admin user, once, and print how to use it.

Run by scripts/serve after migrating. When no user exists yet it creates a
superuser with a generated password and a DRF API token (the ``X-Auth-Token``
of the default ``token`` auth strategy) and prints both; otherwise it does
nothing but say so.
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
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

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
    token = Token.objects.create(user=user)
    print(
        "\n".join(
            [
                "",
                "=" * 72,
                "Created the first admin user (shown only this once):",
                f"  username:  {username}",
                f"  password:  {password}",
                f"  dashboard: {base_url}/dashboard/",
                f"  admin:     {base_url}/admin/",
                f"  API token: {token.key}",
                f"  try:       curl -H 'X-Auth-Token: {token.key}' {base_url}/resource_providers",
                f"  lost the password? .venv/bin/python manage.py changepassword {username}",
                "=" * 72,
                "",
            ]
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
