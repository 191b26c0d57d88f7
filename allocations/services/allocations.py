"""Allocation writes: replace a consumer's allocations, several at once, delete, reshape.

A replacement or a reshape is one transaction (:class:`_AllocationWrite`) whose steps always
come in the same order, so that many API processes on one PostgreSQL can never over-allocate
and never deadlock one another:

1. get or create the projects, users and consumer types named (in sorted order, before any
   row lock);
2. lock every provider involved (``SELECT ... FOR UPDATE``, in id order): the providers
   written to, those whose inventory a reshape replaces, and the providers the consumers hold
   now;
3. lock or create each consumer (in uuid order) and check its generation;
4. delete the consumers' current allocations (what they free counts as the usage before the
   write);
5. only then read the inventories and the usage, so that every number the capacity check
   sees is current and cannot change before the commit; check capacity with
   :mod:`providers.capacity` (a write that leaves a provider's usage of a class at or below
   what it was is not refused for its capacity) and insert the new allocations;
6. bring the consumers' device assignments in step (:mod:`.device_assignments`);
7. bump the provider and consumer generations;
8. delete the consumers left without allocations.

A reshape also checks the generations of the providers whose inventory it replaces after
step 2, writes an interim inventory (the old classes beside the new records) before step 4
and the final one after step 7. The deletes (:func:`allocation_delete`,
:func:`consumers_free`) lock the consumers as step 3 does, then delete their allocations and
them.

A failure at any step raises a domain error and rolls the whole
transaction back. Nothing retries inside a transaction: a conflict is
reported (409) and the client retries with fresh reads.
"""

import uuid as uuidlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Literal, TypeVar

from django.db import DatabaseError, IntegrityError, transaction
from django.db.models import F

from placementsite.core import uuids
from placementsite.core.exceptions import (
    CONCURRENTLY_UPDATED,
    RESOURCE_PROVIDER_NOT_FOUND,
    ConcurrentUpdate,
    Conflict,
    InvalidRequest,
    NotFound,
)
from providers.capacity import CAPACITY_FIELDS, Capacity, CapacityExceeded
from providers.models import Inventory, ResourceClass, ResourceProvider
from providers.request_groups import UnknownResourceClass
from providers.services.generations import (
    bump_generation,
    bump_generations,
    providers_for_update,
)
from providers.services.inventories import (
    InventoryClassUnknown,
    ProviderInventories,
    inventories_replaced,
)

from ..models import Allocation, Consumer, ConsumerType, Project, User
from ..selectors.allocations import allocations_of_consumers
from . import write_queries
from .device_assignments import DeviceUnitsExhausted, device_units_assign
from .usage import usage_apply, usage_deltas

Owner = TypeVar("Owner", Project, User, ConsumerType)

# Placement's [placement] incomplete_consumer_project_id / _user_id: the owner
# of allocations written before 1.8, when requests named no project or user.
INCOMPLETE_CONSUMER_PROJECT_ID = "00000000-0000-0000-0000-000000000000"
INCOMPLETE_CONSUMER_USER_ID = "00000000-0000-0000-0000-000000000000"


class _Unchecked:
    def __repr__(self) -> str:
        return "GENERATION_UNCHECKED"


#: The consumer generation of a request made before microversion 1.28.
GENERATION_UNCHECKED = _Unchecked()

# PostgreSQL's deadlock_detected, serialization_failure and lock_not_available.
_RETRYABLE_SQLSTATES = {"40P01", "40001", "55P03"}


@dataclass(frozen=True)
class ConsumerAllocationWrite:
    """One consumer's part of an allocation write: what it should hold once the write is done.

    ``allocations`` maps provider uuids to ``{resource class: amount}``; an
    empty dict removes every allocation of the consumer. ``generation`` is
    the consumer generation the client saw (None: "no such consumer yet"),
    or GENERATION_UNCHECKED. ``consumer_type`` None keeps an existing
    consumer's type (and gives a new consumer none).
    """

    consumer_uuid: str
    allocations: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    project_id: str = INCOMPLETE_CONSUMER_PROJECT_ID
    user_id: str = INCOMPLETE_CONSUMER_USER_ID
    generation: int | None | _Unchecked = GENERATION_UNCHECKED
    consumer_type: str | None = None
    # A claim of this service's own (a boot, a move) is assigned concrete device units for
    # what it takes of a device provider's class; a write through the Placement API is not,
    # and only gives up the units its smaller allocation no longer covers.
    assign_devices: bool = False


