"""CORS: django-cors-headers, with preflight answers shaped as Placement's (oslo.middleware).

A preflight's ``Access-Control-Allow-Headers`` names the headers the browser asked for that are
allowed, not the whole allowed list: Placement echoes the request, and its suite checks it.
"""

from corsheaders.conf import conf
from corsheaders.middleware import ACCESS_CONTROL_ALLOW_HEADERS
from corsheaders.middleware import CorsMiddleware as BaseCorsMiddleware


class CorsMiddleware(BaseCorsMiddleware):
    def add_response_headers(self, request, response):
        response = super().add_response_headers(request, response)
        if ACCESS_CONTROL_ALLOW_HEADERS not in response:
            return response
        allowed = {name.lower() for name in conf.CORS_ALLOW_HEADERS}
        asked = request.headers.get("Access-Control-Request-Headers", "")
        echoed = [name.strip().lower() for name in asked.split(",") if name.strip()]
        echoed = [name for name in echoed if name in allowed]
        if echoed:
            response[ACCESS_CONTROL_ALLOW_HEADERS] = ", ".join(echoed)
        else:
            del response[ACCESS_CONTROL_ALLOW_HEADERS]
        return response
