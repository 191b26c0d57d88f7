"""Refuse to start with a configuration every request would fail on.

Called once per process (placementsite.apps) so that gunicorn, Celery and ``manage.py`` stop at
once with a clear message rather than answering every request with a 500.
"""

import logging

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from . import auth, keystone, policy

logger = logging.getLogger("placement.api")


def check_configuration():
    strategy = settings.PLACEMENT_AUTH_STRATEGY
    if strategy not in auth.STRATEGIES:
        known = ", ".join(sorted(auth.STRATEGIES))
        raise ImproperlyConfigured(
            f"Unknown PLACEMENT_AUTH_STRATEGY {strategy!r}: use one of {known}."
        )
    if strategy == "keystone":
        # Refuse startup on options keystonemiddleware would not understand.
        keystone.check()
    if strategy == "noauth2":
        logger.warning(
            "PLACEMENT_AUTH_STRATEGY=noauth2: any caller may claim any user, project and role "
            "(development and tests only)"
        )
    defaults = settings.PLACEMENT_POLICY_DEFAULTS
    if defaults not in policy.DEFAULTS:
        raise ImproperlyConfigured(
            f"Unknown PLACEMENT_POLICY_DEFAULTS {defaults!r}: use {', '.join(policy.DEFAULTS)}."
        )
    policy_file = settings.PLACEMENT_POLICY_FILE
    if policy_file:
        try:
            policy.read_policy_file(policy_file)
        except OSError as exc:
            raise ImproperlyConfigured(
                f"PLACEMENT_POLICY_FILE {policy_file} cannot be read: {exc.strerror}"
            ) from None
        except ValueError as exc:
            raise ImproperlyConfigured(f"PLACEMENT_POLICY_FILE {policy_file}: {exc}") from None
    # Every app's rules registered once now, so that a bad declaration stops startup too.
    policy.enforcer()
