"""The host sync: each host's tree made the one its plugins describe, whole or not at all.

For each host that needs it (:func:`~providers.selectors.compute_nodes.needs_sync_q`), or
those named, :func:`compute_nodes_sync` runs the operator's resource plugins over the host's
report (:func:`~providers.host_reports.desired_tree`; outside any transaction, a plugin being
third-party code, unless a newer report arrived while the row was awaited: then again inside
it), then, in one transaction holding the host's row (``FOR UPDATE SKIP LOCKED``: two workers
never sync one host; a host another holds is skipped), locks and reads the tree on record
(``provider_tree_recorded``), diffs (:func:`~providers.tree_diff.tree_diff`) and applies the
plan (``provider_tree_apply``), or nothing. That work runs in a savepoint of the host's
transaction, one per host: when it raises, the savepoint is rolled back and the failure is
recorded on the host in the same transaction. Hosts with no tree yet are synced together: a
read batch's new hosts in one transaction holding their rows (``_new_hosts_sync``), their
trees written at once in one savepoint, each host the batch write leaves out (its tree
refused before the write, or every host when the write fails) synced alone in a savepoint of
that transaction as above; a host's tree is still written whole or not at all. The host's
status after it:

- ``ok``: the tree is the plugins' tree; ``partial``: a plugin raised, the others' resources
  are applied whole and its own left as they were;
- ``blocked``: the new tree cannot hold the host's allocations (it shrank below them, or a
  class in use is gone); the reasons name the provider, class and amount; nothing applied;
- ``failed``: any error, database errors included; nothing applied, the run goes on with the
  next host.

A host blocked, failed or partial is retried by the next runs with a growing delay: the next
run, then ``PLACEMENT_SYNC_RETRY_SECONDS`` doubling up to ``PLACEMENT_SYNC_RETRY_MAX_SECONDS``
(``next_sync_at``); a new report is tried at once. What the sync wrote last is kept on the host
(``synced_state``): an inventory value that differs from it was set by an operator and is kept.

The machinery is not the host's alone: :func:`record_sync` syncs any record with a report and
sync state (``providers.models.SyncedReport``) described by a :class:`SyncSubject`; resource
pools use it too (``providers.services.pool_sync``), with their own desired tree and an
aggregate written in the same transaction.
"""

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Generic, TypeVar, cast

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from placementsite.core.db import rows_insert, rows_update
from placementsite.core.exceptions import DomainError, DuplicateName, InvalidRequest

from ..host_reports import DesiredTree, desired_tree, inventories_of
from ..models import (
    CUSTOM_PREFIX,
    ComputeNode,
    InventoryChange,
    ResourceClass,
    ResourceProvider,
    SyncedReport,
    Trait,
)
from ..plugins import HostReport, ResourcePlugin, configured_plugins, plugins_signature
from ..plugins.pools import PoolPlugin
from ..selectors.compute_nodes import hosts_needing_sync, needs_sync
from ..tree_diff import DesiredProvider, RecordedTree, TreePlan, tree_diff
from .device_units import (
    UnitsPlan,
    device_units_create,
    device_units_delete,
    device_units_plan,
    device_units_write,
)
from .provider_trees import CheckedTree
from .resource_classes import resource_class_describe, resource_class_ensure
from .traits import trait_ensure
from .tree_sync import (
    new_tree_checked,
    new_trees_apply,
    provider_tree_apply,
    provider_tree_recorded,
)

logger = logging.getLogger("placement.hosts")

Status = ComputeNode.SyncStatus
# The statuses an outcome ends with. SyncStatus members are str (a TextChoices); mypy, without
# Django's plugin, reads their declarations as (value, label) tuples: hence the casts.
OK = cast(str, Status.OK)
PARTIAL = cast(str, Status.PARTIAL)
BLOCKED = cast(str, Status.BLOCKED)
FAILED = cast(str, Status.FAILED)

# A record the sync keeps a tree for: a ComputeNode, a ResourcePool.
R = TypeVar("R", bound=SyncedReport)
# What a tree write leaves to remember on the record: its root provider's id and the sync's
# state (``synced_state``).
Applied = tuple[int, dict[str, Any]]


