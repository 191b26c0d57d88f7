"""Dashboard: the Server groups page (each group's policy, rules, project and members, with
their hosts) and its actions: create a group, delete one.

Each action needs the admin's permission for the same change and the policy rule of the API's
endpoint (``POST``/``DELETE /api/server-groups/``) for the group's project, as a token of the
same user would; the rules (a policy's valid ``rules``) are the scheduling services'.
"""

from django.contrib import messages
from django.http import Http404
from django.urls import reverse

from placementsite.core.exceptions import DomainError
from scheduling import policies as scheduling_policies
from scheduling.filtersets import ServerGroupFilter
from scheduling.selectors.server_groups import server_group_by_uuid, server_groups_page
from scheduling.services.server_groups import server_group_create, server_group_delete

from .actions import PolicyChecker, action, back, done, policy_required
from .forms import ServerGroupForm
from .rendering import render_page, searched, staff_required

VIEW = ("scheduling.view_servergroup", "scheduling.view_server")
ADD = (*VIEW, "scheduling.add_servergroup")
DELETE = (*VIEW, "scheduling.delete_servergroup")
CREATE_RULE = f"{scheduling_policies.SERVER_GROUPS}:create"
DELETE_RULE = f"{scheduling_policies.SERVER_GROUPS}:delete"


def _target(project_id, user_id):
    return {"project_id": project_id, "user_id": user_id}


@staff_required(*VIEW)
def group_list(request):
    return _page(request)


def _page(request, form=None, status=None):
    query = searched(request.GET, max_length=200)
    user = request.user
    groups = ServerGroupFilter(query).qs
    page = server_groups_page(groups=groups, page_number=request.GET.get("page") or 1)
    can_delete = user.has_perms(DELETE)
    checker = PolicyChecker(user)
    for group in page.object_list:
        group.deletable = can_delete and checker.allows(
            DELETE_RULE, _target(group.project_id, group.user_id)
        )
    context = {
        "page": page,
        "q": query["q"],
        "can_create": user.has_perms(ADD),
        "form": form or ServerGroupForm(),
    }
    return render_page(request, "server_group_list.html", "server_groups", context, status)


@action(*ADD, what="create server groups")
def group_create(request):
    form = ServerGroupForm(request.POST)
    if not form.is_valid():
        messages.error(request, "The group was not created: see the form.")
        return _page(request, form=form, status=400)
    data = form.cleaned_data
    user_id = request.user.get_username()
    policy_required(
        request,
        CREATE_RULE,
        what=f"create server groups in project {data['project_id']}",
        target=_target(data["project_id"], user_id),
    )
    try:
        group = server_group_create(
            name=data["name"],
            policy=data["policy"],
            rules=data["rules"],
            project_id=data["project_id"],
            user_id=user_id,
        )
    except DomainError as exc:
        messages.error(request, f"The group was not created: {exc.detail}")
    else:
        done(request, f"Server group {group.name} ({group.policy}) is created.")
    return back(request, reverse("dashboard:server_groups"))


@action(*DELETE, what="delete server groups")
def group_delete(request, uuid):
    group = server_group_by_uuid(uuid=uuid)
    if group is None:
        raise Http404("No such server group.")
    policy_required(
        request,
        DELETE_RULE,
        what=f"delete the server groups of project {group.project_id}",
        target=_target(group.project_id, group.user_id),
    )
    server_group_delete(group=group)
    done(request, f"Server group {group.name} is deleted; its servers keep running.")
    return back(request, reverse("dashboard:server_groups"))
