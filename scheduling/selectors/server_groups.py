"""Reads about server groups: who may see one, and where its members run."""

from collections import Counter
from dataclasses import dataclass
from uuid import UUID

from django.core.paginator import Page, Paginator
from django.db.models import Prefetch, QuerySet

from placementsite.core import uuids

from ..models import Server, ServerGroup, ServerGroupMember

HARD = (ServerGroup.Policy.AFFINITY, ServerGroup.Policy.ANTI_AFFINITY)


@dataclass(frozen=True)
class GroupViewer:
    """Who asks: a caller sees its own project's groups, or every one with ``all_projects``."""

    project_id: str | None
    all_projects: bool = False


def server_group_lookup(*, value: UUID | str, viewer: GroupViewer) -> ServerGroup | None:
    """The group of this uuid the viewer may see, or None."""
    parsed = uuids.parse(str(value))
    if parsed is None:
        return None
    found = ServerGroup.objects.filter(uuid=parsed)
    if not viewer.all_projects:
        found = found.filter(project_id=viewer.project_id)
    return found.first()


def member_host_counts(
    *, group: ServerGroup, exclude_server: UUID | str | None = None
) -> Counter[str]:
    """``{host uuid: members on it}`` of the group, read now (a pass calls it once), leaving
    out ``exclude_server`` (a server being moved does not count against its own move)."""
    members = ServerGroupMember.objects.filter(group=group).exclude(server__host=None)
    if exclude_server is not None:
        members = members.exclude(server__uuid=exclude_server)
    return Counter(str(u) for u in members.values_list("server__host__uuid", flat=True))


def group_refusal(*, group: ServerGroup, host_uuid: str, counts: Counter[str]) -> str | None:
    """Why a hard policy refuses ``host_uuid`` given the members' ``counts``, or None. The one
    rule the filters and the claim both apply."""
    if group.policy == ServerGroup.Policy.AFFINITY:
        if counts and host_uuid not in counts:
            return f"does not run the members of server group {group.name} (affinity)"
    elif group.policy == ServerGroup.Policy.ANTI_AFFINITY:
        limit = group.max_server_per_host
        if counts.get(host_uuid, 0) >= limit:
            return (
                f"already runs {counts[host_uuid]} of server group {group.name} "
                f"(anti-affinity, max_server_per_host {limit})"
            )
    return None


def server_group_of(*, server: Server) -> ServerGroup | None:
    membership = ServerGroupMember.objects.select_related("group").filter(server=server).first()
    return membership.group if membership else None


def server_groups_page(
    *, groups: QuerySet | None = None, page_number: int | str = 1, per_page: int = 50
) -> Page:
    """A page of the dashboard's groups (``groups``, a queryset of ServerGroup; every group by
    default), newest first, each with its members' servers, flavors and hosts: three
    queries."""
    members = ServerGroupMember.objects.select_related("server__flavor", "server__host").order_by(
        "created_at", "id"
    )
    groups = ServerGroup.objects.all() if groups is None else groups
    groups = groups.prefetch_related(Prefetch("members", queryset=members))
    return Paginator(groups.order_by("-created_at", "-id"), per_page).get_page(page_number)


def server_group_by_uuid(*, uuid: UUID | str) -> ServerGroup | None:
    return ServerGroup.objects.filter(uuid=uuid).first()