@dataclass
class SyncOutcome:
    """One host's (or pool's) sync: its status, how many things changed (providers created,
    moved and deleted, inventory classes, trait sets, consumers reshaped, aggregate
    memberships), and why it is not ``ok``."""

    hostname: str  # the host's name, or the pool's
    status: str
    changes: int = 0
    errors: list[str] = field(default_factory=list)
    plugin_errors: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.hostname


@dataclass
class SyncSubject(Generic[R]):
    """What the sync needs to know of one kind of record (a host, a pool): its model, how the
    plugins describe it, its root provider, what else its transaction does (``prepare``
    before the tree is read, e.g. locks; ``after`` once the tree is applied, e.g. a pool's
    aggregate), the history's link to it, and whether it needs a sync."""

    model: type[R]
    label: str  # "host", "pool"
    name_of: Callable[[R], str]
    desired_of: Callable[[R], DesiredTree]
    root_of: Callable[[R], ResourceProvider | None]
    needs: Callable[[R], bool]  # its row locked
    history_field: str
    prepare: Callable[[R], None] | None = None
    after: Callable[[R, int], int] | None = None  # (record, root provider id) -> changes made
    # Raises when the record's name is held by a provider no sync made; asked only once a
    # new tree's write collided on a name (a read spared for every new record).
    name_taken: Callable[[R], None] | None = None
    now: datetime | None = None  # the time of the syncs it is made for (None: each sync's)


def compute_nodes_sync(
    *,
    hostnames: list[str] | None = None,
    force: bool = False,
    due_only: bool = True,
    plugins: Sequence[ResourcePlugin] | None = None,
    now: datetime | None = None,
) -> list[SyncOutcome]:
    """Sync every host that needs it (or those of ``hostnames``; ``force``: whether they need
    it or not; ``due_only=False``: blocked and failed hosts without waiting for their retry).

    Returns the outcomes of the hosts synced by this call (hosts another worker holds, or
    that another worker synced meanwhile, are skipped and not listed). One host's error
    never stops the others.
    """
    plugins = configured_plugins() if plugins is None else plugins
    signature = plugins_signature(plugins)
    hosts = ComputeNode.objects.filter(reported_at__isnull=False)
    if hostnames is not None:
        hosts = hosts.filter(hostname__in=hostnames)
    if not force:
        hosts = hosts.filter(
            pk__in=hosts_needing_sync(signature=signature, now=now, due_only=due_only)
        )
    names = KnownClassesAndTraits(plugins)
    outcomes: list[SyncOutcome] = []
    for batch in _read_in_batches(list(hosts.order_by("id").values_list("id", flat=True))):
        synced = _new_hosts_sync(
            subject=_host_subject(plugins, signature, now or timezone.now(), due_only),
            records=[node for _id, node in batch if node is not None and node.provider_id is None],
            signature=signature,
            force=force,
            names=names,
        )
        for node_id, node in batch:
            if node_id in synced:
                outcome = synced[node_id]
            else:
                try:
                    outcome = compute_node_sync(
                        node_id=node_id,
                        node=node,
                        plugins=plugins,
                        signature=signature,
                        force=force,
                        due_only=due_only,
                        names=names,
                        now=now,
                    )
                except Exception as exc:  # isolation: whatever one host raises, the next runs
                    outcome = record_failure(pk=node_id, exc=exc, now=now)
            if outcome is not None:
                outcomes.append(outcome)
    return outcomes


# Hosts read at once before their syncs (a read per batch rather than per host); the new
# ones among them are also synced in one transaction (``_new_hosts_sync``).
READ_BATCH = 200


def _read_in_batches(ids: list[int]) -> Iterable[list[tuple[int, ComputeNode | None]]]:
    """The ids by batch, each with its host as read with its batch (None: gone meanwhile)."""
    for start in range(0, len(ids), READ_BATCH):
        batch = ids[start : start + READ_BATCH]
        nodes = ComputeNode.objects.in_bulk(batch)
        yield [(node_id, nodes.get(node_id)) for node_id in batch]


