"""Shared pieces of the API: the strict serializer base, body limits and permissions."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import permissions, serializers
from rest_framework.views import APIView

from reviewqueue.accounts.models import ApiToken
from reviewqueue.accounts.roles import has_role
from reviewqueue.api_errors import PayloadTooLarge


class StrictSerializer(serializers.Serializer):
    """Rejects fields it does not declare, at every nesting level, naming each one."""

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({name: ["Unknown field."] for name in unknown})
        return super().to_internal_value(data)


@extend_schema_field({"oneOf": [{"type": "string"}, {"type": "number"}, {"type": "boolean"}]})
class JSONScalarField(serializers.Field):
    """A fact or claim value: a JSON string, number or boolean, kept with its type."""

    default_error_messages = {"invalid": "Must be a string, number or boolean."}

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, (str, bool, int, float)):
            if isinstance(data, str) and len(data) > 2000:
                raise serializers.ValidationError("Ensure this value has at most 2000 characters.")
            return data
        self.fail("invalid")

    def to_representation(self, value: Any) -> Any:
        return value


class BodyLimitedAPIView(APIView):
    """Refuses oversized bodies with 413 before parsing and keeps the raw body for quarantine."""

    def initial(self, request: Any, *args: Any, **kwargs: Any) -> None:
        if request.method in ("POST", "PUT", "PATCH"):
            limit = settings.API_MAX_BODY_BYTES
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            if length > limit:
                head = request._request.read(64 * 1024)
                request._rq_raw_body = head + b"\n[... truncated: %d bytes in all]" % length
                super().initial(request, *args, **kwargs)  # authenticate for the record
                raise PayloadTooLarge(f"Request body is {length} bytes; the limit is {limit}.")
            request._rq_raw_body = request._request.body
        super().initial(request, *args, **kwargs)


def token_scopes(request: Any) -> set[str] | None:
    """A token's scopes, or None for a session (people are limited by role only)."""
    auth = getattr(request, "auth", None)
    if isinstance(auth, ApiToken):
        return set(auth.scopes)
    return None


class RoleAndScope(permissions.BasePermission):
    """The user holds one of the view's `allowed_roles`; a token also holds `required_scope`."""

    message = "Your role or token does not allow this."

    def has_permission(self, request: Any, view: Any) -> bool:
        roles = getattr(view, "allowed_roles", ())
        if not has_role(request.user, *roles):
            return False
        scope = getattr(view, "required_scope", None)
        scopes = token_scopes(request)
        return scopes is None or scope is None or scope in scopes
