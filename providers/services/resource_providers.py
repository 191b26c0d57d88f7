"""Resource provider writes: create, rename or move in the tree, delete.

Each is one transaction. Provider rows are locked (``SELECT ... FOR UPDATE``)
before they are checked, so that a concurrent child creation, allocation or
move waits instead of acting on what is about to change. Placement does not
bump a provider's generation for these writes (the body carries none), so
neither do we; the row lock is the protection.
"""

import uuid as uuidlib

from django.db import IntegrityError, transaction
from django.db.models import F

from placementsite.api.errors import (
    DUPLICATE_NAME,
    PROVIDER_CANNOT_DELETE_PARENT,
    PROVIDER_IN_USE,
    BadRequest,
    Conflict,
    NotFound,
)

from ..models import Inventory, ResourceProvider, ResourceProviderAggregate, ResourceProviderTrait
from .generations import provider_for_update

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
# How often a move re-reads the tree when it changed while it waited for locks.
_LOCK_ATTEMPTS = 5


def _action_failed(action, reason):
    return f"Object action {action} failed because: {reason}"


def resource_provider_create(*, name, uuid=None, parent_uuid=None):
    """A new provider (a root unless ``parent_uuid``); 409 on a duplicate name or uuid."""
    uuid = str(uuid or uuidlib.uuid4())
    parent_uuid = str(parent_uuid) if parent_uuid is not None else None

    def refused(reason):
        return BadRequest(
            f'Unable to create resource provider "{name}", {uuid}: '
            + _action_failed("create", reason)
        )

    with transaction.atomic():
        parent = None
        if parent_uuid is not None:
            if parent_uuid == uuid:
                raise refused(PARENT_IS_SELF)
            # Locked: the parent cannot be deleted or moved until we commit.
            parent = ResourceProvider.objects.select_for_update().filter(uuid=parent_uuid).first()
            if parent is None:
                raise refused(PARENT_MISSING)
        try:
            with transaction.atomic():
                provider = ResourceProvider.objects.create(
                    name=name, uuid=uuid, parent=parent, root=parent.root if parent else None
                )
        except IntegrityError:
            raise _duplicate(name=name, uuid=uuid) from None
        if parent is None:
            provider.root = provider
            ResourceProvider.objects.filter(pk=provider.pk).update(root=provider.pk)
        provider.parent_provider_uuid = parent_uuid
        provider.root_provider_uuid = str(parent.root.uuid) if parent else uuid
        return provider


def _duplicate(*, name, uuid, exclude=None):
    taken = ResourceProvider.objects.exclude(pk=exclude)
    found = []
    if taken.filter(name=name).exists():
        found.append(f"name: {name}")
    if uuid is not None and taken.filter(uuid=uuid).exists():
        found.append(f"uuid: {uuid}")
    duplicate = ", ".join(found) or f"name: {name}"
    return Conflict(
        f"Conflicting resource provider {duplicate} already exists.", code=DUPLICATE_NAME
    )


def resource_provider_update(*, uuid, name, parent_uuid=UNCHANGED, allow_reparenting=False):
    """Rename a provider and, when ``parent_uuid`` is given, move it in the trees.

    Before 1.37 (``allow_reparenting=False``) a provider with a parent keeps
    it; a root may be given a parent. A provider never becomes its own
    ancestor; every descendant's root follows the move.
    """
    with transaction.atomic():
        provider = provider_for_update(uuid)

        def refused(action, reason):
            return BadRequest(
                f"Unable to save resource provider {uuid}: " + _action_failed(action, reason)
            )

        if parent_uuid is not UNCHANGED:
            _move(
                provider,
                None if parent_uuid is None else str(parent_uuid),
                allow_reparenting,
                refused,
            )
        provider.name = name
        try:
            with transaction.atomic():
                provider.save(update_fields=["name", "parent", "root", "updated_at"])
        except IntegrityError:
            raise Conflict(
                f"Conflicting resource provider {name} already exists.", code=DUPLICATE_NAME
            ) from None
        return (
            ResourceProvider.objects.annotate(
                parent_provider_uuid=F("parent__uuid"), root_provider_uuid=F("root__uuid")
            )
            .filter(pk=provider.pk)
            .get()
        )