class ProviderGone(InvalidRequest):
    """An allocation names a provider that does not exist: never made, or deleted since the
    caller read it (a host sync removed it; a scheduler's candidate is then stale)."""


class AllocationRefused(Conflict):
    """An allocation a provider's inventory refuses (capacity, min/max/step, no inventory of
    the class); ``provider_uuid`` names the provider."""

    def __init__(self, detail: str, provider_uuid: str) -> None:
        super().__init__(detail)
        self.provider_uuid = provider_uuid


# --- public services ----------------------------------------------------------


def allocation_replace(*, consumer: ConsumerAllocationWrite, savepoint: bool = True) -> None:
    """``PUT /allocations/{consumer_uuid}``: replace one consumer's allocations (``savepoint``
    as :func:`allocations_replace`)."""
    try:
        with _database_conflicts_reported():
            _AllocationWrite([consumer]).run(savepoint=savepoint)
    except UnknownResourceClass as exc:
        raise InvalidRequest(
            f"Unable to allocate inventory for consumer {consumer.consumer_uuid}: {exc.detail}"
        ) from None


def allocations_replace(
    *, consumers: Iterable[ConsumerAllocationWrite], savepoint: bool = True
) -> None:
    """``POST /allocations``: replace the allocations of several consumers, all or nothing.
    ``savepoint=False``: the caller's own savepoint (a claim's retry) undoes a failed write."""
    try:
        with _database_conflicts_reported():
            _AllocationWrite(consumers).run(savepoint=savepoint)
    except UnknownResourceClass as exc:
        raise InvalidRequest(f"Unable to allocate inventory {exc.detail}") from None


def allocation_delete(*, consumer_uuid: str) -> None:
    """``DELETE /allocations/{consumer_uuid}``: remove every allocation and the consumer.

    Like Placement, removing allocations this way leaves provider
    generations alone.
    """
    canonical = uuids.parse(consumer_uuid)
    with _database_conflicts_reported(), transaction.atomic():
        consumer = None
        locked: dict[int, ResourceProvider] = {}
        if canonical is not None:
            locked = _lock_providers_held([canonical])
            consumer = Consumer.objects.select_for_update().filter(uuid=canonical).first()
        if consumer is None or not consumer.allocations.exists():
            raise NotFound(f"No allocations for consumer '{consumer_uuid}'")
        _consumers_delete([consumer.id], locked)


def consumers_free(
    *, consumer_uuids: Iterable[str | uuidlib.UUID]
) -> dict[uuidlib.UUID, dict[str, dict[str, int]]]:
    """Delete these consumers (those that exist) with every allocation they hold, as
    :func:`allocation_delete` does one, in the caller's transaction when there is one: the
    providers they hold locked in id order, then the consumers in uuid order, as every
    allocation write locks them, then their allocations read and deleted. Returns ``{consumer uuid: {provider uuid: {class: used}}}``
    for those that held anything. Provider generations are left alone, as Placement's delete
    leaves them."""
    with _database_conflicts_reported(), transaction.atomic():
        locked = _lock_providers_held(list(consumer_uuids))
        consumers = dict(
            Consumer.objects.select_for_update()
            .filter(uuid__in=list(consumer_uuids))
            .order_by("uuid")
            .values_list("uuid", "id")
        )
        held = allocations_of_consumers(consumer_uuids=list(consumers))
        _consumers_delete(list(consumers.values()), locked)
    return held


def _lock_providers_held(consumer_uuids: list) -> dict[int, ResourceProvider]:
    """Lock (in id order) the providers these consumers hold, before the consumers are
    locked, as every allocation write orders its locks: the usage rows of those providers
    change with the delete. Returns ``{provider id: provider}``."""
    held = (
        Allocation.objects.filter(consumer__uuid__in=consumer_uuids)
        .values_list("resource_provider__uuid", flat=True)
        .distinct()
    )
    return {p.id: p for p in providers_for_update(uuids={str(u) for u in held}).values()}


