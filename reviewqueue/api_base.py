"""Shared pieces of the API: the strict serializer base, body limits and permissions."""

from __future__ import annotations

import datetime
import math
import re
import unicodedata
from typing import Any

from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import permissions, serializers
from rest_framework.fields import SkipField, empty
from rest_framework.views import APIView

from gating import CITE_ID, MAX_INT, MIN_INT
from reviewqueue.accounts.models import ApiToken
from reviewqueue.accounts.principals import is_valid_principal
from reviewqueue.accounts.roles import has_role
from reviewqueue.api_errors import PayloadTooLarge, SentFieldName, UntypedBody
from reviewqueue.storable import NOT_NFC, NOT_STORABLE, lookalike_problem

NOT_A_STRING = serializers.CharField.default_error_messages["invalid"]
NOT_A_WHOLE_NUMBER = serializers.IntegerField.default_error_messages["invalid"]
NOT_TRUE_OR_FALSE = "Must be true or false."


class PartlyValid(serializers.ValidationError):
    """A validation error that keeps what did validate: a serializer's good fields, or a
    list's items (each one's good parts, None for an item with none), so that checks across
    fields can still be made on them."""

    def __init__(self, detail: Any, valid: Any) -> None:
        super().__init__(detail)
        self.valid = valid


def merge_errors(errors: dict[Any, Any], more: dict[Any, Any]) -> dict[Any, Any]:
    """`more` added into `errors` (DRF's nested error detail), list items in order."""
    for key, detail in more.items():
        mine = errors.get(key)
        if isinstance(mine, dict) and isinstance(detail, dict):
            merged = merge_errors(dict(mine), detail)
            errors[key] = dict(sorted(merged.items())) if all(
                isinstance(k, int) for k in merged) else merged
        elif isinstance(mine, list) and isinstance(detail, list):
            errors[key] = [*mine, *detail]
        else:
            errors.setdefault(key, detail)
    return errors


def _type_error(field: serializers.Field, value: Any) -> str | None:
    """Why a JSON value is not of the type `field` takes, or None (None and a missing value
    are left to the field)."""
    if value is None or value is empty:
        return None
    if isinstance(field, serializers.CharField) and not isinstance(value, str):
        return NOT_A_STRING
    if isinstance(field, serializers.IntegerField) and type(value) is not int:
        # JSON says 5, not "5" or 5.0 or true.
        return NOT_A_WHOLE_NUMBER
    if isinstance(field, serializers.BooleanField) and type(value) is not bool:
        # JSON says true, not "true" or 1.
        return NOT_TRUE_OR_FALSE
    return None


def _validated(field: serializers.Field, value: Any) -> Any:
    """`field.run_validation(value)`, strict about JSON types, and a list item by item: every
    bad item is named at once, with the list's own limits (its length), and the good ones are
    kept (PartlyValid)."""
    problem = _type_error(field, value)
    if problem is not None:
        raise serializers.ValidationError([problem])
    if not (isinstance(field, serializers.ListField) and isinstance(value, list) and value):
        return field.run_validation(value)
    items: list[Any] = []
    errors: dict[int, Any] = {}
    for index, item in enumerate(value):
        try:
            items.append(_validated(field.child, item))
        except serializers.ValidationError as exc:
            errors[index] = exc.detail
            items.append(exc.valid if isinstance(exc, PartlyValid) else None)
    try:
        field.run_validators(items)  # the list's own limits (length)
    except serializers.ValidationError as exc:
        if not errors:
            raise
        # Under DRF's key for errors of a whole object, which names the list itself: the
        # caller learns it is too long in the same round as what is wrong in its items.
        errors = {"non_field_errors": exc.detail, **errors}
    if errors:
        raise PartlyValid(errors, items)
    return items


def repeats(values: list[Any]) -> dict[int, Any]:
    """Index and value of each value an earlier one already had; None (a value that did not
    validate) is never a repeat."""
    seen: set[Any] = set()
    found: dict[int, Any] = {}
    for index, value in enumerate(values):
        if value in seen:
            found[index] = value
        elif value is not None:
            seen.add(value)
    return found


