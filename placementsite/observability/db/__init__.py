"""django-prometheus's database backends (queries, errors and connections counted per database),
cheaper per statement, the same series.

Its cursor asks prometheus_client for two labelled series at every statement (``labels(...)``:
the values checked, converted and looked up under a lock) and builds two context managers
around it; a cursor's database never changes, so here the series are looked up at its first
statement and kept by its class (one per connection), and the statement is timed and its
errors counted inline, as django-prometheus does (errors by exception type, on any exception).
"""

from timeit import default_timer

from django_prometheus.db import (
    common,
    errors_total,
    execute_many_total,
    execute_total,
    query_duration_seconds,
)


def ExportingCursorWrapper(cursor_class, alias, vendor):  # noqa: N802 (django-prometheus's name)
    """django-prometheus's cursor class of ``cursor_class`` for one database, its series kept."""
    base = common.ExportingCursorWrapper(cursor_class, alias, vendor)
    kept = {}

    def series():
        found = kept.get("series")
        if found is None:
            found = kept["series"] = (
                execute_total.labels(alias, vendor),
                query_duration_seconds.labels(alias=alias, vendor=vendor),
            )
        return found

    def count_error(exc):
        errors_total.labels(alias=alias, vendor=vendor, type=type(exc).__name__).inc()

    class CursorWrapper(base):
        def execute(self, *args, **kwargs):
            executed, duration = series()
            executed.inc()
            started = default_timer()
            try:
                return super(base, self).execute(*args, **kwargs)  # the statement itself
            except BaseException as exc:
                count_error(exc)
                raise
            finally:
                duration.observe(max(default_timer() - started, 0))

        def executemany(self, query, param_list, *args, **kwargs):
            executed, duration = series()
            executed.inc(len(param_list))
            execute_many_total.labels(alias, vendor).inc(len(param_list))
            started = default_timer()
            try:
                return super(base, self).executemany(query, param_list, *args, **kwargs)
            except BaseException as exc:
                count_error(exc)
                raise
            finally:
                duration.observe(max(default_timer() - started, 0))

    return CursorWrapper
