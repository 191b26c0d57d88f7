"""The service's log format (``PLACEMENT_LOG_FORMAT``), for handlers Django's LOGGING does not
configure: the Celery worker's own."""

import logging
from logging.config import DictConfigurator

from django.conf import settings

from placementsite.core.api.request_id import RequestIdLogFilter


def formatter(kind=None):
    """The formatter ``LOGGING`` declares for ``kind`` (default: ``PLACEMENT_LOG_FORMAT``)."""
    config = dict(settings.LOGGING["formatters"][kind or settings.PLACEMENT_LOG_FORMAT])
    return DictConfigurator({}).configure_formatter(config)


def use_service_format(handler, kind=None):
    """Give ``handler`` the request-id filter and the service's format."""
    handler.addFilter(RequestIdLogFilter())
    handler.setFormatter(formatter(kind))
    return handler


def format_handlers_of(logger=None):
    for handler in (logger or logging.getLogger()).handlers:
        use_service_format(handler)


def leave_to_root(name):
    """Drop the handlers of logger ``name``: its records go to the root logger's handlers."""
    logger = logging.getLogger(name)
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
    logger.propagate = True
