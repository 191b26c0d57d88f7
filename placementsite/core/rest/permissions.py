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


class PolicyPermission(permissions.BasePermission):
    """Allows a request when the caller satisfies the view's rule for the action.

    A viewset names ``policy_prefix`` (``placement:api:flavors``); the rule is the
    prefix and the action's verb (``placement:api:flavors:list``); a custom
    ``@action`` uses its own name. A plain APIView names ``policy_rule``. A view may
    override ``get_policy_target(request)`` to pass ``project_id`` and the like.
    """

    message = "Policy does not allow this request to be performed."

    def has_permission(self, request, view):
        context = request.auth
        if context is None:
            return False
        rule = self.rule_for(request, view)
        target = view.get_policy_target(request) if hasattr(view, "get_policy_target") else None
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
        return f"{view.policy_prefix}:{ACTION_VERBS.get(action, action)}"