def compute_node_sync(
    *,
    node_id: int,
    node: ComputeNode | None = None,
    plugins: Sequence[ResourcePlugin],
    signature: str,
    force: bool = False,
    due_only: bool = True,
    names: "KnownClassesAndTraits | None" = None,
    now: datetime | None = None,
) -> SyncOutcome | None:
    """Sync one host in one transaction; None when another worker holds it (or did it).
    ``node``: the host as read before, unlocked (None: read here)."""
    now = now or timezone.now()
    subject = _host_subject(plugins, signature, now, due_only)
    return record_sync(
        subject=subject,
        pk=node_id,
        record=node,
        signature=signature,
        force=force,
        names=names or KnownClassesAndTraits(plugins),
        now=now,
    )


def _host_subject(
    plugins: Sequence[ResourcePlugin], signature: str, now: datetime, due_only: bool
) -> "SyncSubject[ComputeNode]":
    return SyncSubject(
        model=ComputeNode,
        label="host",
        name_of=lambda node: node.hostname,
        desired_of=lambda node: desired_tree(HostReport.of(node), plugins),
        root_of=_root_of,
        needs=lambda node: needs_sync(node=node, signature=signature, now=now, due_only=due_only),
        history_field="compute_node",
        name_taken=_name_taken,
        now=now,
    )


def record_sync(
    *,
    subject: SyncSubject[R],
    pk: int,
    signature: str,
    force: bool,
    names: "KnownClassesAndTraits",
    now: datetime,
    record: R | None = None,
) -> SyncOutcome | None:
    """Sync one record (a host, a pool) in one transaction holding its row (``FOR UPDATE SKIP
    LOCKED``); None when another worker holds it (or did it meanwhile). Everything after the
    row lock up to the outcome (``prepare``, the tree, ``after``) runs in a savepoint, so that
    a failure is rolled back and still recorded on the row. ``record``: the row as read
    before, unlocked (None: read here); its report gives the plugins' tree outside the
    transaction, made again inside when the locked row's report differs."""
    if record is None:
        record = subject.model.objects.filter(pk=pk).first()
    if record is None:
        return None
    desired = subject.desired_of(record)
    read_hash = record.report_hash
    with transaction.atomic():
        locked = _locked_needing_sync(subject, [pk], force)
        if not locked:
            return None
        (record,) = locked
        if record.report_hash != read_hash:  # a newer report arrived meanwhile
            desired = subject.desired_of(record)
        outcome = _sync_locked(subject, record, desired, names, now)
        _record(record, outcome, signature, now)
    _log(subject, outcome)
    return outcome


def _sync_locked(
    subject: SyncSubject[R],
    record: R,
    desired: DesiredTree,
    names: "KnownClassesAndTraits",
    now: datetime,
) -> SyncOutcome:
    """The record's tree made ``desired`` in a savepoint (its row locked by the caller), or
    nothing of it when it raises: the failure is the outcome then. The record's provider and
    state are set, not saved."""
    try:
        with transaction.atomic():
            if subject.prepare is not None:
                subject.prepare(record)
            outcome, applied = _converge(subject, record, desired, names, now)
            if applied is not None and subject.after is not None:
                outcome.changes += subject.after(record, applied[0])
    except Exception as exc:  # the savepoint rolled back: nothing of the tree applied
        outcome, applied = _failure(subject.name_of(record), exc, subject.label), None
        names.forget()  # nor the classes and traits it created: the next host checks again
    if applied is not None:
        record.provider_id, record.synced_state = applied
    outcome.plugin_errors = desired.plugin_errors
    return outcome


def _log(subject: SyncSubject[R], outcome: SyncOutcome) -> None:
    for message in outcome.errors:
        logger.warning("sync of %s %s: %s %s", subject.label, outcome.name, outcome.status, message)


