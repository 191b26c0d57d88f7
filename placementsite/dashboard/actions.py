"""Dashboard actions: what an operator does from the Migrations and host pages, each a POST
(CSRF-checked by Django's middleware) that calls the owning app's service, says what came of
it (a message on the page it returns to) and is refused with a 403 page, nothing done,
without the permission the admin asks for the same change.

- confirm, revert, finish a migration: ``scheduling.change_migration``;
- disable (with a reason) or enable a host, resync it: ``providers.change_computenode`` (the
  admin's compute node form, where an operator enables or disables a host);
- drain a host: that, and the API's policy rule ``placement:api:compute_nodes:drain``. The
  host is disabled at once; its servers are moved by a worker (``scheduling.tasks.drain_host``:
  each move is a scheduling pass over every host, too long to wait for in a page), their
  moves showing on the Migrations page as they start, what could not move in its history.

The actions that came with their own API endpoints (drain here, pools in ``pools.py``, server
groups in ``server_groups.py``) also need that endpoint's policy rule, checked for the user as
their API token would be (:func:`policy_allows`), so the dashboard never lets anyone do what
the API would refuse them.
"""

import logging

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from placementsite.core.api import policy
from placementsite.core.api.auth import user_context
from placementsite.core.exceptions import DomainError
from providers.selectors.compute_nodes import host_availability_by_root, host_by_name
from providers.services import compute_nodes as host_services
from providers.services.host_sync import compute_nodes_sync
from scheduling import policies as scheduling_policies
from scheduling.selectors.migrations import migration_by_uuid
from scheduling.services import migrations as moves
from scheduling.services.drain import servers_on_host
from scheduling.tasks import drain_host

from .rendering import staff_required

logger = logging.getLogger("placement.dashboard")

MOVE_ACTIONS = ("scheduling.view_migration", "scheduling.change_migration")
HOST_ACTIONS = ("providers.view_computenode", "providers.change_computenode")
REASON_MAX = 255

DRAIN_RULE = f"{scheduling_policies.COMPUTE_NODES}:drain"

MIGRATION_SERVICES = {
    "confirm": moves.migration_confirm,
    "revert": moves.migration_revert,
    "finish": moves.migration_finish,
}


def action(*permissions, what):
    """A POST-only view for a staff user with ``permissions``; else a 405 or a 403 page."""

    def decorator(view):
        return require_POST(
            staff_required(
                *permissions, denied=f"You may not {what}: you lack {_perms(permissions)}."
            )(view)
        )

    return decorator


class PolicyChecker:
    """The API's policy decisions for one user (as their API token): the context is built
    once, and each rule on each target decided once (a page asks for every row)."""

    def __init__(self, user):
        self.context = user_context(user)
        self._decided = {}

    def allows(self, rule, target=None):
        """Whether ``rule`` allows the user on ``target`` (a row's project and user; default
        the user's own, as the API's first check)."""
        key = (rule, tuple(sorted(target.items())) if target else None)
        if key not in self._decided:
            self._decided[key] = policy.check(rule, self.context, target)
        return self._decided[key]


def policy_allows(user, rule, target=None):
    return PolicyChecker(user).allows(rule, target)


def policy_required(request, rule, *, what, target=None):
    """A 403 page, before anything is done, unless ``rule`` allows the user."""
    if not policy_allows(request.user, rule, target):
        raise PermissionDenied(f"You may not {what}: the policy rule {rule} does not allow you.")


def _perms(permissions):
    return " and ".join(p.rsplit(".", 1)[1] for p in permissions)


def back(request, default):
    """Where the form came from (its ``next``), if it is this site; else ``default``."""
    target = request.POST.get("next", "")
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return redirect(target)
    return redirect(default)


def run_service(request, call, message):
    """Call one service; its domain error becomes the page's error message, success ``message``."""
    try:
        call()
    except DomainError as exc:
        messages.error(request, exc.detail)
    else:
        done(request, message)


def done(request, message):
    logger.info("dashboard: %s by %s", message, request.user.get_username())
    messages.success(request, message)