def _consumers_delete(consumer_ids: list[int], locked: Mapping[int, ResourceProvider]) -> None:
    """Delete the consumers (locked) with their allocations, the usage rows of their
    providers brought down by what they held. ``locked``: the providers locked before the
    consumers; one a consumer moved to since is locked now (a rare race)."""
    if not consumer_ids:
        return
    allocations = Allocation.objects.filter(consumer_id__in=consumer_ids)
    held = list(
        allocations.values_list("resource_provider_id", "resource_class_id", "used").order_by()
    )
    missed = {provider_id for provider_id, _class, _used in held} - set(locked)
    if missed:
        list(
            ResourceProvider.objects.select_for_update()
            .filter(id__in=missed)
            .order_by("id")
            .values_list("id", flat=True)
        )
    usage_apply(deltas=usage_deltas(rows=held, sign=-1))
    allocations.delete()
    Consumer.objects.filter(id__in=consumer_ids).delete()


def allocations_reshape(
    *,
    inventories: Mapping[str, ProviderInventories],
    consumers: list[ConsumerAllocationWrite],
    allow_reserved_equal_total: bool,
) -> None:
    """``POST /reshaper`` (and the host sync, when a host's tree changes shape under its
    allocations): replace inventories and allocations of providers at once.

    ``inventories`` maps provider uuids to the generation the caller read and the whole new
    inventory. Every provider named there has its generation checked; the consumers'
    allocations and the inventories change together or not at all. Inside a caller's
    transaction it is a savepoint of it.
    """
    try:
        with _database_conflicts_reported():
            _AllocationWrite(consumers).run(
                inventories=inventories, allow_reserved_equal_total=allow_reserved_equal_total
            )
    except (UnknownResourceClass, InventoryClassUnknown) as exc:
        raise InvalidRequest(
            f"malformed reshaper data: No such resource class {exc.name}."
        ) from None


# --- the write ---------------------------------------------------------------


class _database_conflicts_reported:
    """A deadlock or serialization failure reported by PostgreSQL becomes a 409."""

    def __enter__(self) -> "_database_conflicts_reported":
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> Literal[False]:
        if exc is not None and isinstance(exc, DatabaseError):
            sqlstate = getattr(getattr(exc, "__cause__", None), "pgcode", None)
            if sqlstate in _RETRYABLE_SQLSTATES:
                raise ConcurrentUpdate(
                    "Inventory and/or allocations changed while attempting to allocate: "
                    + CONCURRENTLY_UPDATED
                ) from exc
        return False


def _get_or_create(
    model: type[Owner], names: Iterable[str], field_name: str, known: Mapping[str, int]
) -> dict[str, Owner]:
    """Rows of ``model`` for ``names``, created when missing, in a fixed (sorted) order;
    ``known`` (``{name: id}``) are those read already."""
    found = {}
    for name in sorted(names):
        if name in known:
            found[name] = model(id=known[name], **{field_name: name})
        else:
            found[name] = model.objects.get_or_create(**{field_name: name})[0]
    return found


def _generation_conflict(expected: int | None, got: object) -> ConcurrentUpdate:
    shown = "null" if expected is None else expected
    return ConcurrentUpdate(f"consumer generation conflict - expected {shown} but got {got}")


def _capacity_conflict(
    resource_class: str, provider_uuid: str, exc: CapacityExceeded
) -> AllocationRefused:
    if exc.violates_constraints:
        what = "would violate inventory constraints"
        shortfalls = [s for s in exc.shortfalls if s.rule != "capacity"]
    else:
        what = "would exceed the capacity"
        shortfalls = exc.shortfalls
    why = "; ".join(s.describe(resource_class) for s in shortfalls)
    return AllocationRefused(
        f"Unable to allocate inventory: Unable to create allocation for '{resource_class}' "
        f"on resource provider '{provider_uuid}'. The requested amount {what}. ({why})",
        provider_uuid,
    )


