"""Rotating a token replaces that token only, with its own name and scopes.

A service may hold two tokens for two integrations (one that publishes, one that only reads).
Rotating used to revoke both and issue one with the newest token's scopes, so the other
integration silently lost its rights.
"""

from __future__ import annotations

from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from reviewqueue.accounts.models import ApiToken
from reviewqueue.accounts.services import token_issue
from reviewqueue.audit.services import SYSTEM


def _two_tokens(service: Any) -> tuple[ApiToken, ApiToken]:
    token_issue(user=service, actor=SYSTEM, name="publisher", scopes=["publish", "read"])
    token_issue(user=service, actor=SYSTEM, name="dashboard", scopes=["read"])
    publisher, dashboard = ApiToken.objects.filter(user=service).order_by("id")
    return publisher, dashboard


def _rotate(*args: str) -> str:
    out = StringIO()
    call_command("rotate_token", "rag-service", *args, stdout=out)
    return out.getvalue().strip()


def test_it_rotates_the_named_token_and_keeps_the_other(service: Any) -> None:
    publisher, dashboard = _two_tokens(service)
    raw = _rotate("--prefix", publisher.prefix)
    new = ApiToken.objects.get(digest=ApiToken.digest_of(raw))
    assert (new.name, new.scopes) == ("publisher", ["publish", "read"])
    publisher.refresh_from_db()
    dashboard.refresh_from_db()
    assert publisher.revoked_at is not None
    assert dashboard.revoked_at is None


def test_it_refuses_to_guess_which_of_two_tokens_to_rotate(service: Any) -> None:
    publisher, dashboard = _two_tokens(service)
    with pytest.raises(CommandError) as raised:
        _rotate()
    message = str(raised.value)
    assert "--prefix" in message
    assert publisher.prefix in message and dashboard.prefix in message
    assert ApiToken.objects.filter(revoked_at__isnull=True).count() == 2  # nothing was lost


def test_an_unknown_prefix_is_refused_by_name(service: Any) -> None:
    _two_tokens(service)
    with pytest.raises(CommandError, match="--prefix: rag-service has no active token "
                                           "starting rq_nothing"):
        _rotate("--prefix", "rq_nothing")
    assert ApiToken.objects.filter(revoked_at__isnull=True).count() == 2


def test_a_single_token_is_rotated_without_a_prefix(service: Any) -> None:
    token_issue(user=service, actor=SYSTEM, name="only", scopes=["submit"])
    raw = _rotate()
    assert ApiToken.objects.filter(revoked_at__isnull=True).get().digest == (
        ApiToken.digest_of(raw))
    assert ApiToken.objects.get(digest=ApiToken.digest_of(raw)).scopes == ["submit"]
