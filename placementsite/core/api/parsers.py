"""Request bodies: JSON only, with Placement's error messages."""

import json

from .errors import HTTPBadRequest, HTTPUnsupportedMediaType

JSON_MEDIA_TYPE = "application/json"


def media_type(request):
    return request.META.get("CONTENT_TYPE", "").split(";")[0].strip().lower()


def require_json(request):
    """Placement's require_content: a body must be declared application/json."""
    found = media_type(request)
    if found != JSON_MEDIA_TYPE:
        raise HTTPUnsupportedMediaType(
            f"The media type {found or 'None'} is not supported, use {JSON_MEDIA_TYPE}"
        )


def parse_json(raw):
    """Decode a JSON body, refusing what the database could not store."""
    try:
        text = raw.decode("utf-8")
        data = json.loads(text)
        # Lone surrogates and NUL characters decode fine but cannot be stored.
        encoded = json.dumps(data, ensure_ascii=False).encode("utf-8")
    except (UnicodeError, ValueError, RecursionError) as exc:
        raise HTTPBadRequest(f"Malformed JSON: {exc}") from None
    if b"\\u0000" in encoded or b"\x00" in encoded:
        raise HTTPBadRequest("Malformed JSON: NUL characters are not allowed")
    return data
