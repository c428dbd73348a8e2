"""Domain errors that services raise and the API/pages turn into responses."""

from __future__ import annotations

from typing import Any


class DomainError(Exception):
    status_code = 400
    code = "invalid"

    def __init__(self, message: str, *, extra: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.extra = extra or {}


class Conflict(DomainError):
    status_code = 409
    code = "conflict"


class NotFound(DomainError):
    status_code = 404
    code = "not_found"


class FieldError(DomainError):
    """Bad input that names the field, e.g. `owner: unknown user`."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.field_message = message
