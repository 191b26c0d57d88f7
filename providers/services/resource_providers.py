"""Resource provider writes: create, rename or move in the tree, delete.

Each is one transaction. Provider rows are locked (``SELECT ... FOR UPDATE``)
before they are checked, so that a concurrent child creation, allocation or
move waits instead of acting on what is about to change. Locks that guard a
tree are ``FOR NO KEY UPDATE`` and taken in id order: they serialise the
writers without blocking the foreign-key checks (``FOR KEY SHARE``) that
PostgreSQL makes at commit, which would otherwise deadlock two writers. Placement does not
bump a provider's generation for these writes (the body carries none), so
neither do we; the row lock is the protection.
"""

import uuid as uuidlib
from collections.abc import Callable

from django.db import IntegrityError, OperationalError, transaction
from django.db.models import F

from placementsite.core.exceptions import (
    CannotDeleteParent,
    ConcurrentUpdate,
    DuplicateName,
    InvalidRequest,
    NotFound,
    ProviderInUse,
)

from ..models import Inventory, ResourceProvider, ResourceProviderAggregate, ResourceProviderTrait
from ..usage import classes_in_use
from .generations import check_generation, provider_for_update, provider_not_found

# "Leave the parent as it is" (None means "no parent").
UNCHANGED = object()

PARENT_MISSING = "parent provider UUID does not exist."
PARENT_IS_SELF = (
    "parent provider UUID cannot be same as UUID. Please set parent provider UUID to None "
    "if there is no parent."
)
NO_REPARENTING = "re-parenting a provider is not currently allowed."
NO_UNPARENTING = "un-parenting a provider is not currently allowed."
NO_LOOPS = "creating loop in the provider tree is not allowed."
DEADLOCK = "40P01"  # PostgreSQL's deadlock_detected
# How often a move re-reads the tree when it changed while it waited for locks.
_LOCK_ATTEMPTS = 5

# A locked tree: ``{provider id: (parent id, root id)}``.
Tree = dict[int, tuple[int | None, int | None]]


def _action_failed(action: str, reason: str) -> str:
    return f"Object action {action} failed because: {reason}"


def resource_provider_create(
    *,
    name: str,
    uuid: str | uuidlib.UUID | None = None,
    parent_uuid: str | uuidlib.UUID | None = None,
) -> ResourceProvider:
    """A new provider (a root unless ``parent_uuid``); 409 on a duplicate name or uuid."""
    uuid = str(uuid or uuidlib.uuid4())
    parent_uuid = str(parent_uuid) if parent_uuid is not None else None

    def refused(reason: str) -> InvalidRequest:
        return InvalidRequest(
            f'Unable to create resource provider "{name}", {uuid}: '
            + _action_failed("create", reason)
        )

    with transaction.atomic():
        parent = None
        if parent_uuid is not None:
            if parent_uuid == uuid:
                raise refused(PARENT_IS_SELF)
            # Locked: the parent cannot be deleted or moved until we commit.
            parent = (
                ResourceProvider.objects.select_for_update(no_key=True)
                .filter(uuid=parent_uuid)
                .first()
            )
            if parent is None:
                raise refused(PARENT_MISSING)
        try:
            with transaction.atomic():
                provider = ResourceProvider.objects.create(
                    name=name, uuid=uuid, parent=parent, root=parent.root if parent else None
                )
        except IntegrityError:
            raise duplicate_provider(name=name, uuid=uuid) from None
        if parent is None:
            provider.root = provider
            ResourceProvider.objects.filter(pk=provider.pk).update(root=provider.pk)
        provider.parent_provider_uuid = parent_uuid
        provider.root_provider_uuid = str(parent.root.uuid) if parent else uuid
        return provider


def duplicate_provider(
    *, name: str, uuid: str | uuidlib.UUID | None, exclude: int | None = None
) -> DuplicateName:
    taken = ResourceProvider.objects.exclude(pk=exclude)
    found = []
    if taken.filter(name=name).exists():
        found.append(f"name: {name}")
    if uuid is not None and taken.filter(uuid=uuid).exists():
        found.append(f"uuid: {uuid}")
    duplicate = ", ".join(found) or f"name: {name}"
    return DuplicateName(f"Conflicting resource provider {duplicate} already exists.")


def resource_provider_update(
    *,
    uuid: str | uuidlib.UUID,
    name: str,
    parent_uuid: object = UNCHANGED,
    allow_reparenting: bool = False,
    generation: int | None = None,
) -> ResourceProvider:
    """Rename a provider and, when ``parent_uuid`` is given, move it in the trees.

    Before 1.37 (``allow_reparenting=False``) a provider with a parent keeps
    it; a root may be given a parent. A provider never becomes its own
    ancestor; every descendant's root follows the move. ``generation`` (the
    admin's form sends the one it was rendered with; the API none): a provider
    changed meanwhile is a conflict rather than a silent overwrite.
    """
    try:
        with transaction.atomic():
            if generation is not None:
                check_generation(
                    provider=provider_for_update(uuid=str(uuid)), generation=generation
                )
            return _update(str(uuid), name, parent_uuid, allow_reparenting)
    except OperationalError as exc:
        # Lock order is by id, so this is rare (a tree that changed while we
        # waited); the client retries as after any concurrent update.
        if _sqlstate(exc) == DEADLOCK:
            raise ConcurrentUpdate(
                f"Unable to save resource provider {uuid}: the provider tree changed "
                "concurrently, please try again."
            ) from None
        raise


def _sqlstate(exc: OperationalError) -> str | None:
    cause = exc.__cause__
    return getattr(cause, "sqlstate", None) or getattr(cause, "pgcode", None)


