"""DRF authentication with the Placement API's auth strategy (``X-Auth-Token``)."""

from rest_framework import authentication, exceptions

from placementsite.core.api import auth
from placementsite.core.api.errors import HTTPUnauthorized


class PlacementTokenAuthentication(authentication.BaseAuthentication):
    """The caller is the :class:`~placementsite.core.api.auth.RequestContext` of its token.

    The context is both ``request.user`` and ``request.auth``; it is also put on the
    Django request, where the request log and the Placement plumbing look for it.
    """

    def authenticate(self, request):
        if not request._request.META.get(auth.TOKEN_HEADER):
            return None  # DRF answers 401 "Authentication credentials were not provided."
        try:
            context = auth.authenticate(request._request)
        except HTTPUnauthorized as exc:
            raise exceptions.AuthenticationFailed(exc.detail) from None
        request._request.context = context
        return context, context

    def authenticate_header(self, request):
        # Any value makes DRF answer 401 (not 403) to a missing or bad token.
        return 'X-Auth-Token realm="placement"'
