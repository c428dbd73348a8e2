"""The responses every API operation can give, added to the OpenAPI schema in one place.

Each view documents what its own work can answer (201, 400 naming the field, 409...). Whatever
the view, a request can also be refused before it runs: no valid token or session (401), a
role or token scope that may not call it (403), too many requests (429), an answer, job or
document one may not read or that does not exist (404, for paths naming one), an address or
query parameter that is not UTF-8 or holds a NUL (400), and a body that is invalid, too large
or not JSON (400, 413, 415; a POST or DELETE that reads none refuses one with the same
codes). Those share the API's error body.
"""

from __future__ import annotations

from typing import Any

ERROR = {
    "type": "object",
    "properties": {
        "error": {"type": "string", "description": "A short code, e.g. invalid, not_found"},
        "detail": {"type": "string"},
        "errors": {"type": "array", "items": {"$ref": "#/components/schemas/ErrorItemOut"}},
    },
    "required": ["error", "detail", "errors"],
}

COMMON = {
    "400": "The path or a query parameter is not valid UTF-8 or holds a NUL character "
           "(`path`, or the parameter's name, in errors)",
    "401": "No valid token (Authorization: Token ...) or session",
    "403": "Your role or the token's scopes may not call this",
    "429": "Too many requests; Retry-After says when to try again",
}
NAMED = {"404": "No such object, or one you may not read"}
# An operation that reads a body can also refuse it as a body.
WITH_BODY = {
    "400": "A field is invalid (each is named in errors), or the body is not valid JSON",
    "413": "The body is larger than the API takes",
    "415": "The body was sent with no Content-Type, or with one the operation does not read "
           "(it reads application/json; `body` in errors)",
}
# A POST or DELETE that reads no body refuses one rather than ignore what it says (its size
# is checked first, as any body's is).
WITHOUT_BODY = {"400": "A body other than {} was sent (`body` in errors): this operation "
                       "takes none",
                "413": WITH_BODY["413"],
                "415": "A body was sent with no Content-Type, or with one other than "
                       "application/json (`body` in errors)"}


def common_responses(result: dict[str, Any], generator: Any, request: Any, public: bool
                     ) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: add the refusals above, with the error body, to
    every operation that does not document them itself, and give every documented 4xx that
    body."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas.setdefault("Error", ERROR)
    # Every request body is a StrictSerializer: a field it does not declare is refused.
    for name, component in schemas.items():
        if name.endswith("Request") and component.get("type") == "object":
            component["additionalProperties"] = False
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for path, operations in result.get("paths", {}).items():
        for method, operation in operations.items():
            responses = operation.setdefault("responses", {})
            added = {**COMMON, **(NAMED if "{" in path else {})}
            if "requestBody" in operation:
                added.update(WITH_BODY)
            elif method in ("post", "delete"):
                added.update(WITHOUT_BODY)
            for status, description in added.items():
                responses.setdefault(status, {"description": description, "content": error})
            if responses["400"]["description"] != COMMON["400"]:
                # Its own 400 (a field, a body): an address can be refused the same way.
                responses["400"]["description"] += ("; or the path or a query parameter is not "
                                                    "valid UTF-8 or holds a NUL character")
            for status, response in responses.items():
                # A refusal a view documents by its description alone has the same body.
                if status.startswith("4") and "content" not in response:
                    response["content"] = error
    return result