def _new_hosts_sync(
    *,
    subject: SyncSubject[ComputeNode],
    records: list[ComputeNode],
    signature: str,
    force: bool,
    names: "KnownClassesAndTraits",
) -> dict[int, SyncOutcome | None]:
    """Hosts that had no tree when read (``records``, unlocked) synced in one transaction
    holding their rows (``FOR UPDATE SKIP LOCKED``): their new trees written together
    (:func:`_new_trees_sync`), each host whose tree is not written with the others synced
    in a savepoint of its own as :func:`record_sync` does, every outcome recorded. Returns
    the outcome of each host (None: another worker holds it, or it needs no sync any more).
    When the transaction itself fails, none is listed: each is then synced on its own."""
    if not records:
        return {}
    now = subject.now or timezone.now()
    desired = {record.pk: subject.desired_of(record) for record in records}
    read_hashes = {record.pk: record.report_hash for record in records}
    synced: dict[int, SyncOutcome | None] = dict.fromkeys(desired)
    try:
        with transaction.atomic():
            todo = _locked_needing_sync(subject, list(desired), force)
            for record in todo:
                if record.report_hash != read_hashes[record.pk]:  # a newer report meanwhile
                    desired[record.pk] = subject.desired_of(record)
            new = [record for record in todo if record.provider_id is None]
            outcomes = _new_trees_sync(subject, new, desired, names, now)
            for record in todo:
                if record.pk not in outcomes:
                    outcomes[record.pk] = _sync_locked(
                        subject, record, desired[record.pk], names, now
                    )
                _outcome_on(record, outcomes[record.pk], signature, now)
            rows_update(subject.model, todo, RECORDED_FIELDS)
    except Exception:  # the batch's transaction failed: each host on its own, isolated
        logger.exception("sync of new %ss %s together failed", subject.label, list(desired))
        names.forget()
        return {}
    for record in todo:
        synced[record.pk] = outcomes[record.pk]
        _log(subject, outcomes[record.pk])
    return synced


def _locked_needing_sync(subject: SyncSubject[R], pks: list[int], force: bool) -> list[R]:
    """The records of ``pks`` no other worker holds, locked (in id order), that need a sync
    (all of them: ``force``)."""
    locked = subject.model.objects.select_for_update(skip_locked=True).filter(pk__in=pks)
    return [record for record in locked.order_by("pk") if force or subject.needs(record)]


def _new_trees_sync(
    subject: SyncSubject[R],
    records: list[R],
    desired: Mapping[int, DesiredTree],
    names: "KnownClassesAndTraits",
    now: datetime,
) -> dict[int, SyncOutcome]:
    """The new trees of ``records`` (their rows locked, none with a tree on record) written
    together, in one savepoint: a few statements for any number of trees. Returns the
    outcome of each record written, its provider and state set (not saved). A record whose
    plan is not a plain new tree, or whose tree is refused before the write (an invalid
    inventory), is left out; so is every record when the write fails (a name taken): each
    left out is the caller's to sync alone, which finds and records why."""
    ready = []
    for record in records:
        planned = _new_tree_planned(record, desired[record.pk])
        if planned is not None:
            ready.append((record, *planned))
    if not ready:
        return {}
    try:
        with transaction.atomic():
            ids = _new_trees_write(subject, ready, names, now)
    except Exception:  # the savepoint rolled back: each host's own savepoint says why
        names.forget()
        return {}
    outcomes = {}
    for (record, plan, units, _tree), tree_ids in zip(ready, ids, strict=True):
        record.provider_id, record.synced_state = tree_ids[plan.uuids[""]], plan.state
        errors = desired[record.pk].plugin_errors
        outcomes[record.pk] = SyncOutcome(
            hostname=subject.name_of(record),
            status=PARTIAL if errors else OK,
            changes=plan.changes + units.changes,
            plugin_errors=errors,
        )
    return outcomes


def _new_tree_planned(
    record: SyncedReport, desired: DesiredTree
) -> tuple[TreePlan, UnitsPlan, CheckedTree] | None:
    """The plans of a record with no tree on record, and its new tree checked; None when it
    is not a plain new tree, or its tree is refused (the record's own sync says why)."""
    try:
        recorded = provider_tree_recorded(root=None, state=record.synced_state or {})
        plan, units = _planned(desired, recorded)
        if plan.blocked or units.blocked:
            return None
        return plan, units, new_tree_checked(plan=plan)
    except Exception:  # noqa: BLE001 (the record's own sync raises it again and records it)
        return None


