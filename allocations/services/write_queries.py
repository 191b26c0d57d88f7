"""The allocation write's fixed-shape statements, as SQL text: each replaces several ORM
round trips with one (a boot's claim sends a dozen statements fewer). They run at the same
points of the write as the statements they replace, under the same row locks. On another
database than PostgreSQL (SQLite, for development) the ORM does the same in more statements."""

from collections.abc import Collection, Iterable, Mapping, Sequence

from django.db import connection
from django.db.models import Exists, OuterRef
from django.db.models.functions import Coalesce
from django.utils import timezone

from providers.capacity import CAPACITY_FIELDS
from providers.models import DeviceUnit, Inventory

from ..models import Allocation, Consumer, ConsumerType, Project, ProviderUsage, User
from .usage import usage_apply

_OWNERS = """
    SELECT 'project', external_id, id FROM allocations_project WHERE external_id = ANY(%s)
    UNION ALL
    SELECT 'user', external_id, id FROM allocations_user WHERE external_id = ANY(%s)
    UNION ALL
    SELECT 'type', name, id FROM allocations_consumertype WHERE name = ANY(%s)
"""


def owner_ids(
    *, projects: Collection[str], users: Collection[str], types: Collection[str]
) -> dict[tuple[str, str], int]:
    """``{("project" | "user" | "type", name): id}`` of the rows that exist, in one read."""
    if connection.vendor != "postgresql":
        found: dict[tuple[str, str], int] = {}
        for kind, model, column, names in (
            ("project", Project, "external_id", projects),
            ("user", User, "external_id", users),
            ("type", ConsumerType, "name", types),
        ):
            rows = model.objects.filter(**{f"{column}__in": names}).values_list(column, "id")
            found.update({(kind, name): row_id for name, row_id in rows})
        return found
    with connection.cursor() as cursor:
        cursor.execute(_OWNERS, [sorted(projects), sorted(users), sorted(types)])
        return {(kind, name): row_id for kind, name, row_id in cursor.fetchall()}


_NEW_CONSUMERS = """
    INSERT INTO allocations_consumer
        (created_at, updated_at, uuid, project_id, user_id, consumer_type_id, generation)
    SELECT %s, %s, v.uuid, v.project_id, v.user_id, v.type_id, %s
    FROM unnest(%s::uuid[], %s::bigint[], %s::bigint[], %s::bigint[])
        WITH ORDINALITY AS v(uuid, project_id, user_id, type_id, n)
    ORDER BY v.n
    ON CONFLICT (uuid) DO NOTHING
    RETURNING id, uuid
"""


def consumers_insert(
    *, rows: Sequence[tuple[str, int, int, int | None]], generation: int
) -> dict[str, Consumer]:
    """Insert the consumers ``rows`` (``(uuid, project id, user id, type id or None)``, in
    uuid order) that do not exist yet, with ``generation``; returns the new ones as
    ``{uuid: Consumer}``. A uuid another transaction holds (committed, or inserting it now:
    the insert waits for it) is left out, for the caller to lock and check (and every one, on
    another database than PostgreSQL)."""
    if not rows or connection.vendor != "postgresql":
        return {}
    now = timezone.now()
    uuids, projects, users, types = (list(column) for column in zip(*rows, strict=True))
    with connection.cursor() as cursor:
        cursor.execute(_NEW_CONSUMERS, [now, now, generation, uuids, projects, users, types])
        made = {str(uuid): row_id for row_id, uuid in cursor.fetchall()}
    return {
        uuid: Consumer(
            id=made[uuid],
            uuid=uuid,
            project_id=project,
            user_id=user,
            consumer_type_id=consumer_type,
            generation=generation,
            created_at=now,
            updated_at=now,
        )
        for uuid, project, user, consumer_type in rows
        if uuid in made
    }


#: One inventory as the write's capacity check reads it: (provider id, class id, class name,
#: the Capacity fields in CAPACITY_FIELDS order, used, has device units).
CapacityRow = tuple[int, int, str, int, int, int, int, int, float, int, bool]

