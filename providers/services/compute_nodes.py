"""Host reports and the sync that turns them into providers, inventories and traits.

``compute_node_report`` stores what a host says about itself. ``compute_nodes_sync``
runs the operator's resource plugins over every host whose report changed and
writes the result through the same services as the Placement API: providers are
created with ``resource_provider_create``, inventories set with
``inventories_replace`` and traits with ``provider_traits_set``, each checking the
provider generation read in the same transaction. A generation conflict (an
allocation or an operator's write got in first) is left for the next run, never
forced. A host seen for the first time, none of whose providers exists yet, is written
whole by ``provider_tree_create`` (same rules, a few bulk statements); should that be refused,
the host is written provider by provider as above.

Two workers never sync one host at once: each host is synced in its own
transaction that holds its ComputeNode row (``FOR UPDATE SKIP LOCKED``; a host
another worker holds is skipped). Each provider of the host is written in a
savepoint, so one refused write (an inventory in use, an operator's reserved
above a new total) leaves the host's other providers synced.

What the sync wrote last is kept on the host (``synced_state``): an inventory
field that differs from it was changed by an operator, and the sync keeps it.
"""

import copy
import hashlib
import json
import logging
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from placementsite.core.exceptions import ConcurrentUpdate, Conflict, DomainError, InvalidRequest

from ..models import (
    CUSTOM_PREFIX,
    ComputeNode,
    Inventory,
    InventoryChange,
    ResourceClass,
    ResourceProvider,
    Trait,
)
from ..plugins import HostReport, HostTree, configured_plugins, plugins_signature
from ..selectors.compute_nodes import hosts_needing_sync
from .inventories import FIELDS as INVENTORY_FIELDS
from .inventories import inventories_replace
from .provider_trees import NewProvider, provider_tree_create
from .resource_classes import resource_class_ensure
from .resource_providers import resource_provider_create, resource_provider_delete
from .traits import provider_traits_set, trait_ensure

logger = logging.getLogger("placement.hosts")

# The microversion the sync writes inventories as: reserved may equal total.
SYNC_MICROVERSION = (1, 39)
REPORT_FIELDS = (
    "vcpus",
    "memory_mb",
    "local_gb",
    "cpu_info",
    "hypervisor_type",
    "stats",
    "numa_topology",
    "pci_devices",
)
# Inventory fields an operator may set and a sync then leaves alone.
OPERATOR_FIELDS = ("reserved", "allocation_ratio")


