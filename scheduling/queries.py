"""The fixed-shape queries of the allocation candidates engine, written as SQL.

Whatever a request asks, every ``GET /allocation_candidates`` runs these (sharing providers and
the trees they serve, then the summaries of the trees chosen). Their shape never changes, so
they are SQL text built once from the models' table names: building and compiling the same
querysets through the ORM on every request cost more than running them. The request-shaped
selection stays in the ORM (providers.selectors.resource_providers).

Plain SQL that PostgreSQL and SQLite both speak; lists of ids are one parameter (see
:func:`_id_in`).
"""

import json
import uuid as uuidlib
from collections.abc import Collection, Iterable, Sequence
from typing import Any, NamedTuple

from django.db import connection

from allocations.models import ProviderUsage
from placementsite.core.db import reading_connection
from providers.models import (
    SHARING_TRAIT,
    Aggregate,
    ComputeNode,
    Inventory,
    ResourceClass,
    ResourceProvider,
    ResourceProviderAggregate,
    ResourceProviderTrait,
    Trait,
)

from .models import AggregateMetadata

_PROVIDERS = ResourceProvider._meta.db_table
_INVENTORIES = Inventory._meta.db_table
_CLASSES = ResourceClass._meta.db_table
_USAGE = ProviderUsage._meta.db_table
_PROVIDER_TRAITS = ResourceProviderTrait._meta.db_table
_TRAITS = Trait._meta.db_table
_PROVIDER_AGGREGATES = ResourceProviderAggregate._meta.db_table

# Provider trait links (pt) with their trait's name (t).
_TRAIT_LINK_NAMES = f"FROM {_PROVIDER_TRAITS} pt JOIN {_TRAITS} t ON t.id = pt.trait_id"
# The ids of the providers with the trait named by the parameter (the sharing providers').
_PROVIDERS_WITH_TRAIT = f"SELECT pt.resource_provider_id {_TRAIT_LINK_NAMES} WHERE t.name = %s"

_SHARING_ANCHORS = f"""
    SELECT DISTINCT sharing.resource_provider_id, member.root_id
    FROM {_PROVIDER_AGGREGATES} sharing
    JOIN {_PROVIDER_AGGREGATES} membership ON membership.aggregate_id = sharing.aggregate_id
    JOIN {_PROVIDERS} member ON member.id = membership.resource_provider_id
    WHERE sharing.resource_provider_id IN ({_PROVIDERS_WITH_TRAIT})
"""

_TREE_MEMBERS = f"""
    SELECT id, CAST(uuid AS varchar), parent_id, root_id
    FROM {_PROVIDERS}
    WHERE {{root_in}}
    ORDER BY id
"""
# A row of _TREE_MEMBERS, and its columns by position (rows stay as the cursor gives them:
# a scheduler pass reads every provider of thousands of hosts).
TreeMember = tuple[int, str, int | None, int]  # (id, uuid, parent id, root id)
MEMBER_ID, MEMBER_UUID, MEMBER_PARENT_ID, MEMBER_ROOT_ID = range(4)

# Usage per inventory row: its provider's maintained usage row of its class (allocations'
# ProviderUsage, one at most), joined in; no allocation is summed.
# Inventory rows (i) with their class's name (c) and their usage row (u), if any.
_INVENTORY_CLASS_USAGE = f"""
    FROM {_INVENTORIES} i
    JOIN {_CLASSES} c ON c.id = i.resource_class_id
    LEFT JOIN {_USAGE} u ON u.resource_provider_id = i.resource_provider_id
       AND u.resource_class_id = i.resource_class_id
"""
_INVENTORIES_WITH_USAGE = f"""
    SELECT i.resource_provider_id, c.name, i.total, i.reserved, i.allocation_ratio,
           COALESCE(u.used, 0)
    {_INVENTORY_CLASS_USAGE}
    WHERE {{inventory_provider_in}}
    ORDER BY i.resource_provider_id, i.resource_class_id
"""

