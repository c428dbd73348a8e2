"""Writes for accounts: users with roles, API tokens."""

from __future__ import annotations

import secrets
from collections.abc import Collection
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser, Group
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Field, Model
from django.utils import timezone

from reviewqueue.accounts.models import ApiToken, LanguagePreference, Role
from reviewqueue.audit.services import Actor, audit_record
from reviewqueue.errors import FieldError

DEFAULT_SCOPES: dict[str, list[str]] = {
    Role.SERVICE: [ApiToken.Scope.PUBLISH, ApiToken.Scope.SUBMIT, ApiToken.Scope.READ],
    Role.REVIEWER: [ApiToken.Scope.READ, ApiToken.Scope.REVIEW],
    Role.OWNER: [ApiToken.Scope.READ],
    Role.ADMIN: [ApiToken.Scope.READ, ApiToken.Scope.REVIEW],
}


def ensure_role_groups() -> None:
    for role in Role:
        Group.objects.get_or_create(name=role.value)


@transaction.atomic
def user_create_or_update(
    *,
    username: str,
    role: Role,
    groups: list[str],
    password: str | None,
    actor: Actor,
    email: str = "",
) -> AbstractUser:
    """Create the user (or update an existing one) with exactly one role plus extra groups,
    and the `email` given (an existing user's stays as it is when none is).

    Roles are groups too, so an extra group named after a role would grant that role: it is
    refused (FieldError on `groups`) and nothing is changed. So is a new user's name, a group
    or an email that Django's own rules for the field refuse (empty, too long, not a username
    or an address), before anything is saved.
    """
    if roles := sorted(set(groups) & {r.value for r in Role}):
        raise FieldError("groups", f"{', '.join(roles)} is a role, not a group; give a user "
                                   "one role with --role")
    user_model = get_user_model()
    if not user_model.objects.filter(username=username).exists():
        # A name already an account's is kept as it is: it may only be looked up here.
        _check_field(user_model, "username", username, field="username")
    for name in groups:
        _check_field(Group, "name", name, field="groups", quoted=True)
    _check_field(user_model, "email", email, field="email")
    ensure_role_groups()
    user, created = user_model.objects.get_or_create(username=username, defaults={"email": email})
    before_groups = sorted(user.groups.values_list("name", flat=True)) if not created else []
    # An owner made without an address gets no conflict or hand-off mail: this gives one.
    had_email = user.email
    if email and not created:
        user.email = email
    if password:
        user.set_password(password)
    elif created:
        user.set_unusable_password()
    user.is_staff = role == Role.ADMIN
    user.is_superuser = role == Role.ADMIN
    user.save()
    wanted = [role.value, *groups]
    group_objects = [Group.objects.get_or_create(name=name)[0] for name in wanted]
    user.groups.set(group_objects)
    audit_record(
        actor=actor,
        action="user.role_changed" if not created else "user.created",
        object_type="user",
        object_id=username,
        before={"groups": before_groups},
        after={"groups": sorted(wanted)},
    )
    if password and not created:
        user_password_changed(user=user, actor=actor)
    if user.email != had_email:
        # Whether there was an address, never the address: once in the append-only log, it
        # could never be taken out again.
        audit_record(actor=actor, action="user.email_changed", object_type="user",
                     object_id=username, before={"has_email": bool(had_email)},
                     after={"has_email": True})
    return user


def _check_field(model: type[Model], name: str, value: str, *, field: str,
                 quoted: bool = False) -> None:
    """Refuse `value` for the model field `name` as Django's own rules for it do (its
    validators, its max_length, blank or not): FieldError on `field`, with Django's messages,
    after the value itself when `quoted` (one of several given)."""
    field_of_model: Field[Any, Any] = model._meta.get_field(name)  # type: ignore[assignment]
    try:
        field_of_model.clean(value, None)
    except ValidationError as exc:
        said = " ".join(exc.messages)
        raise FieldError(field, f"{value!r}: {said}" if quoted else said) from None


