"""django-prometheus's SQLite backend with the cursor of placementsite.observability.db."""

from django_prometheus.db.backends.sqlite3 import base as prometheus_base

from placementsite.observability.db import ExportingCursorWrapper

DatabaseFeatures = prometheus_base.DatabaseFeatures


class DatabaseWrapper(prometheus_base.DatabaseWrapper):
    _cursor_class = None

    def create_cursor(self, name=None):
        # django-prometheus builds the class at each cursor: here once per connection.
        if self._cursor_class is None:
            self._cursor_class = ExportingCursorWrapper(self.CURSOR_CLASS, self.alias, self.vendor)
        return self.connection.cursor(factory=self._cursor_class)