# StrictSerializer rejects fields it does not declare, at every nesting level, naming each one,
# a value that is not a string where a string belongs (DRF's CharField would take 5 as "5"),
# one that is not a whole number where one belongs (its IntegerField would take "5") and one
# that is not true or false where a boolean belongs (its BooleanField would take "yes").
#
# Every error is found in one go, so that the caller fixes the body in one round: each bad
# field and list item is named, and `cross_field_errors` runs on what did validate.
# (A comment, not a docstring: the OpenAPI schema would give it as the description of every
# request body whose serializer does not say one of its own.)
class StrictSerializer(serializers.Serializer):

    def cross_field_errors(self, attrs: dict[str, Any]) -> dict[str, Any]:
        """Errors across fields, as DRF's error detail ({"facts": {2: {"span": [...]}}}).

        `attrs` holds the fields that validated, and a list with bad items as a list of each
        item's good parts (None for an item with none): a check skips what is missing, and
        says nothing a bad field could explain."""
        return {}

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, dict):
            return super().to_internal_value(data)
        errors: dict[str, Any] = {SentFieldName(name): ["Unknown field."]
                                  for name in sorted(set(data) - set(self.fields))}
        valid: dict[str, Any] = {}
        for field in self._writable_fields:
            try:
                value = _validated(field, field.get_value(data))
                check = getattr(self, f"validate_{field.field_name}", None)
                if check is not None:
                    value = check(value)
            except PartlyValid as exc:
                errors[field.field_name], value = exc.detail, exc.valid
            except serializers.ValidationError as exc:
                errors[field.field_name] = exc.detail
                continue
            except SkipField:
                continue
            self.set_value(valid, field.source_attrs, value)
        merge_errors(errors, self.cross_field_errors(valid))
        if errors:
            raise PartlyValid(errors, valid)
        return valid


class DayField(serializers.DateField):
    """A day written YYYY-MM-DD and nothing else: Python's ISO parser would also take
    2026-W43-2 and 20261020, which the fast intake path and the documentation do not."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(input_formats=["iso-8601"], **kwargs)

    def to_internal_value(self, value: Any) -> Any:
        if isinstance(value, str) and not _DAY.fullmatch(value):
            self.fail("invalid", format="YYYY-MM-DD")
        if isinstance(value, str):
            try:
                datetime.date.fromisoformat(value)
            except ValueError:
                raise serializers.ValidationError(
                    f"{value} is written YYYY-MM-DD but is no day of the calendar.") from None
        return super().to_internal_value(value)


_DAY = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)


class InstantField(serializers.DateTimeField):
    """A moment written as RFC 3339 says (a day, a time, and its offset from UTC) and nothing
    else: Python's ISO parser would also take a bare day, a week date, the compact form and a
    time with no offset, which it would read in this server's time zone. Written back in UTC
    with a "Z" whatever TIME_ZONE is, as `reviewqueue.instants.instant_text` writes one."""

    FORMAT = "YYYY-MM-DDThh:mm[:ss[.ffffff]] then Z or +hh:mm / -hh:mm"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(default_timezone=datetime.UTC, **kwargs)

    def to_internal_value(self, value: Any) -> Any:
        if isinstance(value, str) and not _INSTANT.fullmatch(value):
            raise serializers.ValidationError(f"Give a date and time with its offset from UTC: "
                                              f"{self.FORMAT}.")
        if isinstance(value, str):
            # Written right, but 30 February, hour 24 or an offset of a day: DRF would say the
            # format is wrong and list the very format it was written in.
            try:
                datetime.datetime.fromisoformat(value.upper())
            except ValueError:
                raise serializers.ValidationError(
                    f"{value} is written as a date and time but is no moment of the "
                    "calendar.") from None
        return super().to_internal_value(value)


_INSTANT = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?"
                      r"(?:[Zz]|[+-]\d{2}:\d{2})", re.ASCII)


class IdField(serializers.CharField):
    """An id (document, revision, span, cite, trace): taken exactly as sent. One with spaces
    around it is refused, not trimmed: trimmed on one side and kept on the other, the same id
    would name two things."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(trim_whitespace=False, **kwargs)

    def to_internal_value(self, data: Any) -> str:
        value: str = super().to_internal_value(data)
        if value != value.strip():
            raise serializers.ValidationError("Must not start or end with whitespace.")
        return value