def _new_trees_write(
    subject: SyncSubject[R],
    ready: Sequence[tuple[R, TreePlan, UnitsPlan, CheckedTree]],
    names: "KnownClassesAndTraits",
    now: datetime,
) -> list[dict[str, int]]:
    """The trees, their device units and inventory history written; each tree's provider
    ids by uuid."""
    for _r, plan, units, _t in ready:
        _ensure_names(names, plan, units)
    ids = new_trees_apply(trees=[tree for *_, tree in ready], class_ids=names.class_ids)
    device_units_create(
        plans=[(units, tree_ids) for (_r, _p, units, _t), tree_ids in zip(ready, ids, strict=True)],
        class_id=names.class_id,
    )
    rows_insert(
        InventoryChange,
        _history_fields(subject.history_field),
        [
            row
            for (record, plan, _u, _t), tree_ids in zip(ready, ids, strict=True)
            for row in _history_rows((subject.history_field, record.pk), plan, tree_ids, names, now)
        ],
    )
    return ids


def _failure(hostname: str, exc: Exception, label: str = "host") -> SyncOutcome:
    if isinstance(exc, DomainError):
        message = exc.detail or str(exc)
    else:
        logger.exception("sync of %s %s failed", label, hostname)
        message = f"{type(exc).__name__}: {exc}"
    return SyncOutcome(hostname=hostname, status=FAILED, errors=[message])


def _converge(
    subject: SyncSubject[R],
    record: R,
    desired: DesiredTree,
    names: "KnownClassesAndTraits",
    now: datetime,
) -> tuple[SyncOutcome, Applied | None]:
    """Diff the desired tree against the record and apply the plan, or block."""
    name = subject.name_of(record)
    root = subject.root_of(record)
    recorded = provider_tree_recorded(root=root, state=record.synced_state or {})
    plan, units = _planned(desired, recorded)
    if plan.blocked or units.blocked:
        errors = [*plan.blocked, *units.blocked]
        blocked = SyncOutcome(hostname=name, status=BLOCKED, errors=errors)
        return blocked, None
    _ensure_names(names, plan, units)
    device_units_delete(plan=units)
    ids = {p.uuid: p.id for p in recorded.members.values()}
    ids.update(_apply(subject, record, plan, recorded, names))
    device_units_write(plan=units, provider_ids=ids, class_id=names.class_id)
    _record_history((subject.history_field, record.pk), plan, ids, names, now)
    status = PARTIAL if desired.plugin_errors else OK
    outcome = SyncOutcome(hostname=name, status=status, changes=plan.changes + units.changes)
    return outcome, (ids[plan.uuids[""]], plan.state)


def _planned(desired: DesiredTree, recorded: RecordedTree) -> tuple[TreePlan, UnitsPlan]:
    """The plans that make ``recorded`` the plugins' tree: providers, inventories and traits
    (:func:`~providers.tree_diff.tree_diff`), and device units."""
    plan = tree_diff(
        desired=[
            DesiredProvider(
                key=spec.key,
                name=spec.name,
                parent=spec.parent,
                inventories=inventories_of(spec),
                traits=frozenset(spec.traits),
                owners={
                    name: desired.owners.get((spec.key, name), "") for name in spec.inventories
                },
            )
            for spec in desired.providers()
        ],
        recorded=recorded,
        kept_plugins=frozenset(desired.plugin_errors),
    )
    units = device_units_plan(
        specs=desired.providers(),
        uuids=plan.uuids,
        provider_ids=list(recorded.members),
        deleted_uuids={p.uuid for p in plan.deletes},
        keep_unlisted=bool(desired.plugin_errors),
    )
    return plan, units


def _ensure_names(names: "KnownClassesAndTraits", plan: TreePlan, units: UnitsPlan) -> None:
    """The classes and traits the plans name exist (custom ones created)."""
    names.ensure_classes({name for inv in plan.inventories.values() for name in inv})
    names.ensure_classes({name for _uuid, name, _unit in units.creates})
    names.ensure_traits({name for traits in plan.traits.values() for name in traits})


