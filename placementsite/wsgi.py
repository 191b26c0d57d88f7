"""WSGI entry point: ``gunicorn placementsite.wsgi:application``."""

import os

from django.conf import settings
from django.core.wsgi import get_wsgi_application

from placementsite.api import keystone

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "placementsite.settings")

application = get_wsgi_application()

if settings.PLACEMENT_AUTH_STRATEGY == "keystone":
    # As Placement deploys it: keystonemiddleware's auth_token validates tokens before Django.
    application = keystone.wrap(application)
