"""API tokens move from DRF's authtoken (plain text) to django-rest-knox (hashed).

Tokens created before keep working: each is stored again as its digest with an expiry of
PLACEMENT_TOKEN_TTL_DAYS from now, and the plain-text copies are deleted. DRF's authtoken app is
no longer installed, so its table is read with SQL when it exists.
"""

from datetime import timedelta

from django.conf import settings
from django.db import migrations
from django.utils import timezone

DRF_TABLE = "authtoken_token"


def hash_drf_tokens(apps, schema_editor):
    from knox.crypto import hash_token
    from knox.settings import CONSTANTS

    connection = schema_editor.connection
    if DRF_TABLE not in connection.introspection.table_names():
        return
    table = schema_editor.quote_name(DRF_TABLE)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT key, user_id FROM {table}")
        rows = cursor.fetchall()
    days = settings.PLACEMENT_TOKEN_TTL_DAYS
    expiry = timezone.now() + timedelta(days=days) if days > 0 else None
    AuthToken = apps.get_model("knox", "AuthToken")
    AuthToken.objects.bulk_create(
        [
            AuthToken(
                digest=hash_token(key),
                token_key=key[: CONSTANTS.TOKEN_KEY_LENGTH],
                user_id=user_id,
                expiry=expiry,
            )
            for key, user_id in rows
        ],
        ignore_conflicts=True,
    )
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {table}")


class Migration(migrations.Migration):
    dependencies = [
        ("placementsite", "0001_initial"),
        ("knox", "0009_extend_authtoken_field"),
    ]

    operations = [migrations.RunPython(hash_drf_tokens, migrations.RunPython.noop)]