class _AllocationWrite:
    """One transaction replacing the allocations of some consumers (see module doc)."""

    # What the steps learn, in the order they learn it.
    projects: dict[str, Project]
    users: dict[str, User]
    types: dict[str, ConsumerType]
    providers: dict[str, ResourceProvider]  # locked, by uuid
    to_bump: dict[str, ResourceProvider]  # providers whose generation the write bumps
    freed: dict[tuple[int, int], int]  # (provider id, class id) -> what _clear took off
    consumers: dict[str, Consumer]  # locked or made, by uuid
    created: set[str]  # consumers this transaction made: they hold nothing yet
    created_at_final: set[str]  # those inserted at the generation the write leaves them
    with_units: set[tuple[int, int]]  # (provider id, class id) with device units
    written: list[Allocation]

    def __init__(self, consumers: Iterable[ConsumerAllocationWrite]) -> None:
        self.requests = sorted(consumers, key=lambda c: c.consumer_uuid)

    def run(
        self,
        inventories: Mapping[str, ProviderInventories] | None = None,
        allow_reserved_equal_total: bool = True,
        savepoint: bool = True,
    ) -> None:
        inventories = inventories or {}
        with transaction.atomic(savepoint=savepoint):
            self._ensure_owners()
            self._lock_providers(extra=inventories)
            for provider_uuid, (generation, _records) in inventories.items():
                provider = self.providers[provider_uuid]
                if generation != provider.generation:
                    raise ConcurrentUpdate(
                        f"resource provider generation conflict for provider {provider_uuid}: "
                        f"actual: {provider.generation}, given: {generation}"
                    )
            self._lock_consumers()
            # Placement's reshape, step by step, each step bumping the generations it touches
            # (clients see the numbers): an interim inventory keeping the old classes beside
            # the new records, so the allocations can move; the allocations; the final one.
            for provider_uuid, (_generation, records) in inventories.items():
                if records:
                    provider = self.providers[provider_uuid]
                    interim = {**_current_inventories(provider), **records}
                    _reshape_inventory(provider, interim, allow_reserved_equal_total)
            self._clear()
            self._place()
            self._assign_devices()
            self._finish_allocations()
            for provider_uuid, (_generation, records) in inventories.items():
                _reshape_inventory(
                    self.providers[provider_uuid], records, allow_reserved_equal_total
                )
            self._delete_emptied_consumers()

    # 1. owners, before any row lock
    def _ensure_owners(self) -> None:
        projects = {r.project_id for r in self.requests}
        users = {r.user_id for r in self.requests}
        types = {r.consumer_type for r in self.requests if r.consumer_type}
        # One read of those that exist (nearly always all); the rest made one by one.
        known = write_queries.owner_ids(projects=projects, users=users, types=types)

        def of(kind: str) -> dict[str, int]:
            return {name: row_id for (k, name), row_id in known.items() if k == kind}

        self.projects = _get_or_create(Project, projects, "external_id", of("project"))
        self.users = _get_or_create(User, users, "external_id", of("user"))
        self.types = _get_or_create(ConsumerType, types, "name", of("type"))

    # 2. providers, in id order
    def _lock_providers(self, extra: Iterable[str] = ()) -> None:
        wanted = [rp for r in self.requests for rp in r.allocations]
        # A consumer said to be new holds nothing: if it exists after all, its generation
        # check refuses the write before anything it holds is touched.
        held = set()
        if any(r.generation is not None for r in self.requests):
            held = set(
                Allocation.objects.filter(
                    consumer__uuid__in=[r.consumer_uuid for r in self.requests]
                ).values_list("resource_provider__uuid", flat=True)
            )
        named = {rp for rp in [*wanted, *extra] if uuids.parse(rp) == rp}
        self.providers = providers_for_update(uuids=named | {str(u) for u in held})
        for provider_uuid in extra:
            if provider_uuid not in self.providers:
                raise InvalidRequest(
                    f"Resource provider {provider_uuid} in inventories not found: "
                    f"No resource provider with uuid {provider_uuid} found",
                    code=RESOURCE_PROVIDER_NOT_FOUND,
                )
        for provider_uuid in wanted:
            if provider_uuid not in self.providers:
                raise ProviderGone(
                    f"Allocation for resource provider '{provider_uuid}' that does not exist."
                )
        self.to_bump = {}

    # 3. consumers, in uuid order
    def _lock_consumers(self) -> None:
        self.freed = {}  # (provider id, class id) -> what _clear took off the usage
        self.consumers = {}
        self.created = set()  # consumers this transaction made: they hold nothing yet
        # Consumers said to be new are inserted in one statement, at the generation the write
        # leaves them (no bump after); one that exists after all is locked and refused below.
        new = [r for r in self.requests if r.generation is None]
        made = write_queries.consumers_insert(
            rows=[
                (
                    r.consumer_uuid,
                    self.projects[r.project_id].id,
                    self.users[r.user_id].id,
                    self.types[r.consumer_type].id if r.consumer_type else None,
                )
                for r in new
            ],
            generation=1,
        )
        self.consumers.update(made)
        self.created.update(made)
        self.created_at_final = set(made)
        for request in self.requests:
            if request.consumer_uuid not in made:
                self.consumers[request.consumer_uuid] = self._consumer_for_update(request)

    def _consumer_for_update(self, request: ConsumerAllocationWrite) -> Consumer:
        project = self.projects[request.project_id]
        user = self.users[request.user_id]
        consumer_type = self.types.get(request.consumer_type) if request.consumer_type else None
        checked = request.generation is not GENERATION_UNCHECKED
        consumer = Consumer.objects.select_for_update().filter(uuid=request.consumer_uuid).first()
        if consumer is None:
            if checked and request.generation is not None:
                raise _generation_conflict(None, request.generation)
            try:
                with transaction.atomic():
                    consumer = Consumer.objects.create(
                        uuid=request.consumer_uuid,
                        project=project,
                        user=user,
                        consumer_type=consumer_type,
                        generation=0,
                    )
                self.created.add(request.consumer_uuid)
                return consumer
            except IntegrityError:
                # Created by a concurrent request that has committed since (and perhaps
                # deleted by a third since: a conflict, as any consumer changed meanwhile).
                consumer = (
                    Consumer.objects.select_for_update().filter(uuid=request.consumer_uuid).first()
                )
                if consumer is None:
                    raise ConcurrentUpdate(
                        "Inventory and/or allocations changed while attempting to allocate: "
                        + CONCURRENTLY_UPDATED
                    ) from None
        if checked and consumer.generation != request.generation:
            raise _generation_conflict(consumer.generation, request.generation)
        changed = []
        if consumer.project_id != project.id:
            consumer.project = project
            changed.append("project")
        if consumer.user_id != user.id:
            consumer.user = user
            changed.append("user")
        if consumer_type is not None and consumer.consumer_type_id != consumer_type.id:
            consumer.consumer_type = consumer_type
            changed.append("consumer_type")
        if changed:
            consumer.save(update_fields=[*changed, "updated_at"])
        return consumer

    # 4. the consumers' current allocations go; providers of emptied consumers are bumped
    def _clear(self) -> None:
        existing = [c for uuid, c in self.consumers.items() if uuid not in self.created]
        if not existing:
            return
        current = Allocation.objects.filter(consumer__in=existing)
        held = list(
            current.values_list(
                "consumer__uuid",
                "resource_provider__uuid",
                "resource_provider_id",
                "resource_class_id",
                "used",
            )
        )
        emptied = {r.consumer_uuid for r in self.requests if not r.allocations}
        for consumer_uuid, provider_uuid, provider_id, class_id, used in held:
            key = (provider_id, class_id)
            self.freed[key] = self.freed.get(key, 0) + used
            provider = self.providers.get(str(provider_uuid))
            if provider is None:
                # The consumer moved to a provider we did not lock: start again afresh.
                raise ConcurrentUpdate(
                    "Inventory and/or allocations changed while attempting to allocate: "
                    + CONCURRENTLY_UPDATED
                )
            if str(consumer_uuid) in emptied:
                self.to_bump[str(provider_uuid)] = provider
        current.delete()

    # 5. capacity, read after the locks, then the new rows
    def _place(self) -> None:
        names = {rc for r in self.requests for res in r.allocations.values() for rc in res}
        classes, inventories, usage = self._read_capacity(names)
        # What each provider and class held before this write: the write may move or shrink
        # what is there (a drain of a lowered inventory), never grow it past its capacity.
        before = {key: usage.get(key, 0) + freed for key, freed in self.freed.items()}
        rows = []
        for request in self.requests:
            consumer = self.consumers[request.consumer_uuid]
            for provider_uuid, resources in request.allocations.items():
                provider = self.providers[provider_uuid]
                self.to_bump[provider_uuid] = provider
                for name, amount in resources.items():
                    key = (provider.id, classes[name])
                    capacity = inventories.get(key)
                    if capacity is None:
                        raise AllocationRefused(
                            f"Unable to allocate inventory: Inventory for '{name}' on "
                            f"resource provider '{provider_uuid}' invalid.",
                            provider_uuid,
                        )
                    try:
                        usage[key] = capacity.consume(
                            amount, usage.get(key, 0), usage_before=before.get(key)
                        )
                    except CapacityExceeded as exc:
                        raise _capacity_conflict(name, provider_uuid, exc) from None
                    rows.append(
                        Allocation(
                            resource_provider=provider,
                            consumer=consumer,
                            resource_class_id=classes[name],
                            used=amount,
                        )
                    )
        self._write(rows)
        self.written = rows

    def _write(self, rows: list[Allocation]) -> None:
        """The new rows, and the usage rows brought in step (what was placed, less what
        _clear took off), together: one statement on PostgreSQL."""
        deltas = usage_deltas(
            rows=((row.resource_provider_id, row.resource_class_id, row.used) for row in rows)
        )
        for key, freed in self.freed.items():
            deltas[key] = deltas.get(key, 0) - freed
        write_queries.allocations_insert(rows=rows, deltas=deltas)

    def _read_capacity(
        self, names: set[str]
    ) -> tuple[dict[str, int], dict[tuple[int, int], Capacity], dict[tuple[int, int], int]]:
        """``({class: id}, {(provider id, class id): Capacity}, {(provider id, class id):
        used})`` of the providers written to, in one read (plus one when a class is missing
        there); raises UnknownResourceClass for a class that does not exist."""
        provider_ids = [self.providers[rp].id for r in self.requests for rp in r.allocations]
        inventories, usage, classes = {}, {}, {}
        self.with_units = set()  # (provider id, class id) with device units
        for row in (
            write_queries.inventories_with_usage(provider_ids=provider_ids, class_names=names)
            if names
            else ()
        ):
            provider_id, class_id, name, *_fields, used, has_units = row
            key = (provider_id, class_id)
            classes[name] = class_id
            inventories[key] = Capacity(*row[3:9])  # the CAPACITY_FIELDS columns
            # The usage rows are brought in step with the write (_write): what _clear took
            # off is still counted there.
            used -= self.freed.get(key, 0)
            if used:
                usage[key] = used
            if has_units:
                self.with_units.add(key)
        if names - set(classes):  # a class without inventory here, or no such class
            classes.update(
                ResourceClass.objects.filter(name__in=names - set(classes)).values_list(
                    "name", "id"
                )
            )
        for request in self.requests:
            for resources in request.allocations.values():
                for name in resources:
                    if name not in classes:
                        raise UnknownResourceClass([name])
        return classes, inventories, usage

    # 6. device assignments
    def _assign_devices(self) -> None:
        # Consumers all made by this write hold no units yet, and exactly the rows written.
        fresh = len(self.created) == len(self.consumers)
        try:
            device_units_assign(
                consumers=self.consumers,
                requests=self.requests,
                written=self.written if fresh else None,
                with_units=self.with_units if fresh else None,
            )
        except DeviceUnitsExhausted as exc:
            raise AllocationRefused(exc.detail, exc.provider_uuid) from None

    # 7. generations
    def _finish_allocations(self) -> None:
        try:
            bump_generations(providers=self.to_bump.values())
        except ConcurrentUpdate:
            raise ConcurrentUpdate(
                "Inventory and/or allocations changed while attempting to allocate: "
                + CONCURRENTLY_UPDATED
            ) from None
        # Consumers made by this write were inserted at their final generation.
        consumer_ids = [
            c.id for uuid, c in self.consumers.items() if uuid not in self.created_at_final
        ]
        if consumer_ids:
            Consumer.objects.filter(id__in=consumer_ids).update(generation=F("generation") + 1)

    # 8. consumers left with nothing
    def _delete_emptied_consumers(self) -> None:
        emptied = [self.consumers[r.consumer_uuid].id for r in self.requests if not r.allocations]
        if emptied:
            Consumer.objects.filter(id__in=emptied, allocations__isnull=True).delete()


def _current_inventories(provider: ResourceProvider) -> dict[str, Capacity]:
    """A provider's inventory as it is (``{class: Capacity}``)."""
    return {
        name: Capacity(*fields)
        for name, *fields in Inventory.objects.filter(resource_provider=provider).values_list(
            "resource_class__name", *CAPACITY_FIELDS
        )
    }


def _reshape_inventory(
    provider: ResourceProvider,
    inventories: Mapping[str, Capacity],
    allow_reserved_equal_total: bool,
) -> None:
    """One inventory write of the reshaper, on a provider it has locked, then its bump."""
    inventories_replaced(
        provider=provider,
        inventories=inventories,
        allow_reserved_equal_total=allow_reserved_equal_total,
    )
    bump_generation(provider=provider)
