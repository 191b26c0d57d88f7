"""A Content-Security-Policy on the operator's pages (the dashboard and the admin).

The pages load scripts, styles, fonts and images from this service only and run no inline
script, so an injected ``<script>`` (a provider name an attacker chose, rendered where an
escape was missed) does not run. Inline styles stay allowed: the dashboard's bars set their
width in a ``style`` attribute and the admin's change lists carry a ``<style>`` block.
"""

from django.conf import settings

HEADER = "Content-Security-Policy"


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if request.path_info.startswith(settings.PLACEMENT_CSP_PREFIXES):
            response.setdefault(HEADER, settings.PLACEMENT_CONTENT_SECURITY_POLICY)
        return response