@action(*MOVE_ACTIONS, what="settle migrations")
def migration_action(request, uuid, verb):
    migration = migration_by_uuid(uuid=uuid)
    if migration is None:
        raise Http404("No such migration.")
    label = migration.server.name if migration.server is not None else str(migration.server_uuid)
    try:
        settled = MIGRATION_SERVICES[verb](migration=migration)
    except DomainError as exc:
        messages.error(request, f"Could not {verb} the {migration.kind} of {label}: {exc.detail}")
    else:
        done(request, f"The {migration.kind} of {label} is {settled.status}.")
    return back(request, reverse("dashboard:migrations"))


def _host(root_provider_id):
    return host_availability_by_root(provider_ids=[root_provider_id]).get(root_provider_id)


@action(*HOST_ACTIONS, what="change hosts")
def host_disable(request, hostname):
    reason = request.POST.get("reason", "").strip()
    if not reason:
        messages.error(request, f"Say why {hostname} is disabled (the reason is shown to all).")
    elif len(reason) > REASON_MAX:
        messages.error(request, f"The reason is longer than {REASON_MAX} characters.")
    else:
        run_service(
            request,
            lambda: host_services.compute_node_disable(hostname=hostname, reason=reason),
            f"{hostname} is disabled: {reason}",
        )
    return back(request, reverse("dashboard:hosts"))


@action(*HOST_ACTIONS, what="change hosts")
def host_enable(request, hostname):
    run_service(
        request,
        lambda: host_services.compute_node_enable(hostname=hostname),
        f"{hostname} is enabled.",
    )
    return back(request, reverse("dashboard:hosts"))


@action(*HOST_ACTIONS, what="change hosts")
def host_resync(request, hostname):
    """The host's sync now, whether it needs one or not (as ``sync_hosts --force``)."""
    try:
        outcomes = compute_nodes_sync(hostnames=[hostname], force=True, due_only=False)
    except DomainError as exc:
        messages.error(request, f"Could not resync {hostname}: {exc.detail}")
        return back(request, reverse("dashboard:hosts"))
    if not outcomes:
        messages.warning(
            request, f"{hostname} was not synced: it has not reported yet, or a worker holds it."
        )
    else:
        outcome = outcomes[0]
        text = f"{hostname} resynced: {outcome.status}, {outcome.changes} change" + (
            "" if outcome.changes == 1 else "s"
        )
        if outcome.errors:
            messages.error(request, f"{text}; " + "; ".join(outcome.errors))
        else:
            done(request, text + ".")
    return back(request, reverse("dashboard:hosts"))


@action(*HOST_ACTIONS, what="change hosts")
def host_drain_view(request, hostname):
    """Disable the host now and ask a worker to move every server off it (the scheduler's
    drain, as the API's); the moves show on the Migrations page as the worker starts them."""
    policy_required(request, DRAIN_RULE, what="drain hosts")
    reason = request.POST.get("reason", "").strip()
    if len(reason) > REASON_MAX:
        messages.error(request, f"The reason is longer than {REASON_MAX} characters.")
        return back(request, reverse("dashboard:hosts"))
    node = host_by_name(hostname=hostname)
    if node is None:
        raise Http404("No such compute host.")
    reason = reason or "drained"
    host_services.compute_node_disable(hostname=hostname, reason=reason)
    count = servers_on_host(node=node).count()
    try:
        drain_host.apply_async(args=[hostname, reason], retry=False)
    except Exception:  # the broker did not answer: the host stays disabled, nothing moves
        logger.exception("dashboard: could not queue the drain of %s", hostname)
        messages.error(
            request,
            f"{hostname} is disabled ({reason}), but no worker could be asked to move its "
            + _count(count, "server")
            + ": drain it again once the broker answers.",
        )
        return back(request, reverse("dashboard:migrations"))
    done(
        request,
        f"{hostname} is disabled ({reason}) and draining: a worker is moving its "
        + _count(count, "server")
        + " off. Their moves show under In flight as they start; a server it cannot move, "
        "in the history.",
    )
    return back(request, reverse("dashboard:migrations"))


def _count(n, noun):
    return f"{n} {noun}" + ("" if n == 1 else "s")


def host_context(request, provider):
    """What a host's provider page needs for its actions: ``host`` (its compute host's state,
    None for a provider no host reports) and whether the user may act on it."""
    if provider.parent_id is not None:
        return {"host": None}
    can_manage = request.user.has_perms(HOST_ACTIONS)
    return {
        "host": _host(provider.id),
        "can_manage_host": can_manage,
        "can_drain_host": can_manage and policy_allows(request.user, DRAIN_RULE),
    }