def report_digest(report):
    """A digest of a report's content: equal reports, equal digests."""
    canonical = json.dumps({k: report.get(k) for k in REPORT_FIELDS}, sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


class ProviderNotSynced(Conflict):
    """A host report names a provider the host sync did not create."""

    code = "compute_node.provider_not_synced"


def compute_node_report(*, hostname, report, adopt=False, now=None):
    """Create or replace ``hostname``'s report (already validated); returns ``(node, created)``.

    Idempotent: the same report again only refreshes ``reported_at`` (the
    host is alive) and does not make the host need a sync.

    A report never takes over a provider the sync did not create: when the host's root
    provider is not the sync's yet and a provider of its name exists (made through the
    Placement API), the report is refused (ProviderNotSynced) unless ``adopt``: an admin's
    explicit choice, which hands that provider to the sync.
    """
    fields = {name: report[name] for name in REPORT_FIELDS}
    fields["report_hash"] = report_digest(report)
    fields["reported_at"] = now or timezone.now()
    with transaction.atomic():
        node = ComputeNode.objects.select_for_update().filter(hostname=hostname).first()
        if node is None or node.provider_id is None:
            taken = _provider_of_the_name(hostname)
            if taken is not None:
                if not adopt:
                    raise ProviderNotSynced(
                        f"Resource provider {hostname} ({taken.uuid}) was not created by the "
                        "host sync; an admin may adopt it (PUT with ?adopt=true)."
                    )
                fields["provider"] = taken
        return ComputeNode.objects.update_or_create(hostname=hostname, defaults=fields)


def _provider_of_the_name(hostname):
    """The provider named like the host that no host's sync holds, locked; else None."""
    provider = ResourceProvider.objects.select_for_update().filter(name=hostname).first()
    if provider is None or ComputeNode.objects.filter(provider=provider).exists():
        return None
    return provider


def compute_node_set_enabled(*, hostname, enabled):
    updated = ComputeNode.objects.filter(hostname=hostname).update(enabled=enabled)
    return bool(updated)


# --- the sync ----------------------------------------------------------------


@dataclass
class SyncOutcome:
    hostname: str
    status: str
    changes: int = 0
    errors: list = field(default_factory=list)
    plugin_errors: dict = field(default_factory=dict)


def compute_nodes_sync(*, hostname=None, plugins=None, now=None):
    """Sync every host that needs it (or just ``hostname``, whatever its state).

    Returns the outcomes of the hosts synced by this call (hosts another
    worker holds are skipped and not listed).
    """
    plugins = configured_plugins() if plugins is None else plugins
    signature = plugins_signature([p.name for p in plugins])
    ids = list(
        hosts_needing_sync(plugins_signature=signature, hostname=hostname)
        .order_by("id")
        .values_list("id", flat=True)
    )
    classes = _ClassCache(plugins)
    outcomes = []
    for node_id in ids:
        outcome = compute_node_sync(
            node_id=node_id,
            plugins=plugins,
            signature=signature,
            force=hostname is not None,
            classes=classes,
            now=now,
        )
        if outcome is not None:
            outcomes.append(outcome)
    return outcomes


def compute_node_sync(*, node_id, plugins, signature, force=False, classes=None, now=None):
    """Sync one host in one transaction; None when another worker holds it (or did it)."""
    classes = classes or _ClassCache(plugins)
    with transaction.atomic():
        node = ComputeNode.objects.select_for_update(skip_locked=True).filter(pk=node_id).first()
        if node is None or (not force and _up_to_date(node, signature)):
            return None
        tree, plugin_errors = _build_tree(node, plugins)
        outcome = _write_tree(node, tree, classes, now or timezone.now())
        outcome.plugin_errors = plugin_errors
        if outcome.status == ComputeNode.SyncStatus.OK and plugin_errors:
            outcome.status = ComputeNode.SyncStatus.PARTIAL
        node.synced_at = now or timezone.now()
        node.synced_hash = node.report_hash
        node.synced_plugins = signature
        node.sync_status = outcome.status
        node.sync_error = "\n".join(outcome.errors)
        node.plugin_errors = plugin_errors
        node.save(
            update_fields=[
                "provider",
                "synced_at",
                "synced_hash",
                "synced_plugins",
                "sync_status",
                "sync_error",
                "plugin_errors",
                "synced_state",
                "updated_at",
            ]
        )
    for message in outcome.errors:
        logger.warning("sync of host %s: %s", node.hostname, message)
    return outcome


def _up_to_date(node, signature):
    return (
        node.provider_id is not None
        and node.synced_hash == node.report_hash
        and node.synced_plugins == signature
        and node.sync_status not in (ComputeNode.SyncStatus.CONFLICT, ComputeNode.SyncStatus.FAILED)
    )


def _build_tree(node, plugins):
    """Run every plugin over the report; a plugin that raises is left out, with its error."""
    report = HostReport.of(node)
    tree = HostTree(node.hostname, [p.name for p in plugins])
    errors = {}
    for plugin in plugins:
        before = copy.deepcopy(tree)
        try:
            plugin.contribute(report, tree)
        except Exception as exc:  # a plugin is third-party code: contain whatever it raises
            logger.exception("resource plugin %s failed on host %s", plugin.name, node.hostname)
            errors[plugin.name] = f"{type(exc).__name__}: {exc}"
            tree = before
    _apply_defaults(tree)
    return tree, errors


def _apply_defaults(tree):
    """The operator's default ratio on every inventory; default reserved on the first holder."""
    ratios = settings.PLACEMENT_ALLOCATION_RATIOS
    reserved = settings.PLACEMENT_RESERVED
    seen = set()
    for spec in tree.providers():
        for name, inventory in spec.inventories.items():
            if inventory.allocation_ratio is None:
                inventory.allocation_ratio = float(ratios.get(name, 1.0))
            if inventory.reserved is None:
                amount = int(reserved.get(name, 0)) if name not in seen else 0
                inventory.reserved = min(amount, inventory.total)
            if inventory.max_unit is None:
                inventory.max_unit = inventory.total
            seen.add(name)


class _ClassCache:
    """Resource classes and traits the sync needs, created once per run when custom."""

    def __init__(self, plugins):
        self.metadata = {}
        for plugin in plugins:
            self.metadata.update(plugin.class_metadata)
        self.known_classes = set()
        self.known_traits = set()
        self.class_ids = {}

    def class_id(self, name):
        if name not in self.class_ids:
            self.class_ids[name] = ResourceClass.objects.values_list("id", flat=True).get(name=name)
        return self.class_ids[name]

    def ensure_classes(self, names):
        missing = set(names) - self.known_classes
        if not missing:
            return
        found = dict(ResourceClass.objects.filter(name__in=missing).values_list("name", "id"))
        for name in sorted(missing - set(found)):
            if not name.startswith(CUSTOM_PREFIX):
                raise InvalidRequest(f"No such resource class {name}")
            rc, _created = resource_class_ensure(name=name)
            found[name] = rc.id
        for name in missing & set(self.metadata):
            rc = ResourceClass.objects.get(name=name)
            if not rc.unit:
                rc.kind, rc.unit, rc.description = self.metadata[name]
                rc.save(update_fields=["kind", "unit", "description", "updated_at"])
        self.class_ids.update(found)
        self.known_classes |= missing

    def ensure_traits(self, names):
        missing = set(names) - self.known_traits
        if not missing:
            return
        found = set(Trait.objects.filter(name__in=missing).values_list("name", flat=True))
        for name in sorted(missing - found):
            if not name.startswith(CUSTOM_PREFIX):
                raise InvalidRequest(f"No such trait {name}")
            trait_ensure(name=name)
        self.known_traits |= missing


def _write_tree(node, tree, classes, now):
    state = node.synced_state or {}
    new_state = {}
    outcome = SyncOutcome(hostname=node.hostname, status=ComputeNode.SyncStatus.OK)

    def failed(spec_name, exc):
        if isinstance(exc, ConcurrentUpdate):
            outcome.status = ComputeNode.SyncStatus.CONFLICT
        elif outcome.status == ComputeNode.SyncStatus.OK:
            outcome.status = ComputeNode.SyncStatus.PARTIAL
        outcome.errors.append(f"{spec_name}: {getattr(exc, 'detail', None) or exc}")

    specs = tree.providers()
    # One read for every provider of the tree that exists already by name (adopted).
    by_name = {p.name: p for p in ResourceProvider.objects.filter(name__in=[s.name for s in specs])}
    changes = []
    if node.provider_id is None and not state and not by_name:
        created = _create_tree(node, specs, classes, now, changes)
        if created is not None:
            node.synced_state, outcome.changes = created
            InventoryChange.objects.bulk_create(changes)
            return outcome
    root = None
    for spec in specs:
        last = state.get(spec.key) or {}
        # No savepoint of its own: each service call is atomic by itself, so a refused
        # write leaves this provider's earlier writes and the other providers in place.
        try:
            provider, created = _provider(node, spec, last, root, by_name)
            entry, count = _sync_provider(
                node, provider, spec, last, classes, now, changes, created=created
            )
        except DomainError as exc:
            failed(spec.name, exc)
            if spec.key:
                if last:
                    new_state[spec.key] = last
                continue
            # Without its root the host has nothing to hang children on.
            if outcome.status != ComputeNode.SyncStatus.CONFLICT:
                outcome.status = ComputeNode.SyncStatus.FAILED
            node.synced_state = state
            InventoryChange.objects.bulk_create(changes)
            return outcome
        if not spec.key:
            root = provider
            node.provider = provider
        new_state[spec.key] = entry
        outcome.changes += count
    InventoryChange.objects.bulk_create(changes)

    _remove_gone_children(state, new_state, failed)
    node.synced_state = new_state
    return outcome


def _create_tree(node, specs, classes, now, changes):
    """A new host's whole tree in one write (``provider_tree_create``); returns (its state,
    how many changes), or None when that write was refused (nothing written)."""
    wanted = [_plugin_fields(spec) for spec in specs]
    try:
        classes.ensure_classes({name for spec in specs for name in spec.inventories})
        classes.ensure_traits({name for spec in specs for name in spec.traits})
        rows = provider_tree_create(
            root=_new_provider(specs[0], wanted[0]),
            children=[_new_provider(s, w) for s, w in zip(specs[1:], wanted[1:], strict=True)],
            microversion=SYNC_MICROVERSION,
        )
    except DomainError:
        # A name taken meanwhile, or a refused record: the path that writes provider by
        # provider adopts the one and reports the other for its provider alone.
        return None
    node.provider = rows[0]
    state, count = {}, 0
    for spec, provider, fields in zip(specs, rows, wanted, strict=True):
        count += _record_changes(node, provider, {}, fields, now, classes, changes)
        count += bool(spec.traits)
        state[spec.key] = _state_entry(provider, spec, fields)
    return state, count


def _new_provider(spec, fields):
    return NewProvider(name=spec.name, inventories=fields, traits=tuple(sorted(spec.traits)))


def _plugin_fields(spec):
    """``{class: the six inventory fields}`` as the plugins (and the defaults) set them."""
    return {
        name: {f: getattr(inventory, f) for f in INVENTORY_FIELDS}
        for name, inventory in spec.inventories.items()
    }


def _state_entry(provider, spec, fields):
    """What the sync remembers of a provider it wrote: which it is, the operator-settable
    values it proposed (a differing value later is the operator's) and its traits."""
    return {
        "uuid": str(provider.uuid),
        "name": provider.name,
        "classes": {name: {f: v[f] for f in OPERATOR_FIELDS} for name, v in fields.items()},
        "traits": sorted(spec.traits),
    }


def _remove_gone_children(state, new_state, failed):
    """Delete the children the plugins no longer want (a NUMA cell or device group gone);
    one that cannot be deleted is reported through ``failed`` and kept in ``new_state``."""
    for key, last in state.items():
        if key in new_state or not key:
            continue
        try:
            with transaction.atomic():
                if ResourceProvider.objects.filter(uuid=last["uuid"]).exists():
                    resource_provider_delete(uuid=last["uuid"])
        except DomainError as exc:
            failed(last.get("name", key), exc)
            new_state[key] = last


def _provider(node, spec, last, root, by_name):
    """The host's provider for ``spec`` and whether it is new: the one synced before, a child
    of that name under the host's own root, or a new one. A provider of that name anywhere
    else is not the sync's (creating one then fails on the name, and the sync says so)."""
    provider = None
    if not spec.key and node.provider_id:
        provider = ResourceProvider.objects.filter(pk=node.provider_id).first()
    if provider is None and last.get("uuid"):
        provider = by_name.get(spec.name)
        if provider is None or str(provider.uuid) != last["uuid"]:
            provider = ResourceProvider.objects.filter(uuid=last["uuid"]).first()
    if provider is None and spec.key and root is not None:
        candidate = by_name.get(spec.name)
        if candidate is not None and candidate.parent_id == root.id:
            provider = candidate
    if provider is None:
        provider = resource_provider_create(
            name=spec.name, parent_uuid=root.uuid if root is not None else None
        )
        return provider, True
    return provider, False


def _sync_provider(node, provider, spec, last, classes, now, changes, *, created):
    """Write one provider's inventories and traits (appending history rows to ``changes``);
    returns (its state entry, how many changes)."""
    classes.ensure_classes(spec.inventories)
    current = {}
    if not created:  # a provider made a moment ago has nothing yet
        current = {
            inv.resource_class.name: inv
            for inv in Inventory.objects.filter(resource_provider=provider).select_related(
                "resource_class"
            )
        }
    last_classes = last.get("classes") or {}
    proposed = _plugin_fields(spec)
    wanted = {}
    for name, fields in _plugin_fields(spec).items():
        existing = current.get(name)
        if existing is not None:
            for f in OPERATOR_FIELDS:
                # Differs from what the sync proposed last time (or the sync never wrote
                # it): an operator's value, which wins.
                if name not in last_classes or getattr(existing, f) != last_classes[name].get(f):
                    fields[f] = getattr(existing, f)
        wanted[name] = fields
    for name, existing in current.items():
        # A class no plugin provides and the sync never wrote: the operator's own.
        if name not in wanted and name not in last_classes:
            wanted[name] = {f: getattr(existing, f) for f in INVENTORY_FIELDS}

    count = 0
    if wanted != {
        name: {f: getattr(inv, f) for f in INVENTORY_FIELDS} for name, inv in current.items()
    }:
        provider, _rows = inventories_replace(
            provider_uuid=provider.uuid,
            generation=provider.generation,
            inventories=wanted,
            microversion=SYNC_MICROVERSION,
        )
        count = _record_changes(node, provider, current, wanted, now, classes, changes)

    traits = _sync_traits(provider, spec, last, classes, created=created)
    return _state_entry(provider, spec, proposed), count + traits


def _record_changes(node, provider, current, wanted, now, classes, rows):
    """Append a history row per class whose total, reserved or ratio changed; returns how many."""
    before = len(rows)
    for name in sorted({*current, *wanted}):
        old, new = current.get(name), wanted.get(name)
        old_values = (old.total, old.reserved, old.allocation_ratio) if old else (None,) * 3
        new_values = (
            (new["total"], new["reserved"], new["allocation_ratio"]) if new else (None,) * 3
        )
        if old_values == new_values:
            continue
        rows.append(
            InventoryChange(
                provider=provider,
                resource_class_id=classes.class_id(name),
                compute_node=node,
                changed_at=now,
                old_total=old_values[0],
                new_total=new_values[0],
                old_reserved=old_values[1],
                new_reserved=new_values[1],
                old_allocation_ratio=old_values[2],
                new_allocation_ratio=new_values[2],
            )
        )
    return len(rows) - before


def _sync_traits(provider, spec, last, classes, *, created):
    """Add the plugins' traits, drop the ones the sync added and no plugin wants; keep the rest."""
    current = set() if created else set(provider.traits.values_list("name", flat=True))
    previously = set(last.get("traits") or [])
    wanted = (current - (previously - spec.traits)) | spec.traits
    if wanted == current:
        return 0
    classes.ensure_traits(spec.traits)
    provider_traits_set(
        provider_uuid=provider.uuid, traits=sorted(wanted), generation=provider.generation
    )
    return 1
