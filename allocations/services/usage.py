"""The maintained usage rows (:class:`~allocations.models.ProviderUsage`): their one writer.

Every allocation write of :mod:`.allocations` ends by handing :func:`usage_apply` what it
changed, ``{(provider id, class id): units added (negative: freed)}``, in its own
transaction and under the row locks it holds on those providers: one statement adds the
deltas (``INSERT ... ON CONFLICT DO UPDATE SET used = used + delta``, which PostgreSQL and
SQLite 3.24+ both speak), creating the rows a provider's first allocation of a class needs.
Since every write to a provider's allocations holds that provider's lock, two writers never
update the same usage row at once.

:func:`usage_rebuild` recomputes the rows from the allocations (the sum): the repair of
``placement_audit`` and the step that follows a load written without the service (a
benchmark's bulk insert).
"""

from collections.abc import Iterable, Mapping

from django.db import connection, transaction

from providers.models import ResourceProvider

from ..models import Allocation, ProviderUsage
from ..selectors.usage import usage_drift

_TABLE = ProviderUsage._meta.db_table
_ALLOCATIONS = Allocation._meta.db_table
# Rows per statement: SQLite allows 999 parameters in older builds (3 per row).
_CHUNK = 300

_ADD = """
    INSERT INTO {table} (resource_provider_id, resource_class_id, used)
    VALUES {rows}
    ON CONFLICT (resource_provider_id, resource_class_id)
    DO UPDATE SET used = {table}.used + EXCLUDED.used
"""


def usage_apply(*, deltas: Mapping[tuple[int, int], int]) -> None:
    """Add ``deltas`` (``{(provider id, class id): units}``, negative to free) to the usage
    rows, in one statement (per 300 pairs), in key order. The caller holds the providers'
    row locks, in the transaction that changes their allocations by exactly these amounts."""
    changed = sorted((key, delta) for key, delta in deltas.items() if delta)
    for start in range(0, len(changed), _CHUNK):
        chunk = changed[start : start + _CHUNK]
        sql = _ADD.format(table=_TABLE, rows=", ".join(["(%s, %s, %s)"] * len(chunk)))
        params = [
            value
            for (provider_id, class_id), delta in chunk
            for value in (provider_id, class_id, delta)
        ]
        with connection.cursor() as cursor:
            cursor.execute(sql, params)


def usage_deltas(
    *, rows: Iterable[tuple[int, int, int]], sign: int = 1
) -> dict[tuple[int, int], int]:
    """``{(provider id, class id): sign * sum of used}`` of ``(provider id, class id, used)``
    rows (allocations written, or freed with ``sign=-1``)."""
    deltas: dict[tuple[int, int], int] = {}
    for provider_id, class_id, used in rows:
        key = (provider_id, class_id)
        deltas[key] = deltas.get(key, 0) + sign * used
    return deltas


_REBUILD_ALL = f"""
    INSERT INTO {_TABLE} (resource_provider_id, resource_class_id, used)
    SELECT resource_provider_id, resource_class_id, SUM(used)
    FROM {_ALLOCATIONS}
    GROUP BY resource_provider_id, resource_class_id
"""


def usage_rebuild(*, provider_ids: Iterable[int] | None = None) -> int:
    """Set the usage rows of ``provider_ids`` (every provider when None) to the sum of their
    allocations, their providers locked first (in id order) as every allocation write locks
    them; returns how many rows were wrong (or missing). Rows of pairs without allocations
    are set to 0."""
    with transaction.atomic():
        ids = None if provider_ids is None else sorted(set(provider_ids))
        _lock_providers(ids)
        drift = usage_drift(provider_ids=ids)
        if ids is None and len(drift) > _CHUNK:
            # A whole table out of step (a bulk load): start the rows afresh.
            ProviderUsage.objects.all().delete()
            with connection.cursor() as cursor:
                cursor.execute(_REBUILD_ALL)
        else:
            usage_apply(deltas={(d.provider_id, d.class_id): d.summed - d.used for d in drift})
    return len(drift)


def _lock_providers(provider_ids: list[int] | None) -> None:
    locked = ResourceProvider.objects.select_for_update().order_by("id")
    if provider_ids is not None:
        locked = locked.filter(id__in=provider_ids)
    list(locked.values_list("id", flat=True))