def _update(uuid: str, name: str, parent_uuid: object, allow_reparenting: bool) -> ResourceProvider:
    def refused(action: str, reason: str) -> InvalidRequest:
        return InvalidRequest(
            f"Unable to save resource provider {uuid}: " + _action_failed(action, reason)
        )

    if parent_uuid is UNCHANGED:
        provider = provider_for_update(uuid=uuid)
    else:
        provider = _move(uuid, parent_uuid, allow_reparenting, refused)
    provider.name = name
    try:
        with transaction.atomic():
            provider.save(update_fields=["name", "parent", "root", "updated_at"])
    except IntegrityError:
        raise DuplicateName(f"Conflicting resource provider {name} already exists.") from None
    return (
        ResourceProvider.objects.annotate(
            parent_provider_uuid=F("parent__uuid"), root_provider_uuid=F("root__uuid")
        )
        .filter(pk=provider.pk)
        .get()
    )


def _move(
    uuid: str,
    parent_uuid: object,
    allow_reparenting: bool,
    refused: Callable[[str, str], InvalidRequest],
) -> ResourceProvider:
    """Lock what a move touches, check it, move the subtree's root; the provider (unsaved)."""
    me = ResourceProvider.objects.filter(uuid=uuid).values_list("id", flat=True).first()
    if me is None:
        raise provider_not_found(uuid=uuid)
    new_parent = None
    if parent_uuid is not None:
        new_parent = (
            ResourceProvider.objects.filter(uuid=str(parent_uuid))
            .values_list("id", flat=True)
            .first()
        )
        if new_parent is None:
            raise refused("create", PARENT_MISSING)
    tree = _lock_for_move(me, new_parent)
    if me not in tree:
        raise provider_not_found(uuid=uuid)
    if new_parent is not None and new_parent not in tree:
        raise refused("create", PARENT_MISSING)

    provider = ResourceProvider.objects.get(pk=me)  # already locked
    if new_parent == provider.parent_id:
        return provider
    if provider.parent_id is not None and not allow_reparenting:
        reason = NO_UNPARENTING if new_parent is None else NO_REPARENTING
        raise refused("update", reason)
    subtree = _descendants(tree, me)
    if new_parent is None:
        new_root = me
    else:
        if new_parent in subtree:
            raise refused("update", NO_LOOPS)
        new_root = tree[new_parent][1]
    provider.parent_id = new_parent
    provider.root_id = new_root
    ResourceProvider.objects.filter(pk__in=subtree).exclude(pk=me).update(root=new_root)
    return provider


def _lock_for_move(me: int, new_parent: int | None) -> Tree:
    """Lock ``me``'s whole tree, the new parent and its root, in id order.

    Returns ``{id: (parent_id, root_id)}`` of the locked rows as they are once
    locked. The tree may change while we wait for the locks (a concurrent
    move); then the rows that joined it are locked too, until it is stable.
    """
    locked: Tree = {}
    for _attempt in range(_LOCK_ATTEMPTS):
        ends = [me] + ([new_parent] if new_parent is not None else [])
        roots = dict(ResourceProvider.objects.filter(pk__in=ends).values_list("id", "root_id"))
        members = set(
            ResourceProvider.objects.filter(root_id=roots.get(me)).values_list("id", flat=True)
        )
        wanted = members | set(ends) | {r for r in roots.values() if r is not None}
        if wanted <= set(locked) and all(
            locked.get(pk, (None, None))[1] == roots.get(pk) for pk in ends
        ):
            return locked
        rows = (
            ResourceProvider.objects.select_for_update(no_key=True)
            .filter(pk__in=wanted | set(locked))
            .order_by("id")
            .values_list("id", "parent_id", "root_id")
        )
        locked = {pk: (parent_id, root) for pk, parent_id, root in rows}
    raise ConcurrentUpdate("The provider tree kept changing; please try again.")


def _descendants(tree: Tree, provider_id: int) -> set[int]:
    """``provider_id`` and everything below it, from ``{id: (parent_id, root_id)}``."""
    children: dict[int | None, list[int]] = {}
    for pk, (parent_id, _root) in tree.items():
        children.setdefault(parent_id, []).append(pk)
    found: set[int] = set()
    todo = [provider_id]
    while todo:
        pk = todo.pop()
        if pk not in found:
            found.add(pk)
            todo.extend(children.get(pk, []))
    return found


def resource_provider_delete(*, uuid: str | uuidlib.UUID) -> None:
    """Delete a provider with its inventories, traits and aggregate links.

    Refused (409) while it has allocations or child providers.
    """
    with transaction.atomic():
        provider = ResourceProvider.objects.select_for_update().filter(uuid=uuid).first()
        if provider is None:
            raise NotFound(f"No resource provider with uuid {uuid} found for delete")
        if classes_in_use(provider_id=provider.pk):
            raise ProviderInUse(
                f"Unable to delete resource provider {uuid}: Resource provider has allocations."
            )
        if ResourceProvider.objects.filter(parent_id=provider.pk).exists():
            raise CannotDeleteParent(
                f"Unable to delete parent resource provider {uuid}: "
                "It has child resource providers."
            )
        Inventory.objects.filter(resource_provider_id=provider.pk).delete()
        ResourceProviderTrait.objects.filter(resource_provider_id=provider.pk).delete()
        ResourceProviderAggregate.objects.filter(resource_provider_id=provider.pk).delete()
        ResourceProvider.objects.filter(pk=provider.pk).update(root=None, parent=None)
        ResourceProvider.objects.filter(pk=provider.pk).delete()