def _apply(
    subject: SyncSubject[R],
    record: R,
    plan: TreePlan,
    recorded: RecordedTree,
    names: "KnownClassesAndTraits",
) -> dict[str, int]:
    """The plan applied (the classes known passed on, not read again; the traits are read
    again: locked, so that no trait_delete wins against the write); a new tree colliding on
    a name says who holds the record's name when it is the root's."""
    try:
        return provider_tree_apply(plan=plan, class_ids=names.class_ids)
    except DuplicateName:
        if recorded.root is None and subject.name_taken is not None:
            subject.name_taken(record)
        raise


def _root_of(node: ComputeNode) -> ResourceProvider | None:
    """The host's root provider: the one synced before (or adopted by an admin at the report);
    None when there is none yet. A provider of the host's name the sync does not hold (made
    through the Placement API after the report was accepted) is never taken over: the new
    tree's write collides on its name (``_name_taken`` then says who holds it)."""
    if node.provider_id is None:
        return None
    return ResourceProvider.objects.filter(pk=node.provider_id, parent__isnull=True).first()


def _name_taken(node: ComputeNode) -> None:
    taken = ResourceProvider.objects.filter(name=node.hostname).first()
    if taken is not None:
        raise InvalidRequest(
            f"The name {node.hostname} is taken by provider {taken.uuid}, which the host sync "
            "did not create; an admin may adopt it (PUT the report with ?adopt=true)."
        )


# What the sync writes on the host (or pool) once it is done.
RECORDED_FIELDS = [
    "provider",
    "synced_at",
    "synced_hash",
    "synced_plugins",
    "sync_status",
    "sync_error",
    "plugin_errors",
    "synced_state",
    "sync_attempts",
    "next_sync_at",
    "updated_at",
]


def _record(node: SyncedReport, outcome: SyncOutcome, signature: str, now: datetime) -> None:
    """The outcome on the host (or pool), with its next retry when it is not ``ok``."""
    _outcome_on(node, outcome, signature, now)
    node.save(update_fields=RECORDED_FIELDS)


def _outcome_on(node: SyncedReport, outcome: SyncOutcome, signature: str, now: datetime) -> None:
    """The outcome set on the host (or pool), not saved (``updated_at`` too, for a bulk
    update, which does not set it)."""
    node.synced_at = now
    node.synced_hash = node.report_hash
    node.synced_plugins = signature
    node.sync_status = outcome.status
    node.sync_error = "\n".join(outcome.errors)
    node.plugin_errors = outcome.plugin_errors
    if outcome.status == OK:
        node.sync_attempts, node.next_sync_at = 0, None
    else:
        node.sync_attempts += 1
        node.next_sync_at = now + retry_delay(attempts=node.sync_attempts)
    node.updated_at = timezone.now()


def retry_delay(*, attempts: int) -> timedelta:
    """How long after its ``attempts``-th unsuccessful sync in a row a host is tried again:
    the next run, then the base delay doubling up to the cap."""
    if attempts <= 1:
        return timedelta(0)
    seconds = settings.PLACEMENT_SYNC_RETRY_SECONDS * 2 ** (attempts - 2)
    return timedelta(seconds=min(seconds, settings.PLACEMENT_SYNC_RETRY_MAX_SECONDS))


def record_failure(
    *,
    pk: int,
    exc: Exception,
    now: datetime | None,
    model: type[SyncedReport] = ComputeNode,
    label: str = "host",
    name_of: Callable[[Any], str] | None = None,
) -> SyncOutcome | None:
    """A host (pool) whose sync raised outside its tree write (its row, the database
    itself): the failure recorded in a transaction of its own when the database still
    answers."""
    logger.exception("sync of %s %s failed", label, pk)
    name_of = name_of or (lambda node: node.hostname)
    connection.close_if_unusable_or_obsolete()
    try:
        with transaction.atomic():
            node = model.objects.select_for_update().filter(pk=pk).first()
            if node is None:
                return None
            outcome = _failure(name_of(node), exc, label)
            _record(node, outcome, node.synced_plugins, now or timezone.now())
            return outcome
    except Exception:  # the database is gone too: logged above, the next one is tried
        logger.exception("could not record the failure of %s %s", label, pk)
        return SyncOutcome(hostname=str(pk), status=FAILED, errors=[str(exc)])


