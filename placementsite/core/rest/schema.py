"""OpenAPI generation hooks: only /api/ is described, with its token and error format."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension

ERROR_SCHEMA = {
    "type": "object",
    "required": ["errors"],
    "properties": {
        "errors": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["status", "title", "detail", "code"],
                "properties": {
                    "status": {"type": "integer"},
                    "title": {"type": "string"},
                    "detail": {"type": "string"},
                    "code": {"type": "string"},
                    "request_id": {"type": "string"},
                    "fields": {
                        "type": "object",
                        "additionalProperties": {"type": "array", "items": {"type": "string"}},
                    },
                },
            },
        }
    },
}


class TokenScheme(OpenApiAuthenticationExtension):
    target_class = "placementsite.core.rest.authentication.PlacementTokenAuthentication"
    name = "XAuthToken"

    def get_security_definition(self, auto_schema):
        return {"type": "apiKey", "in": "header", "name": "X-Auth-Token"}


def only_rest_api(endpoints, **kwargs):
    """Preprocessing hook: leave out the Placement API, which has its own reference."""
    return [endpoint for endpoint in endpoints if endpoint[0].startswith("/api/")]


def document_errors(result, generator, request, public):
    """Postprocessing hook: every operation may answer an error in the documented format."""
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    reference = {"$ref": "#/components/schemas/Error"}
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            responses.setdefault(
                "4XX",
                {
                    "description": "Client error",
                    "content": {"application/json": {"schema": reference}},
                },
            )
    return result
