"""WSGI entry point: ``gunicorn placementsite.wsgi:application``."""

import os

from django.conf import settings
from django.core.wsgi import get_wsgi_application

from placementsite.core.api import keystone

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "placementsite.settings")

application = get_wsgi_application()

# Import the URLconf (and with it every view) while the worker starts, not during its first
# request, which would otherwise take over a second longer than the next ones.
from django.urls import get_resolver  # noqa: E402

get_resolver().url_patterns  # noqa: B018

if settings.PLACEMENT_AUTH_STRATEGY == "keystone":
    # As Placement deploys it: keystonemiddleware's auth_token validates tokens before Django.
    application = keystone.wrap(application)
