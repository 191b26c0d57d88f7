"""Request ids: every response carries ``openstack-request-id``.

A caller may pass its own ``X-OpenStack-Request-Id``; when it has the form
``req-<uuid>`` it is logged as the global request id, tying our log lines to
the caller's (nova, neutron) request.
"""

import contextvars
import logging
import re
import uuid

RESPONSE_HEADER = "openstack-request-id"
INBOUND_HEADER = "HTTP_X_OPENSTACK_REQUEST_ID"
_GLOBAL_ID_RE = re.compile(r"^req-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}$")

current_request_id = contextvars.ContextVar("placement_request_id", default="-")
current_global_request_id = contextvars.ContextVar("placement_global_request_id", default="-")


def new_request_id():
    return f"req-{uuid.uuid4()}"


def global_request_id(meta):
    """The caller's request id, if it is well formed; otherwise None."""
    value = meta.get(INBOUND_HEADER, "")
    return value if _GLOBAL_ID_RE.match(value) else None


class RequestIdLogFilter(logging.Filter):
    """Adds the current request ids to every log record."""

    def filter(self, record):
        record.request_id = current_request_id.get()
        record.global_request_id = current_global_request_id.get()
        return True