def role_scopes(user: AbstractUser) -> list[str]:
    """The scopes the user's roles give a token, sorted."""
    roles = set(user.groups.values_list("name", flat=True))
    return sorted({s for role, ss in DEFAULT_SCOPES.items() if role in roles for s in ss})


@transaction.atomic
def token_issue(
    *, user: AbstractUser, actor: Actor, name: str = "", scopes: list[str] | None = None
) -> str:
    """Create a token and return it in clear: the only time it is ever shown. A `name` longer
    than a token's name may be is refused (FieldError on `name`)."""
    _check_field(ApiToken, "name", name, field="name")
    if scopes is None:
        scopes = role_scopes(user)
    raw = "rq_" + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user, name=name, prefix=raw[:10], digest=ApiToken.digest_of(raw), scopes=list(scopes)
    )
    audit_record(
        actor=actor,
        action="token.issued",
        object_type="api_token",
        object_id=token.pk,
        # The digest the token is known by: a row whose digest was swapped for another
        # token's, letting someone else's token in under this one's name, is then found.
        after={"user": user.username, "prefix": token.prefix, "scopes": list(scopes),
               "token_sha256": token.digest},
    )
    return raw


@transaction.atomic
def tokens_revoke(
    *,
    actor: Actor,
    prefix: str | None = None,
    user: AbstractUser | None = None,
    token_ids: Collection[int] | None = None,
) -> int:
    """Revoke one token (by its prefix), the tokens with the given ids, or every active token
    of a user. Returns how many were revoked; tokens already revoked are left as they are."""
    tokens = ApiToken.objects.select_for_update().filter(revoked_at__isnull=True)
    if prefix:
        tokens = tokens.filter(prefix=prefix)
    elif token_ids is not None:
        # By id, not by prefix: a prefix is short and not unique, so two tokens may share one.
        tokens = tokens.filter(pk__in=list(token_ids))
    elif user is not None:
        tokens = tokens.filter(user=user)
    else:
        raise ValueError("name a token prefix, token ids or a user")
    revoked = list(tokens)
    now = timezone.now()
    for token in revoked:
        token.revoked_at = now
        token.save(update_fields=["revoked_at"])
        audit_record(
            actor=actor,
            action="token.revoked",
            object_type="api_token",
            object_id=token.pk,
            before={"revoked": False},
            after={"revoked": True, "prefix": token.prefix, "user": token.user.get_username()},
        )
    return len(revoked)


@transaction.atomic
def token_rotate(*, user: AbstractUser, actor: Actor, prefix: str | None = None) -> str:
    """Replace one of the user's active tokens with a new one of the same name and scopes, and
    revoke it; the user's other tokens are left alone. The token is named by `prefix`, which
    may be left out when the user has a single active token (with none, a token with the
    role's default scopes is issued). Refused, naming the field, when the prefix matches no
    active token or when several tokens could be meant: rotating the wrong one would cut off
    an integration without a word."""
    active = ApiToken.objects.select_for_update().filter(user=user, revoked_at__isnull=True)
    if prefix:
        active = active.filter(prefix=prefix)
    tokens = list(active.order_by("id"))
    who = user.get_username()
    if prefix and not tokens:
        raise FieldError("prefix", f"{who} has no active token starting {prefix}")
    if len(tokens) > 1:
        prefixes = ", ".join(f"{t.prefix}… ({t.name or 'unnamed'})" for t in tokens)
        raise FieldError("prefix", f"{who} has {len(tokens)} active tokens ({prefixes}): "
                                   "name the one to rotate by its prefix")
    if not tokens:
        return token_issue(user=user, actor=actor, name="rotated")
    return token_replace(token_id=tokens[0].pk, actor=actor)