def path_id_problem(value: str) -> str | None:
    """Why an id that is part of an address (a document's, a revision's) could never be sent
    there, or None: a slash would split the address, and browsers and HTTP clients drop the
    segments . and .. before sending it. The fast intake path asks this too."""
    if "/" in value:
        return "Must not contain /: this id is part of an address."
    if value in (".", ".."):
        return f"{value!r} cannot be part of an address; use another id."
    return lookalike_problem(value)


CITE_PROBLEM = ("Must be letters A-Z or a-z, digits, or _ . : - only: the answer's "
                "[markers] can name no other id.")


@extend_schema_field({"type": "string", "minLength": 1, "maxLength": 200,
                      "pattern": f"^{CITE_ID.pattern}$"})
class CiteField(IdField):
    """An evidence id, as the answer's `[markers]` name it."""

    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data)
        if not CITE_ID.fullmatch(value):
            raise serializers.ValidationError(CITE_PROBLEM)
        return value


class SpanField(IdField):
    """A passage's span id, as a fact and a retrieved item name it."""

    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data)
        if problem := lookalike_problem(value):
            raise serializers.ValidationError(problem)
        return value


class NameField(serializers.CharField):
    """A fact's or a claim's key or subject, or an answer's index release: the gate and the
    queue's filters match them character for character.

    A name the serializer's context lists under this field's name in `names_as_they_came` is
    taken as it is: an edit sends back every claim, and a claim's key stored before such names
    were refused (a tab in it) is the answer's own, not a new name."""

    def __init__(self, *, names: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.names = names

    def to_internal_value(self, data: Any) -> str:
        value: str = super().to_internal_value(data)
        if value in self.context.get("names_as_they_came", {}).get(self.field_name, ()):
            return value
        if problem := lookalike_problem(value, self.names):
            raise serializers.ValidationError(problem)
        return value


class PathIdField(IdField):
    """An id that names something in an address: a document or a revision."""

    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data)
        if problem := path_id_problem(value):
            raise serializers.ValidationError(problem)
        return value


class PrincipalField(serializers.CharField):
    """Who may read: user:<name>, group:<name> or *."""

    def run_validation(self, data: Any = empty) -> Any:
        value = super().run_validation(data)  # a string of at most max_length, not blank
        if not unicodedata.is_normalized("NFC", value):
            # "user:café" with e and an accent reads as the user café, and never matches them.
            raise serializers.ValidationError(NOT_NFC)
        if not is_valid_principal(value):
            kind, _, name = value.partition(":")
            spaced = f" (no spaces around the name: {kind}:{name.strip()})" \
                if name.strip() and name != name.strip() else ""
            raise serializers.ValidationError(
                f"Not a principal: {value!r}; use user:<name>, group:<name> or *{spaced}.")
        return value


MAX_SCALAR_CHARS = 2000
# From here on a float is written with an exponent, which PostgreSQL reads as a whole number.
FLOAT_LIMIT = 1e16


def scalar_problem(value: Any) -> str | None:
    """Why a fact or claim value cannot be stored and gated, or None when it can. The fast
    intake path asks this too, so that both paths keep the same rules."""
    if isinstance(value, str):
        if len(value) > MAX_SCALAR_CHARS:
            return f"Ensure this value has at most {MAX_SCALAR_CHARS} characters."
        if NOT_STORABLE.search(value):
            return "NUL characters and lone surrogates are not allowed."
        return None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        # The gate's own limit: a wider integer would pass here and fail every gate run.
        return None if MIN_INT <= value <= MAX_INT else "Integer outside the 64-bit range."
    if isinstance(value, float):
        # PostgreSQL keeps a JSON number as a decimal: 1e16 comes back as the integer
        # 10000000000000000 and -0.0 as 0.0. Either would then differ from what was gated
        # (another type, another fingerprint), so neither is taken.
        if not math.isfinite(value):
            return "Must be a finite number."
        if abs(value) >= FLOAT_LIMIT:
            return ("A number with a fraction or an exponent must be below 1e16 in size: "
                    "send a whole number this large as an integer.")
        if value == 0 and math.copysign(1, value) < 0:
            return "Negative zero is not kept as such: send 0."
        return None
    return "Must be a string, number or boolean."


