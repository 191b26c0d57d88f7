"""The JSON parser of /api/: the Placement API's decoding rules, refusals in DRF's terms.

A body nested deeper than the interpreter's recursion limit, a NUL character or a lone
surrogate decode (or fail to) in ways that would otherwise end in a 500: the first raises
RecursionError, the others cannot be stored by PostgreSQL. Each is a 400 here.
"""

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from placementsite.core.api.errors import HTTPBadRequest
from placementsite.core.api.parsers import parse_json


class ApiJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        raw = stream.read() if stream is not None else b""
        try:
            return parse_json(raw)
        except HTTPBadRequest as exc:
            raise ParseError(exc.detail) from None