# The same per inventory row, for every provider of the trees of some roots, with its root:
# the scheduler's hosts, without listing their providers first.
_TREE_INVENTORIES_WITH_USAGE = f"""
    SELECT p.root_id, i.resource_provider_id, c.name, i.total, i.reserved, i.allocation_ratio,
           COALESCE(u.used, 0)
    FROM {_INVENTORIES} i
    JOIN {_PROVIDERS} p ON p.id = i.resource_provider_id
    JOIN {_CLASSES} c ON c.id = i.resource_class_id
    LEFT JOIN {_USAGE} u ON u.resource_provider_id = i.resource_provider_id
       AND u.resource_class_id = i.resource_class_id
    WHERE {{inventory_root_in}}
    ORDER BY i.resource_provider_id, i.resource_class_id
"""

# How many inventory rows each of some trees has: whether rows already read (a scheduler
# pass's selection) are all of a tree's.
_TREE_INVENTORY_COUNTS = f"""
    SELECT p.root_id, COUNT(*)
    FROM {_INVENTORIES} i JOIN {_PROVIDERS} p ON p.id = i.resource_provider_id
    WHERE {{root_in}}
    GROUP BY p.root_id
"""

_PROVIDER_TRAITS_AMONG = f"""
    SELECT resource_provider_id, trait_id
    FROM {_PROVIDER_TRAITS} {{providers_joined}}
    WHERE {{provider_in}} AND {{trait_in}}
"""

# In trait id order: the stable order of providers.selectors.traits (the caller puts custom
# traits last).
_TRAIT_NAMES = f"""
    SELECT pt.resource_provider_id, t.name
    {_TRAIT_LINK_NAMES} {{providers_joined}}
    WHERE {{provider_in}}
    ORDER BY pt.trait_id
"""


_SHORT_ARRAY = 100


def _id_in(column: str, ids: Iterable[int]) -> tuple[str, list[Any]]:
    """``(condition, params)``: ``column`` is one of ``ids``, the ids as one parameter.

    PostgreSQL gets one array literal (``'{1,2,3}'::bigint[]``): psycopg2 would send a list
    as ``ARRAY[1,2,3]``, one expression per id for the server to parse, and an ``IN`` list
    one placeholder each. A long array is unnested in a subquery: against ``= ANY(array)``
    the planner estimates the selectivity of every element, 7 ms of planning for 5,000 ids,
    more than running the query. SQLite gets a JSON array.
    """
    ids = list(map(int, ids))
    if connection.vendor == "postgresql":
        if len(ids) > _SHORT_ARRAY:
            return f"{column} IN (SELECT unnest(%s::bigint[]))", [_long_array(ids)]
        return f"{column} = ANY(%s::bigint[])", ["{" + ",".join(map(str, ids)) + "}"]
    if connection.vendor == "sqlite":
        return f"{column} IN (SELECT value FROM json_each(%s))", [json.dumps(ids)]
    return f"{column} IN ({', '.join(['%s'] * len(ids)) or 'NULL'})", ids


# The last long array literal built, with its ids: the summaries of many trees send the same
# ids twice or three times in a row (their providers' to two statements, and for flat hosts the
# roots' are the same), and 10,000 ids take about a millisecond to format. Compared by value
# (a list comparison, in C), so never stale; one entry, replaced by the next long array.
_last_long_array: tuple[list[int], str] = ([], "{}")


def _long_array(ids: list[int]) -> str:
    """The PostgreSQL array literal of ``ids``, formatted once for the same ids in a row."""
    global _last_long_array
    last_ids, literal = _last_long_array
    if ids != last_ids:
        literal = "{" + ",".join(map(str, ids)) + "}"
        _last_long_array = (ids, literal)
    return literal


def _id_joined(column: str, ids: Collection[int]) -> tuple[str, str, list[Any]]:
    """``(join, condition, params)``: ``column`` is one of ``ids`` (distinct), as a join
    (for the FROM list, before the WHERE clause's parameters) and a condition.

    A long array on PostgreSQL is joined as a set of rows: ``IN (SELECT unnest(...))``
    (:func:`_id_in`) is a semi-join whose side of ids the planner guesses at 200 distinct
    rows, so it probes an index once per id where, for thousands of them, a hash join over
    the rows is cheaper (the trait links of 25,000 hosts: 30 to 12 ms); joined, it knows
    how many. Otherwise the join is empty and the condition is :func:`_id_in`'s."""
    if connection.vendor == "postgresql" and len(ids) > _SHORT_ARRAY:
        join = f"JOIN unnest(%s::bigint[]) AS wanted(wanted_id) ON wanted.wanted_id = {column}"
        return join, "TRUE", [_long_array(list(map(int, ids)))]
    condition, params = _id_in(column, ids)
    return "", condition, params


