"""django-prometheus's PostgreSQL backend with the cursor of placementsite.observability.db."""

from django.db.backends.postgresql import base
from django_prometheus.db.backends.postgresql import base as prometheus_base

from placementsite.observability.db import ExportingCursorWrapper


class DatabaseWrapper(prometheus_base.DatabaseWrapper):
    def get_connection_params(self):
        conn_params = base.DatabaseWrapper.get_connection_params(self)
        conn_params["cursor_factory"] = ExportingCursorWrapper(
            conn_params["cursor_factory"], self.alias, self.vendor
        )
        return conn_params
