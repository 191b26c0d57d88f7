"""Database helpers every app may use."""

from collections.abc import Sequence
from contextlib import contextmanager
from typing import Any

from django.db import connection, connections, models, router, transaction
from django.db.models import BigIntegerField, CharField, Func
from django.db.models.sql import Query


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


def query_rows(query: Query) -> list[tuple[Any, ...]]:
    """The rows of a queryset's ``query`` as plain tuples, straight from the reading
    connection's cursor: no converters, for many rows of ids, numbers, text and booleans
    (SQLite's 0 and 1 answer for them)."""
    with reading_connection().cursor() as cursor:
        cursor.execute(*query.sql_with_params())
        return cursor.fetchall()


class EpochSeconds(Func):
    """A timestamp as the whole seconds since the epoch (UTC), an integer made by the
    database: what a Last-Modified header keeps of it, read for many rows without building
    an aware ``datetime`` for each. NULL stays NULL."""

    output_field = BigIntegerField()

    def as_postgresql(self, compiler, connection, **extra):
        template = "FLOOR(EXTRACT(EPOCH FROM %(expressions)s))::bigint"
        return self.as_sql(compiler, connection, template=template, **extra)

    def as_sqlite(self, compiler, connection, **extra):
        # Django keeps a timestamp as UTC text on SQLite, 'YYYY-MM-DD HH:MM:SS.ffffff': the
        # fraction cut off as text (strftime would round it to milliseconds first).
        template = "CAST(strftime('%%%%s', substr(%(expressions)s, 1, 19)) AS INTEGER)"
        return self.as_sql(compiler, connection, template=template, **extra)


def rows_insert(
    model: type[models.Model], names: Sequence[str], rows: Sequence[Sequence[Any]]
) -> None:
    """``rows`` inserted into ``model``'s table in one statement, each row the values of the
    fields ``names`` in that order, without a model instance per row (building and preparing
    those costs more than the insert itself when the rows are many). On PostgreSQL one
    ``INSERT ... SELECT FROM unnest(...)`` of one array per field, each value as psycopg
    passes it (ints, floats, strings, datetimes, UUIDs, None); elsewhere each value prepared
    by its field and the rows executed as one batch. No ids are returned; what a save would
    fill in (``auto_now``, defaults) is the caller's to give."""
    if not rows:
        return
    fields = [model._meta.get_field(name) for name in names]
    quote = connection.ops.quote_name
    columns = ", ".join(quote(field.column) for field in fields)
    table = quote(model._meta.db_table)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            arrays = ", ".join(f"%s::{field.db_type(connection)}[]" for field in fields)
            cursor.execute(
                f"INSERT INTO {table} ({columns}) SELECT * FROM unnest({arrays})",
                [list(values) for values in zip(*rows, strict=True)],
            )
            return
        cursor.executemany(
            f"INSERT INTO {table} ({columns}) VALUES ({', '.join(['%s'] * len(fields))})",
            [
                [
                    field.get_db_prep_save(value, connection)
                    for field, value in zip(fields, row, strict=True)
                ]
                for row in rows
            ],
        )


def rows_update(
    model: type[models.Model], records: Sequence[models.Model], names: Sequence[str]
) -> None:
    """``records``' fields ``names`` saved (as they are on the instances: ``auto_now`` is
    not applied): on PostgreSQL in one update joined with the new values unnested (Django's
    ``bulk_update`` builds a CASE per field and row, and takes longer to build it than the
    rows' own updates take); elsewhere row by row."""
    if not records:
        return
    if connection.vendor != "postgresql":
        for record in records:
            record.save(update_fields=names)
        return
    pk = model._meta.pk
    fields = [pk, *(model._meta.get_field(name) for name in names)]
    quote = connection.ops.quote_name
    values = [
        [field.get_db_prep_save(getattr(record, field.attname), connection) for record in records]
        for field in fields
    ]
    arrays = ", ".join(f"%s::{field.db_type(connection)}[]" for field in fields)
    sets = ", ".join(f"{quote(field.column)} = v.{quote(field.column)}" for field in fields[1:])
    columns = ", ".join(quote(field.column) for field in fields)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {quote(model._meta.db_table)} AS t SET {sets} "
            f"FROM unnest({arrays}) AS v({columns}) "
            f"WHERE t.{quote(pk.column)} = v.{quote(pk.column)}",
            values,
        )