@transaction.atomic
def token_replace(*, token_id: int, actor: Actor) -> str:
    """Revoke one active token and issue its successor, for the same user with the same name
    and scopes; returns the successor in clear. Refused, naming the field, for a token that no
    longer works: one already revoked, or one of a deactivated account."""
    old = (ApiToken.objects.select_for_update(of=("self",)).select_related("user")
           .filter(pk=token_id).first())
    if old is None or old.revoked_at is not None:
        raise FieldError("token", "it has been revoked; issue a new one with manage.py "
                                  "issue_token")
    if not old.user.is_active:
        raise FieldError("token", f"{old.user.get_username()} is deactivated; reactivate the "
                                  "account first")
    tokens_revoke(actor=actor, token_ids=[old.pk])
    return token_issue(user=old.user, actor=actor, name=old.name, scopes=list(old.scopes))


@transaction.atomic
def user_deactivate(*, user: AbstractUser, actor: Actor) -> None:
    """Deactivate a user: their sessions stop working at once (the auth backend refuses
    inactive users) and their tokens are revoked."""
    from django.contrib.sessions.models import Session

    _set_active(user, False, actor=actor)
    tokens_revoke(actor=actor, user=user)
    # Also drop their stored sessions, so nothing of theirs lingers in the session table.
    user_id = str(user.pk)
    for session in Session.objects.filter(expire_date__gt=timezone.now()).iterator():
        if session.get_decoded().get("_auth_user_id") == user_id:
            session.delete()


@transaction.atomic
def user_reactivate(*, user: AbstractUser, actor: Actor) -> bool:
    """Let a deactivated user sign in again. Their old tokens stay revoked: a new one is
    issued on purpose (`issue_token`), never brought back with the account. Returns whether
    the user was inactive."""
    return _set_active(user, True, actor=actor)


def _set_active(user: AbstractUser, active: bool, *, actor: Actor) -> bool:
    """Switch the account on or off and record it; nothing, and no event, when it already
    is. A conditional update, so two admins doing it at once record it once."""
    if not type(user).objects.filter(pk=user.pk, is_active=not active).update(is_active=active):
        return False
    user.is_active = active
    audit_record(
        actor=actor,
        action="user.reactivated" if active else "user.deactivated",
        object_type="user",
        object_id=user.get_username(),
        before={"active": not active},
        after={"active": active},
    )
    return True


@transaction.atomic
def user_password_set(*, user: AbstractUser, password: str, actor: Actor) -> None:
    """Replace the password of a user who already signs in with one.

    Giving a password to an account that has none (a service that only uses tokens), or taking
    it away, changes how that account can sign in: that stays with `adduser --password`.
    The event records only that the password changed, never the password or its hash.
    """
    if not user.has_usable_password():
        raise ValueError(f"{user.get_username()} has no password to change")
    user.set_password(password)
    user.save(update_fields=["password"])
    user_password_changed(user=user, actor=actor)


@transaction.atomic
def user_password_changed(*, user: AbstractUser, actor: Actor) -> None:
    """Record that the password changed (never the password or its hash): also for a change
    Django's own form saved, an admin's own from the admin header."""
    audit_record(actor=actor, action="user.password_changed", object_type="user",
                 object_id=user.get_username())


def language_remember(*, user: AbstractUser, language: str) -> None:
    """Keep `language` as the one `user` is mailed in, when it is one ReviewQueue speaks."""
    if user.is_authenticated and language in dict(settings.LANGUAGES):
        LanguagePreference.objects.update_or_create(user=user, defaults={"language": language})


def languages_of(users: Collection[AbstractUser]) -> dict[int, str]:
    """By user id, the language mail to each of `users` is written in (see language_of). One
    query."""
    chosen = dict(LanguagePreference.objects.filter(user__in=[u.pk for u in users])
                  .values_list("user_id", "language"))
    return {u.pk: chosen.get(u.pk, str(settings.LANGUAGE_CODE)) for u in users}


def language_of(user: AbstractUser) -> str:
    """The language mail to `user` is written in: the one they last chose or signed in with,
    else the site's. Read with `select_related("language_preference")`, it costs no query."""
    try:
        return user.language_preference.language  # type: ignore[attr-defined,no-any-return]
    except LanguagePreference.DoesNotExist:
        return str(settings.LANGUAGE_CODE)