@extend_schema_field({"oneOf": [{"type": "string", "maxLength": MAX_SCALAR_CHARS},
                                {"type": "number"}, {"type": "boolean"}]})
class JSONScalarField(serializers.Field):
    """A fact or claim value: a JSON string, number or boolean, kept with its type."""

    def to_internal_value(self, data: Any) -> Any:
        problem = scalar_problem(data)
        if problem is not None:
            raise serializers.ValidationError(problem)
        return data

    def to_representation(self, value: Any) -> Any:
        return value


class BodyLimitedAPIView(APIView):
    # Refuses oversized bodies with 413 before parsing and keeps the raw body for quarantine.
    #
    # A body sent with no Content-Type is refused with a 415 (DRF would read it as `{}`). One
    # sent where the operation reads none (a claim, a withdrawal) is refused with a 400 naming
    # `body`, unless it is `{}`: whatever it asked for would otherwise be silently ignored.
    #
    # (A comment, not a docstring: the OpenAPI schema would give it, inherited, as the
    # description of every operation that has none of its own.)

    # Methods whose handler reads a body.
    body_methods: frozenset[str] = frozenset({"POST", "PUT", "PATCH"})

    def initial(self, request: Any, *args: Any, **kwargs: Any) -> None:
        if request.method in ("POST", "PUT", "PATCH", "DELETE"):
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
        if not getattr(request, "_rq_raw_body", b"") or not handles(self, request.method):
            return  # a method the operation lacks is DRF's 405, with a body or without
        if not request.content_type:
            raise UntypedBody
        # Parsed as any body is (not JSON: 415, bad JSON: 400); only `{}` asks for nothing.
        if request.method not in self.body_methods and request.data != {}:
            raise serializers.ValidationError(
                {"body": ["This operation takes no body: send none, or {}."]})


def handles(view: Any, method: str) -> bool:
    """Whether the view answers `method` (a handler DRF would call), rather than with 405."""
    return method.lower() in view.http_method_names and hasattr(view, method.lower())


def token_scopes(request: Any) -> set[str] | None:
    """A token's scopes, or None for a session (people are limited by role only)."""
    auth = getattr(request, "auth", None)
    if isinstance(auth, ApiToken):
        return set(auth.scopes)
    return None


class RoleAndScope(permissions.BasePermission):
    """The user holds one of the view's `allowed_roles`; a token also holds `required_scope`
    (one scope, or a tuple of which any will do). The 403 says which of the two is missing."""

    message = "Your role does not allow this."

    def has_permission(self, request: Any, view: Any) -> bool:
        if not handles(view, request.method) and request.user.is_authenticated:
            # No role or scope may use a method the operation lacks, and the schema lists
            # every operation: whoever signed in gets DRF's 405 with its Allow header, not a
            # 403 hinting that another role or scope would do (anonymous callers still 401).
            return True
        roles = getattr(view, "allowed_roles", ())
        if not has_role(request.user, *roles):
            return False
        required = getattr(view, "required_scope", None)
        scopes = token_scopes(request)
        if scopes is None or required is None:
            return True
        wanted = required if isinstance(required, tuple) else (required,)
        if scopes.intersection(wanted):
            return True
        # A fresh instance per request (DRF's get_permissions): the message is this request's.
        self.message = "This token lacks the {} scope.".format(
            " or the ".join(f"`{scope}`" for scope in wanted))
        return False