_CAPACITY = """
    SELECT i.resource_provider_id, c.id, c.name,
           i.total, i.reserved, i.min_unit, i.max_unit, i.step_size, i.allocation_ratio,
           COALESCE((SELECT u.used FROM allocations_providerusage u
                     WHERE u.resource_provider_id = i.resource_provider_id
                       AND u.resource_class_id = i.resource_class_id), 0),
           EXISTS (SELECT 1 FROM providers_deviceunit d
                   WHERE d.provider_id = i.resource_provider_id
                     AND d.resource_class_id = i.resource_class_id)
    FROM providers_inventory i
    JOIN providers_resourceclass c ON c.id = i.resource_class_id
    WHERE i.resource_provider_id = ANY(%s) AND c.name = ANY(%s)
"""


def inventories_with_usage(
    *, provider_ids: Iterable[int], class_names: Iterable[str]
) -> list[CapacityRow]:
    """One row per inventory of ``provider_ids`` in the classes named: ``(provider id, class
        id, class name, total, reserved, min_unit, max_unit, step_size, allocation_ratio, used,
        has device units)``, ``used`` as the usage rows hold it. Read after the providers' row locks,
    so the usage is current."""
    if connection.vendor != "postgresql":
        return _inventories_with_usage_orm(provider_ids, class_names)
    with connection.cursor() as cursor:
        cursor.execute(_CAPACITY, [sorted(set(provider_ids)), sorted(class_names)])
        return cursor.fetchall()


def _inventories_with_usage_orm(
    provider_ids: Iterable[int], class_names: Iterable[str]
) -> list[CapacityRow]:
    same = {
        "resource_provider_id": OuterRef("resource_provider_id"),
        "resource_class_id": OuterRef("resource_class_id"),
    }
    used = ProviderUsage.objects.filter(**same).values("used")[:1]
    units = DeviceUnit.objects.filter(
        provider_id=OuterRef("resource_provider_id"),
        resource_class_id=OuterRef("resource_class_id"),
    )
    return list(
        Inventory.objects.filter(
            resource_provider_id__in=provider_ids, resource_class__name__in=class_names
        )
        .annotate(used=Coalesce(used, 0), has_units=Exists(units))
        .values_list(
            "resource_provider_id",
            "resource_class_id",
            "resource_class__name",
            *CAPACITY_FIELDS,
            "used",
            "has_units",
        )
    )


_ALLOCATIONS_COUNTED = """
    WITH written AS (
        INSERT INTO allocations_allocation
            (created_at, updated_at, resource_provider_id, consumer_id, resource_class_id, used)
        SELECT %s, %s, v.provider_id, v.consumer_id, v.class_id, v.used
        FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[], %s::integer[])
            AS v(provider_id, consumer_id, class_id, used)
    )
    INSERT INTO allocations_providerusage (resource_provider_id, resource_class_id, used)
    SELECT d.provider_id, d.class_id, d.used
    FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[]) AS d(provider_id, class_id, used)
    ORDER BY d.provider_id, d.class_id
    ON CONFLICT (resource_provider_id, resource_class_id)
    DO UPDATE SET used = allocations_providerusage.used + EXCLUDED.used
"""


def allocations_insert(*, rows: list[Allocation], deltas: Mapping[tuple[int, int], int]) -> None:
    """Insert the Allocation ``rows`` and add ``deltas`` (``{(provider id, class id): units}``,
    the rows' units less what the write took off) to the usage rows, under the providers'
    locks: one statement on PostgreSQL (the usage upsert fed by a CTE that inserts the rows),
    the ORM's insert then :func:`~.usage.usage_apply` elsewhere."""
    changed = sorted((key, delta) for key, delta in deltas.items() if delta)
    if connection.vendor != "postgresql" or not rows or not changed:
        Allocation.objects.bulk_create(rows)
        usage_apply(deltas=dict(changed))
        return
    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(
            _ALLOCATIONS_COUNTED,
            [
                now,
                now,
                [row.resource_provider_id for row in rows],
                [row.consumer_id for row in rows],
                [row.resource_class_id for row in rows],
                [row.used for row in rows],
                [provider_id for (provider_id, _class), _delta in changed],
                [class_id for (_provider, class_id), _delta in changed],
                [delta for _key, delta in changed],
            ],
        )
