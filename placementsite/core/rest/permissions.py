"""DRF permission that checks one Placement policy rule per action."""

from rest_framework import permissions

from placementsite.core.api import policy

# Viewset action -> the verb at the end of its rule name, in Placement's words.
ACTION_VERBS = {
    "list": "list",
    "retrieve": "show",
    "create": "create",
    "update": "update",
    "partial_update": "update",
    "destroy": "delete",
}


def project_target(row):
    """The policy target of a row that belongs to a project (a server, a migration): its
    project and user, as Placement passes a consumer's; None for a row of no project."""
    project_id = getattr(row, "project_id", None)
    if project_id is None:
        return None
    return {"project_id": project_id, "user_id": getattr(row, "user_id", None)}


class PolicyPermission(permissions.BasePermission):
    """Allows a request when the caller satisfies the view's rule for the action.

    A viewset names ``policy_prefix`` (``placement:api:flavors``); the rule is the
    prefix and the action's verb (``placement:api:flavors:list``); a custom
    ``@action`` uses its own name, or the verb ``policy_verbs`` maps it to. A plain APIView
    names ``policy_rule``.

    Before the view runs the rule is checked with the caller's own project as the target
    (Placement's default); the row a detail action acts on is then checked again with its
    own project as the target (:func:`project_target`), so that a rule such as
    ``role:member and project_id:%(project_id)s`` lets a member act on its project's rows
    and no other's. A create names the project it creates for with
    :meth:`ApiViewMixin.authorize_project`.
    """

    message = "Policy does not allow this request to be performed."

    def has_permission(self, request, view):
        return self._allowed(request, view, None)

    def has_object_permission(self, request, view, obj):
        target = project_target(obj)
        return target is None or self._allowed(request, view, target)

    def _allowed(self, request, view, target):
        context = request.auth
        if context is None:
            return False
        rule = self.rule_for(request, view)
        if policy.check(rule, context, target):
            return True
        self.message = f"Policy does not allow {rule} to be performed."
        return False

    @staticmethod
    def rule_for(request, view):
        rule = getattr(view, "policy_rule", None)
        if rule:
            return rule
        action = getattr(view, "action", None) or request.method.lower()
        verbs = {**ACTION_VERBS, **getattr(view, "policy_verbs", {})}
        return f"{view.policy_prefix}:{verbs.get(action, action)}"
