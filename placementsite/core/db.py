"""Database helpers every app may use."""

from contextlib import contextmanager

from django.db import connections, router, transaction
from django.db.models import CharField, Func


def reading_connection():
    """The connection a raw read should use: the one the database router gives reads (a
    replica for the requests that tolerate one, see ``core/replicas.py``; else the primary)."""
    return connections[router.db_for_read(None)]


@contextmanager
def read_snapshot(using=None):
    """Reads that must agree with one another: on PostgreSQL one REPEATABLE READ, READ ONLY
    transaction, so that every query inside sees the database as of its first one, whatever
    commits meanwhile (SQLite serialises writers: its transaction is one snapshot already).

    ``using``: the database; by default the router's choice for reads.

    Inside a transaction that has already run queries the isolation level cannot change any
    more; the outer transaction's is kept.
    """
    using = using or router.db_for_read(None)
    connection = connections[using]
    outer = connection.in_atomic_block
    with transaction.atomic(using=using):
        if connection.vendor == "postgresql" and not outer:
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        yield


class UuidText(Func):
    """A uuid column (or subquery) as its canonical text, ``8-4-4-4-12`` in lower case, made by
    the database: reading many uuids this way skips building a ``uuid.UUID`` for each (as
    much time as the rest of a large listing's row). NULL stays NULL."""

    output_field = CharField()

    def as_postgresql(self, compiler, connection, **extra):
        return self.as_sql(compiler, connection, template="CAST(%(expressions)s AS text)", **extra)

    def as_sqlite(self, compiler, connection, **extra):
        # Django keeps a uuid as 32 hex digits on SQLite: the dashes are put in here.
        sql, params = compiler.compile(self.source_expressions[0])
        spans = ((1, 8), (9, 4), (13, 4), (17, 4), (21, 12))
        parts = [f"substr({sql}, {start}, {length})" for start, length in spans]
        return "lower(" + " || '-' || ".join(parts) + ")", tuple(params) * len(spans)