def _move(provider, parent_uuid, allow_reparenting, refused):
    """Change ``provider``'s parent (in memory) and its subtree's root (in the database)."""
    if parent_uuid is None:
        if provider.parent_id is None:
            return
        if not allow_reparenting:
            raise refused("update", NO_UNPARENTING)
        new_parent = None
    else:
        exists = ResourceProvider.objects.filter(uuid=parent_uuid).values_list("id", flat=True)
        parent_id = next(iter(exists), None)
        if parent_id is None:
            raise refused("create", PARENT_MISSING)
        if parent_id == provider.parent_id:
            return
        if provider.parent_id is not None and not allow_reparenting:
            raise refused("update", NO_REPARENTING)
        new_parent = parent_id

    tree = _lock_tree_and(provider, new_parent)
    subtree = _descendants(tree, provider.pk)
    if new_parent is None:
        new_root = provider.pk
    else:
        if new_parent in subtree:
            raise refused("update", NO_LOOPS)
        new_root = tree[new_parent][1]
    provider.parent_id = new_parent
    provider.root_id = new_root
    ResourceProvider.objects.filter(pk__in=subtree).exclude(pk=provider.pk).update(root=new_root)


def _lock_tree_and(provider, other_id):
    """Lock every member of ``provider``'s tree and ``other_id``, in id order.

    Returns ``{id: (parent_id, root_id)}`` for the locked rows as they are
    once locked. A concurrent move may change the tree while we wait; then
    the newly joined members are locked too.
    """
    locked = {}
    for _attempt in range(_LOCK_ATTEMPTS):
        root_id = (
            ResourceProvider.objects.filter(pk=provider.pk).values_list("root_id", flat=True).get()
        )
        members = set(ResourceProvider.objects.filter(root_id=root_id).values_list("id", flat=True))
        wanted = members | {provider.pk} | ({other_id} if other_id else set())
        if wanted <= set(locked):
            return locked
        rows = (
            ResourceProvider.objects.select_for_update()
            .filter(pk__in=wanted)
            .order_by("id")
            .values_list("id", "parent_id", "root_id")
        )
        locked = {pk: (parent_id, root) for pk, parent_id, root in rows}
    raise Conflict("The provider tree kept changing; please try again.")


def _descendants(tree, provider_id):
    """``provider_id`` and everything below it, from ``{id: (parent_id, root_id)}``."""
    children = {}
    for pk, (parent_id, _root) in tree.items():
        children.setdefault(parent_id, []).append(pk)
    found, todo = set(), [provider_id]
    while todo:
        pk = todo.pop()
        if pk not in found:
            found.add(pk)
            todo.extend(children.get(pk, []))
    return found


def resource_provider_delete(*, uuid):
    """Delete a provider with its inventories, traits and aggregate links.

    Refused (409) while it has allocations or child providers.
    """
    with transaction.atomic():
        provider = ResourceProvider.objects.select_for_update().filter(uuid=uuid).first()
        if provider is None:
            raise NotFound(f"No resource provider with uuid {uuid} found for delete")
        if provider.allocations.exists():
            raise Conflict(
                f"Unable to delete resource provider {uuid}: Resource provider has allocations.",
                code=PROVIDER_IN_USE,
            )
        if ResourceProvider.objects.filter(parent_id=provider.pk).exists():
            raise Conflict(
                f"Unable to delete parent resource provider {uuid}: "
                "It has child resource providers.",
                code=PROVIDER_CANNOT_DELETE_PARENT,
            )
        Inventory.objects.filter(resource_provider_id=provider.pk).delete()
        ResourceProviderTrait.objects.filter(resource_provider_id=provider.pk).delete()
        ResourceProviderAggregate.objects.filter(resource_provider_id=provider.pk).delete()
        ResourceProvider.objects.filter(pk=provider.pk).update(root=None, parent=None)
        ResourceProvider.objects.filter(pk=provider.pk).delete()
