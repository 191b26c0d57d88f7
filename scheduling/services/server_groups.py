"""Server groups: created and deleted here; members join in the claim that places a server
(scheduling.services.servers) and leave with it (the row cascades)."""

import contextlib
from collections.abc import Iterator

from django.db import transaction

from placementsite.core.exceptions import Conflict, InvalidRequest

from ..models import Server, ServerGroup, ServerGroupMember
from ..selectors.server_groups import group_refusal, member_host_counts

RULES = {"max_server_per_host"}


class GroupPolicyViolated(Conflict):
    """Raised inside a claim's transaction: the host would break the group's hard policy.
    The claim rolls back and the scheduler tries the next host."""

    code = "scheduler.server_group_policy"


def server_group_create(
    *, name: str, policy: str, rules: dict | None, project_id: str, user_id: str = ""
) -> ServerGroup:
    """A new group; ``rules`` as Nova 2.64: ``max_server_per_host`` (>= 1) for anti-affinity
    only."""
    rules = dict(rules or {})
    unknown = sorted(set(rules) - RULES)
    if unknown:
        raise InvalidRequest(f"rules: unknown rule {unknown[0]}")
    if rules and policy != ServerGroup.Policy.ANTI_AFFINITY:
        raise InvalidRequest(f"rules: only the anti-affinity policy takes rules, not {policy}")
    if "max_server_per_host" in rules:
        value = rules["max_server_per_host"]
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InvalidRequest("rules: max_server_per_host must be an integer of at least 1")
    return ServerGroup.objects.create(
        name=name, policy=policy, rules=rules, project_id=project_id, user_id=user_id
    )


def server_group_delete(*, group: ServerGroup) -> None:
    """Forget the group; its servers keep running, no longer bound by it."""
    group.delete()


@contextlib.contextmanager
def group_locked(*, group: ServerGroup | None) -> Iterator[ServerGroup | None]:
    """A transaction holding the group's row lock (nothing without a group): every placement
    into one group is decided and claimed while it holds it, so concurrent boots and moves
    into the group are serialised and each sees the others' members."""
    if group is None:
        yield None
        return
    with transaction.atomic():
        yield ServerGroup.objects.select_for_update().get(pk=group.pk)


def group_admit(
    *,
    group: ServerGroup | None,
    host_uuid: str,
    server: Server | None = None,
    join: bool = False,
) -> None:
    """In the claim's transaction (under :func:`group_locked`): raise GroupPolicyViolated when
    ``host_uuid`` breaks the group's hard policy (members read now; ``server`` itself left
    out), else, with ``join``, add ``server`` to the group."""
    if group is None:
        return
    counts = member_host_counts(group=group, exclude_server=server.uuid if server else None)
    reason = group_refusal(group=group, host_uuid=str(host_uuid), counts=counts)
    if reason is not None:
        raise GroupPolicyViolated(f"The host {reason}.")
    if join:
        ServerGroupMember.objects.create(group=group, server=server)
