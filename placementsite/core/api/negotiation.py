"""Content negotiation: Placement speaks only JSON."""

from rest_framework.negotiation import DefaultContentNegotiation

from .errors import HTTPNotAcceptable


class PlacementNegotiation(DefaultContentNegotiation):
    def select_renderer(self, request, renderers, format_suffix=None):
        renderer = renderers[0]
        accept = request.META.get("HTTP_ACCEPT", "")
        # Placement checks Accept on its GET handlers only: a write answers JSON regardless.
        if accept and request.method in ("GET", "HEAD"):
            ranges = [part.split(";")[0].strip().lower() for part in accept.split(",")]
            if not any(r in ("*/*", "application/*", "application/json") for r in ranges):
                raise HTTPNotAcceptable("Only application/json is provided")
        return renderer, renderer.media_type