def fetch(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
    """The rows of ``sql`` as plain tuples, straight from the cursor."""
    with reading_connection().cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


# The class and trait names of a request looked up with the sharing anchors, in one round trip
# (each statement of a request costs a wake-up of the database's process besides its work):
# rows (NAMED_CLASS, name, id, None), (NAMED_TRAIT, name, id, None), (SHARING_ANCHOR, None,
# sharing provider id, root id), and for a first window of roots (WINDOW_LAST, None, its last
# root's id or None, None).
NAMED_CLASS, NAMED_TRAIT, SHARING_ANCHOR, WINDOW_LAST = range(4)
_NAMED = "SELECT {kind}, name, id, CAST(NULL AS bigint) FROM {table} WHERE name IN ({names})"
_ANCHORS_TAGGED = """
    SELECT {kind}, CAST(NULL AS varchar), anchor.resource_provider_id, anchor.root_id
    FROM ({anchors}) AS anchor
"""
# A root: no parent. Written so that no index serves it and the planner does not guess it
# rare (ids are positive): without planner statistics (a fresh database) it guessed ``parent_id
# IS NULL`` at 99 of 100,000 providers, read them all through the parent's index and sorted
# them for the first roots by id (23 ms against 0.06 ms walking the primary key's index).
_IS_ROOT = "COALESCE(parent_id, 0) <= 0"
# The last root of a window of roots (the ``%s + 1`` first roots whose id is at least ``%s``),
# as root_at_offset: NULL when there are fewer roots.
_WINDOW_LAST = f"""(
    SELECT id FROM {_PROVIDERS} WHERE {_IS_ROOT} AND id >= %s ORDER BY id LIMIT 1 OFFSET %s
)"""
_WINDOW_LAST_TAGGED = (
    f"SELECT {WINDOW_LAST}, CAST(NULL AS varchar), {_WINDOW_LAST}, CAST(NULL AS bigint)"
)
# The sharing anchors of the trees in a window of roots alone (roots from ``%s`` to _WINDOW_LAST
# or the highest id ``%s``: a range, which the planner guesses narrow with or without
# statistics): each provider of those trees is looked up among the sharing providers'
# aggregates, an index probe each, rather than every member of the aggregates read and joined
# (a quarter of 100,000 hosts in one aggregate: about 50 ms against 0.3 ms for a window of 80
# roots). The barrier keeps PostgreSQL from turning the probe into that join ({barrier}:
# OFFSET 0 on PostgreSQL, nothing on SQLite).
_SHARING_ANCHORS_IN_WINDOW = f"""
    SELECT DISTINCT sharing.resource_provider_id, member.root_id
    FROM {_PROVIDER_AGGREGATES} sharing
    JOIN {_PROVIDERS} member
        ON member.root_id >= %s AND member.root_id <= COALESCE({_WINDOW_LAST}, %s)
    WHERE sharing.resource_provider_id IN ({_PROVIDERS_WITH_TRAIT}) AND EXISTS (
        SELECT 1 FROM {_PROVIDER_AGGREGATES} membership
        WHERE membership.resource_provider_id = member.id
            AND membership.aggregate_id = sharing.aggregate_id{{barrier}}
    )
"""
_LOWEST_ID, _HIGHEST_ID = -(2**63), 2**63 - 1


class NamesAndAnchors(NamedTuple):
    """What :func:`names_and_sharing_anchors` found."""

    class_ids: dict[str, int]
    trait_ids: dict[str, int]
    anchors: list[tuple[int, int]]  # as sharing_anchors(), or those of the first window
    window_last: int | None  # the first window's last root (None: every root is in it)


def names_and_sharing_anchors(
    class_names: Collection[str], trait_names: Collection[str], first_window: int | None = None
) -> NamesAndAnchors:
    """The names that exist among ``class_names`` and ``trait_names`` (``{name: id}``) and the
    rows of :func:`sharing_anchors`, in one query. With ``first_window`` (a number of roots):
    the bound of the first window of that many roots by id (``window_last``, as
    :func:`root_at_offset` from the lowest id) and only the anchors of the trees in it."""
    parts, params = [], []
    for kind, table, names in (
        (NAMED_CLASS, _CLASSES, class_names),
        (NAMED_TRAIT, _TRAITS, trait_names),
    ):
        if names:
            placeholders = ", ".join(["%s"] * len(names))
            parts.append(_NAMED.format(kind=kind, table=table, names=placeholders))
            params += sorted(names)
    if first_window is None:
        parts.append(_ANCHORS_TAGGED.format(kind=SHARING_ANCHOR, anchors=_SHARING_ANCHORS))
        params.append(SHARING_TRAIT)
    else:
        window_parts, window_params = _window_and_anchors(_LOWEST_ID, first_window)
        parts += window_parts
        params += window_params
    return _tagged_rows(parts, params)


def _tagged_rows(parts: list[str], params: list[Any]) -> NamesAndAnchors:
    """The rows of ``parts`` (tagged NAMED_CLASS, NAMED_TRAIT, SHARING_ANCHOR or WINDOW_LAST),
    read in one statement, sorted into a :class:`NamesAndAnchors`."""
    found = NamesAndAnchors({}, {}, [], None)
    for kind, name, pk, root_id in fetch(" UNION ALL ".join(parts), params):
        if kind == SHARING_ANCHOR:
            found.anchors.append((pk, root_id))
        elif kind == WINDOW_LAST:
            found = found._replace(window_last=pk)
        else:
            (found.class_ids if kind == NAMED_CLASS else found.trait_ids)[name] = pk
    return found


def _window_and_anchors(first: int, size: int) -> tuple[list[str], list[Any]]:
    """The statements (to join with UNION ALL) and parameters of the last root of the window
    of ``size`` roots from the first whose id is at least ``first`` (a WINDOW_LAST row) and of
    the sharing anchors of the trees in it (SHARING_ANCHOR rows)."""
    barrier = " OFFSET 0" if connection.vendor == "postgresql" else ""
    anchors = _SHARING_ANCHORS_IN_WINDOW.format(barrier=barrier)
    parts = [_WINDOW_LAST_TAGGED, _ANCHORS_TAGGED.format(kind=SHARING_ANCHOR, anchors=anchors)]
    offset = size - 1
    return parts, [first, offset, first, first, offset, _HIGHEST_ID, SHARING_TRAIT]


def window_and_sharing_anchors(
    *, first: int, size: int
) -> tuple[int | None, list[tuple[int, int]]]:
    """The last root of the window of ``size`` roots from the first whose id is at least
    ``first`` (as :func:`root_at_offset`; None: fewer roots) and the rows of
    :func:`sharing_anchors` of the trees in that window alone, in one query."""
    found = _tagged_rows(*_window_and_anchors(first, size))
    return found.window_last, found.anchors


def sharing_anchors() -> list[tuple[int, int]]:
    """``[(sharing provider id, root id of a tree it is shared with), ...]``.

    A tree is shared with when any of its providers is in an aggregate of the sharing
    provider (a provider with MISC_SHARES_VIA_AGGREGATE).
    """
    return fetch(_SHARING_ANCHORS, [SHARING_TRAIT])


_ROOT_AT_OFFSET = f"""
    SELECT id FROM {_PROVIDERS}
    WHERE {_IS_ROOT} AND id >= %s
    ORDER BY id LIMIT 1 OFFSET %s
"""


def root_at_offset(*, first: int, offset: int) -> int | None:
    """The id of the root provider ``offset`` places after the first root whose id is at
    least ``first`` (None: fewer roots than that), walking the primary key's index."""
    rows = fetch(_ROOT_AT_OFFSET, [first, offset])
    return rows[0][0] if rows else None


# The summaries of a few trees (a request with a limit) in one statement rather than three
# (tree members, inventories with usage, trait names: each a round trip): rows tagged
# SUMMARY_MEMBER, SUMMARY_INVENTORY or SUMMARY_TRAIT, each in its own statement's order (two
# sort columns last). For many trees the three statements stay (the sort of every row of a
# large answer spilled to disk). The trees' providers are read once; on PostgreSQL each one's
# inventories and traits are a lateral subquery behind a barrier ({inventories_of} and
# {traits_of}), read through the provider's index: without planner statistics (a fresh
# database) PostgreSQL guessed some 1,500 inventory rows per provider and hashed every
# inventory and usage row of 100,000 providers instead (269 against 0.7 ms). SQLite, which
# has no LATERAL, joins them.
SUMMARY_MEMBER, SUMMARY_INVENTORY, SUMMARY_TRAIT = range(3)
FEW_TREES = 100
_INVENTORIES_OF = f"""
    SELECT i.resource_provider_id AS provider_id, c.name, i.total, i.reserved,
           i.allocation_ratio, COALESCE(u.used, 0) AS used, i.resource_class_id
    {_INVENTORY_CLASS_USAGE}
"""
_TRAITS_OF = f"""
    SELECT pt.resource_provider_id AS provider_id, t.name, pt.trait_id
    {_TRAIT_LINK_NAMES}
"""
_LATERAL = "CROSS JOIN LATERAL ({rows} WHERE {column} = m.id OFFSET 0) x"
_JOINED = "JOIN ({rows}) x ON x.provider_id = m.id"
_TREE_SUMMARIES = f"""
    WITH m AS (SELECT id, uuid, parent_id, root_id FROM {_PROVIDERS} WHERE {{root_in}})
    SELECT {SUMMARY_MEMBER}, m.id, CAST(m.uuid AS varchar), m.parent_id, m.root_id,
           CAST(NULL AS float), CAST(NULL AS bigint), m.id, 0
    FROM m
    UNION ALL
    SELECT {SUMMARY_INVENTORY}, m.id, x.name, x.total, x.reserved, x.allocation_ratio,
           x.used, m.id, x.resource_class_id
    FROM m {{inventories_of}}
    UNION ALL
    SELECT {SUMMARY_TRAIT}, m.id, x.name, NULL, NULL, NULL, NULL, x.trait_id, 0
    FROM m {{traits_of}}
    ORDER BY 1, 8, 9
"""


def tree_summaries(
    root_ids: Collection[int],
) -> tuple[list[TreeMember], list[tuple[int, str, int, int, float, int]], list[tuple[int, str]]]:
    """``(tree_members(root_ids), inventories_with_usage(their ids), trait_names(their
    ids))`` in one query, for a few trees (at most FEW_TREES)."""
    condition, params = _id_in("root_id", root_ids)
    members, inventories, traits = [], [], []
    postgres = connection.vendor == "postgresql"
    if postgres:
        inventories_of = _LATERAL.format(rows=_INVENTORIES_OF, column="i.resource_provider_id")
        traits_of = _LATERAL.format(rows=_TRAITS_OF, column="pt.resource_provider_id")
    else:
        inventories_of = _JOINED.format(rows=_INVENTORIES_OF)
        traits_of = _JOINED.format(rows=_TRAITS_OF)
    sql = _TREE_SUMMARIES.format(
        root_in=condition, inventories_of=inventories_of, traits_of=traits_of
    )
    for kind, pk, text, a, b, ratio, used, _k1, _k2 in fetch(sql, params):
        if kind == SUMMARY_MEMBER:
            # SQLite stores uuids as 32 hex digits; the API speaks the dashed form.
            members.append((pk, text if postgres else str(uuidlib.UUID(text)), a, b))
        elif kind == SUMMARY_INVENTORY:
            inventories.append((pk, text, a, b, ratio, used))
        else:
            traits.append((pk, text))
    return members, inventories, traits


def tree_members(root_ids: Iterable[int]) -> list[TreeMember]:
    """``[(id, uuid, parent id, root id), ...]`` of every provider of the trees ``root_ids``,
    in id order."""
    condition, params = _id_in("root_id", root_ids)
    rows = fetch(_TREE_MEMBERS.format(root_in=condition), params)
    if connection.vendor != "postgresql":
        # SQLite stores uuids as 32 hex digits; the API speaks the dashed form.
        rows = [(pk, str(uuidlib.UUID(text)), *rest) for pk, text, *rest in rows]
    return rows


def inventories_with_usage(
    provider_ids: Iterable[int],
) -> list[tuple[int, str, int, int, float, int]]:
    """``[(provider id, class name, total, reserved, allocation_ratio, used), ...]`` of the
    providers, in provider and class id order."""
    inventory_in, inventory_params = _id_in("i.resource_provider_id", list(provider_ids))
    return fetch(
        _INVENTORIES_WITH_USAGE.format(inventory_provider_in=inventory_in), inventory_params
    )


def tree_inventories_with_usage(
    root_ids: Iterable[int],
) -> list[tuple[int, int, str, int, int, float, int]]:
    """``[(root id, provider id, class name, total, reserved, allocation_ratio, used), ...]``
    of every provider of the trees ``root_ids``, in provider and class id order."""
    inventory_in, inventory_params = _id_in("p.root_id", list(root_ids))
    return fetch(
        _TREE_INVENTORIES_WITH_USAGE.format(inventory_root_in=inventory_in), inventory_params
    )


def tree_inventory_counts(root_ids: Collection[int]) -> dict[int, int]:
    """``{root id: inventory rows of its tree}`` (trees without one left out)."""
    condition, params = _id_in("p.root_id", root_ids)
    return dict(fetch(_TREE_INVENTORY_COUNTS.format(root_in=condition), params))


def provider_traits(provider_ids: Iterable[int], trait_ids: Iterable[int]) -> list[tuple[int, int]]:
    """``[(provider id, trait id), ...]``: which of ``trait_ids`` each provider has."""
    joined, provider_in, provider_params = _id_joined("resource_provider_id", list(provider_ids))
    trait_in, trait_params = _id_in("trait_id", trait_ids)
    sql = _PROVIDER_TRAITS_AMONG.format(
        providers_joined=joined, provider_in=provider_in, trait_in=trait_in
    )
    return fetch(sql, provider_params + trait_params)


def trait_names(provider_ids: Iterable[int]) -> list[tuple[int, str]]:
    """``[(provider id, trait name), ...]`` in trait id order."""
    joined, condition, params = _id_joined("pt.resource_provider_id", list(provider_ids))
    return fetch(_TRAIT_NAMES.format(providers_joined=joined, provider_in=condition), params)


_PROVIDER_NAMES = f"""
    SELECT id, CAST(uuid AS varchar), name FROM {_PROVIDERS} WHERE {{id_in}}
"""


def provider_names(provider_ids: Iterable[int]) -> list[tuple[int, str, str]]:
    """``[(id, uuid, name), ...]`` of the providers ``provider_ids``: one query, thousands of
    ids as one parameter (the what-if capacity lists every host)."""
    condition, params = _id_in("id", provider_ids)
    rows = fetch(_PROVIDER_NAMES.format(id_in=condition), params)
    if connection.vendor != "postgresql":
        rows = [(pk, str(uuidlib.UUID(text)), name) for pk, text, name in rows]
    return rows


_HOSTS = f"""
    SELECT p.id, CAST(p.uuid AS varchar), p.name, a.id, CAST(a.uuid AS varchar),
           m.aggregate_id, m.name, m.availability_zone, m.metadata
    FROM {_PROVIDERS} p
    {{wanted}}
    LEFT JOIN {_PROVIDER_AGGREGATES} pa ON pa.resource_provider_id = p.id
    LEFT JOIN {Aggregate._meta.db_table} a ON a.id = pa.aggregate_id
    LEFT JOIN {{metadata}} m ON m.aggregate_id = a.id
    WHERE {{id_in}}
"""
# A pass's hosts on PostgreSQL, when many: joined with the unnested ids, which the planner
# counts (a hash join over one scan of the providers), not ``IN (SELECT unnest(...))``, whose
# distinct ids it guesses at 200 (an index probe per host: 2.1 s against 0.6 s at 100,000).
_WANTED_HOSTS = "JOIN unnest(%s::bigint[]) AS wanted(id) ON wanted.id = p.id"
# Ids filling at least this share of the range from the lowest to the highest (a pass over
# most of the cloud's hosts) are read as that range, the others left out in Python: no array
# to send, parse and join (PostgreSQL spilled the unnested 100,000 ids to disk before its
# hash join: 0.32-0.45 s against 0.19-0.25 s in EXPLAIN ANALYZE at 100,000 hosts).
_DENSE_IDS = 0.5


def hosts_with_aggregates(
    provider_ids: Iterable[int],
) -> list[tuple[int, str, str, int | None, str | None, dict[str, Any] | None]]:
    """``[(id, uuid, name, aggregate id, aggregate uuid, metadata), ...]`` of the providers
    ``provider_ids``: one row per aggregate of each (one with None for a provider in none);
    ``metadata`` is the aggregate's ``{"aggregate_id", "name", "availability_zone",
    "metadata"}`` (None without). What a pass reads of its hosts, in one query."""
    postgres = connection.vendor == "postgresql"
    ids = sorted({int(pk) for pk in provider_ids})  # distinct: a join repeats a repeated id
    wanted = ""
    dense = len(ids) > _SHORT_ARRAY and len(ids) >= _DENSE_IDS * (ids[-1] - ids[0] + 1)
    if dense:
        condition, params = "p.id BETWEEN %s AND %s", [ids[0], ids[-1]]
    elif postgres and len(ids) > _SHORT_ARRAY:
        wanted, condition, params = _WANTED_HOSTS, "TRUE", ["{" + ",".join(map(str, ids)) + "}"]
    else:
        condition, params = _id_in("p.id", ids)
    sql = _HOSTS.format(metadata=AggregateMetadata._meta.db_table, wanted=wanted, id_in=condition)
    among = frozenset(ids) if dense else None
    rows = []
    for row in fetch(sql, params):
        pk, uuid, name, aggregate_id, aggregate_uuid, meta_id, meta_name, zone, meta_data = row
        if among is not None and pk not in among:
            continue
        if not postgres:  # SQLite: uuids as 32 hex digits, JSON as text
            uuid = str(uuidlib.UUID(uuid))
            aggregate_uuid = aggregate_uuid and str(uuidlib.UUID(aggregate_uuid))
        if isinstance(meta_data, str):  # Django leaves JSON columns as text to its fields
            meta_data = json.loads(meta_data)
        metadata = None
        if meta_id is not None:
            metadata = {
                "aggregate_id": meta_id,
                "name": meta_name,
                "availability_zone": zone,
                "metadata": meta_data,
            }
        rows.append((pk, uuid, name, aggregate_id, aggregate_uuid, metadata))
    return rows


_PROVIDER_AGGREGATE_UUIDS = f"""
    SELECT pa.resource_provider_id, a.id, CAST(a.uuid AS varchar)
    FROM {_PROVIDER_AGGREGATES} pa JOIN {Aggregate._meta.db_table} a ON a.id = pa.aggregate_id
    WHERE {{provider_in}}
"""


def provider_aggregates(provider_ids: Iterable[int]) -> list[tuple[int, int, str]]:
    """``[(provider id, aggregate id, aggregate uuid), ...]`` of ``provider_ids``."""
    condition, params = _id_in("pa.resource_provider_id", provider_ids)
    rows = fetch(_PROVIDER_AGGREGATE_UUIDS.format(provider_in=condition), params)
    if connection.vendor != "postgresql":
        rows = [(pk, agg, str(uuidlib.UUID(text))) for pk, agg, text in rows]
    return rows


_HOST_CELLS = f"""
    SELECT p.root_id, n.numa_topology
    FROM {ComputeNode._meta.db_table} n JOIN {_PROVIDERS} p ON p.id = n.provider_id
    WHERE {{root_in}}
"""


def host_cells(root_ids: Iterable[int]) -> dict[int, int]:
    """``{root id: number of NUMA cells its compute report gives}`` of the hosts ``root_ids``
    with a report (0 for a report without cells): the one fact of the reports the scheduler
    itself reads, without building a report per host."""
    condition, params = _id_in("p.root_id", root_ids)
    found = {}
    for root_id, topology in fetch(_HOST_CELLS.format(root_in=condition), params):
        if isinstance(topology, str):  # Django leaves JSON columns as text to its fields
            topology = json.loads(topology)
        found[root_id] = len((topology or {}).get("cells") or [])
    return found
