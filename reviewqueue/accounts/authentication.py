from __future__ import annotations

from functools import cache
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import DEFAULT_DB_ALIAS, connection
from django.db.models import Field
from django.utils import timezone
from rest_framework import authentication, exceptions

from reviewqueue.accounts.models import ApiToken
from reviewqueue.accounts.roles import remember_groups
from reviewqueue.prepared import prepared_cursor


@cache
def _token_sql() -> tuple[str, list[Field[Any, Any]], list[Field[Any, Any]]]:
    user_model = get_user_model()
    membership = user_model.groups.through  # type: ignore[attr-defined]
    q = connection.ops.quote_name
    token_fields = list(ApiToken._meta.concrete_fields)
    user_fields = list(user_model._meta.concrete_fields)
    columns = [f"t.{q(f.column)}" for f in token_fields] + [f"u.{q(f.column)}" for f in user_fields]
    sql = (
        f"SELECT {', '.join(columns)}, ARRAY(SELECT g.{q('name')} FROM {q(Group._meta.db_table)} g"
        f" JOIN {q(membership._meta.db_table)} m ON m.{q('group_id')} = g.{q('id')}"
        f" WHERE m.{q('user_id')} = u.{q('id')})"
        f" FROM {q(ApiToken._meta.db_table)} t"
        f" JOIN {q(user_model._meta.db_table)} u ON u.{q('id')} = t.{q('user_id')}"
        f" WHERE t.{q('digest')} = %s AND t.{q('revoked_at')} IS NULL"
    )
    return sql, token_fields, user_fields


def _loaded(fields: list[Field[Any, Any]], values: tuple[Any, ...]) -> list[Any]:
    return [f.from_db_value(v, None, connection) if hasattr(f, "from_db_value") else v
            for f, v in zip(fields, values, strict=True)]


def _active_token(digest: str) -> ApiToken | None:
    """The unrevoked token with this digest, its user and the user's group names, in one
    plain query: every API request starts here, and the ORM took several times longer to
    build this query than PostgreSQL took to run it."""
    sql, token_fields, user_fields = _token_sql()
    with prepared_cursor() as cursor:
        cursor.execute(sql, [digest])
        row = cursor.fetchone()
    if row is None:
        return None
    n = len(token_fields)
    token = ApiToken.from_db(DEFAULT_DB_ALIAS, [f.attname for f in token_fields],
                             _loaded(token_fields, row[:n]))
    user = get_user_model().from_db(DEFAULT_DB_ALIAS, [f.attname for f in user_fields],
                                     _loaded(user_fields, row[n:-1]))
    remember_groups(user, list(row[-1]))
    token.user = user
    return token


class ApiTokenAuthentication(authentication.BaseAuthentication):
    """`Authorization: Token <key>`; the key is looked up by its SHA-256 digest."""

    keyword = "Token"

    def authenticate(self, request):  # type: ignore[no-untyped-def]
        header = authentication.get_authorization_header(request).split()
        if not header:
            return None
        if header[0].lower() != self.keyword.lower().encode():
            # A key pasted bare, or sent as "Bearer <key>": credentials were given, in a form
            # this API does not read; saying "not provided" would send the caller astray.
            raise exceptions.AuthenticationFailed(
                "Send the key as 'Authorization: Token <key>': this header has no 'Token' "
                "before the key.")
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Authorization header must be 'Token <key>'.")
        try:
            raw = header[1].decode()
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("Invalid token.") from None
        token = _active_token(ApiToken.digest_of(raw))
        if token is None or not token.user.is_active:
            raise exceptions.AuthenticationFailed("Invalid or revoked token.")
        now = timezone.now()
        if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
            # Touch at most once a minute so a busy service does not write on every request.
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return token.user, token

    def authenticate_header(self, request):  # type: ignore[no-untyped-def]
        return self.keyword
