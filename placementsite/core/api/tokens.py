"""API tokens (``X-Auth-Token`` of the ``token`` strategy): stored hashed, with an expiry.

django-rest-knox keeps the tokens: only the SHA-512 digest of a token (the primary key) and its
first characters (``token_key``, shown in the admin) are stored, so a database dump or the
admin's token list gives nobody a usable token. A token is shown once, when it is created.
"""

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from knox.crypto import hash_token
from knox.models import AuthToken


def token_create(*, user, days=None, rotate=False):
    """A new token of ``user`` valid ``days`` days (PLACEMENT_TOKEN_TTL_DAYS by default).

    ``rotate`` deletes the user's other tokens in the same transaction. Returns ``(AuthToken,
    token)``; the token itself is not stored and cannot be shown again.
    """
    days = settings.PLACEMENT_TOKEN_TTL_DAYS if days is None else days
    expiry = timedelta(days=days) if days > 0 else None
    with transaction.atomic():
        if rotate:
            AuthToken.objects.filter(user=user).delete()
        return AuthToken.objects.create(user=user, expiry=expiry)


def token_identity(key):
    """``(username, is_superuser, group names)`` of the active user owning the unexpired token
    ``key``, else None, in one statement (one row per group).

    The digest is the primary key, so the lookup compares hashes, never the token itself. An
    expired token is deleted when it is presented.
    """
    if not key:
        return None
    digest = hash_token(key)
    rows = list(
        AuthToken.objects.filter(digest=digest).values_list(
            "expiry",
            "user__username",
            "user__is_active",
            "user__is_superuser",
            "user__groups__name",
        )
    )
    if not rows:
        return None
    expiry, username, is_active, is_superuser, _group = rows[0]
    if expiry is not None and expiry <= timezone.now():
        AuthToken.objects.filter(digest=digest).delete()
        return None
    if not is_active:
        return None
    return username, is_superuser, [row[4] for row in rows if row[4] is not None]
