"""Database helpers every app may use."""

from contextlib import contextmanager

from django.db import connections, router, transaction


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