def _record_history(
    owner: tuple[str, int],
    plan: TreePlan,
    ids: Mapping[str, int],
    names: "KnownClassesAndTraits",
    now: datetime,
) -> None:
    """A history row per class whose total, reserved or ratio changed, on the providers that
    stay (a deleted provider's history goes with it). ``owner``: the field naming the host
    (or pool) and its id."""
    rows_insert(
        InventoryChange, _history_fields(owner[0]), _history_rows(owner, plan, ids, names, now)
    )


def _history_fields(owner_field: str) -> tuple[str, ...]:
    """The fields of :func:`_history_rows`' rows, in order."""
    return (
        "provider",
        "resource_class",
        owner_field,
        "changed_at",
        "old_total",
        "new_total",
        "old_reserved",
        "new_reserved",
        "old_allocation_ratio",
        "new_allocation_ratio",
    )


def _history_rows(
    owner: tuple[str, int],
    plan: TreePlan,
    ids: Mapping[str, int],
    names: "KnownClassesAndTraits",
    now: datetime,
) -> list[tuple[Any, ...]]:
    """The history rows of ``plan`` (:func:`_history_fields` names their values)."""
    rows: list[tuple[Any, ...]] = []
    for uuid, wanted in plan.inventories.items():
        provider_id = ids.get(uuid)
        if provider_id is None:
            continue
        current = plan.old_inventories.get(uuid, {})
        for name in sorted({*current, *wanted}):
            old, new = current.get(name), wanted.get(name)
            old_values = (old.total, old.reserved, old.allocation_ratio) if old else (None,) * 3
            new_values = (new.total, new.reserved, new.allocation_ratio) if new else (None,) * 3
            if old_values != new_values:
                rows.append(
                    (provider_id, names.class_id(name), owner[1], now)
                    + (old_values[0], new_values[0], old_values[1], new_values[1])
                    + (old_values[2], new_values[2])
                )
    return rows


class KnownClassesAndTraits:
    """The resource classes (with their ids) and traits known to exist in this run, the
    custom ones the plugins name created on first use, with the metadata plugins give."""

    def __init__(self, plugins: Iterable[ResourcePlugin | PoolPlugin]) -> None:
        self.metadata: dict[str, tuple[str, str, str]] = {}  # class: (type, unit, description)
        for plugin in plugins:
            self.metadata.update(plugin.class_metadata)
        self.class_ids: dict[str, int] = {}
        self.traits: set[str] = set()

    def forget(self) -> None:
        """Know nothing any more: what a rolled-back savepoint created is gone."""
        self.class_ids.clear()
        self.traits.clear()

    def class_id(self, name: str) -> int:
        if name not in self.class_ids:
            self.class_ids[name] = ResourceClass.objects.values_list("id", flat=True).get(name=name)
        return self.class_ids[name]

    def ensure_classes(self, names: Iterable[str]) -> None:
        missing = set(names) - set(self.class_ids)
        if not missing:
            return
        found = dict(ResourceClass.objects.filter(name__in=missing).values_list("name", "id"))
        for name in sorted(missing - set(found)):
            if not name.startswith(CUSTOM_PREFIX):
                raise InvalidRequest(f"No such resource class {name}")
            rc, _created = resource_class_ensure(name=name)
            found[name] = rc.id
        for name in sorted(missing & set(self.metadata)):
            rc = ResourceClass.objects.get(name=name)
            if not rc.unit:
                kind, unit, description = self.metadata[name]
                resource_class_describe(name=name, kind=kind, unit=unit, description=description)
        self.class_ids.update(found)

    def ensure_traits(self, names: Iterable[str]) -> None:
        missing = set(names) - self.traits
        if not missing:
            return
        found = set(Trait.objects.filter(name__in=missing).values_list("name", flat=True))
        for name in sorted(missing - found):
            if not name.startswith(CUSTOM_PREFIX):
                raise InvalidRequest(f"No such trait {name}")
            trait_ensure(name=name)
        self.traits |= missing
