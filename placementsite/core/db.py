"""Database helpers every app may use."""

from contextlib import contextmanager

from django.db import connections, transaction


@contextmanager
def read_snapshot(using="default"):
    """Reads that must agree with one another: on PostgreSQL one REPEATABLE READ, READ ONLY
    transaction, so that every query inside sees the database as of its first one, whatever
    commits meanwhile (SQLite serialises writers: its transaction is one snapshot already).

    Inside a transaction that has already run queries the isolation level cannot change any
    more; the outer transaction's is kept.
    """
    connection = connections[using]
    outer = connection.in_atomic_block
    with transaction.atomic(using=using):
        if connection.vendor == "postgresql" and not outer:
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        yield
