"""A verification checks every API token against the events that issued and revoked it: a
token brought back to life in the table, widened, swapped for another token, or minted by hand
with no event, fails it, though the chain itself is intact."""

from __future__ import annotations

import re
from collections.abc import Callable
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from tests.audit.conftest import verify

pytestmark = pytest.mark.django_db

CHAIN_INTACT = ("Audit check FAILED: the chain is intact, but stored sources or records differ "
                "from it.")


@pytest.fixture
def tokens(make_user: Callable[..., Any]) -> tuple[Any, Any]:
    """A service's working token, and one of an integration that was revoked."""
    from reviewqueue.accounts.models import ApiToken
    from reviewqueue.accounts.services import token_issue, tokens_revoke
    from reviewqueue.audit.services import SYSTEM

    service = make_user("svc", "service")
    token_issue(user=service, actor=SYSTEM, name="ingest")
    token_issue(user=service, actor=SYSTEM, name="old integration")
    working, old = ApiToken.objects.order_by("pk")
    tokens_revoke(actor=SYSTEM, token_ids=[old.pk])
    return working, old


def _refused() -> str:
    with pytest.raises(CommandError) as refused:
        call_command("verify_audit", stdout=StringIO())
    return str(refused.value)


def test_untouched_tokens_match_their_events(tokens: Any, admin_client: Any) -> None:
    out = StringIO()
    call_command("verify_audit", stdout=out)
    assert ("0 verdicts and 0 decisions match the audit events that recorded them; 2 API "
            "tokens match the audit events that issued and revoked them.") in out.getvalue()
    page = admin_client.get("/audit/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "2 API tokens match the audit events that issued and revoked them." in page


@pytest.mark.parametrize(("which", "change", "said"), [
    # A revoked integration's token works again.
    ("old", "UPDATE accounts_apitoken SET revoked_at = NULL WHERE id = %s",
     r"revoked by audit event #\d+, and working again"),
    ("working", "UPDATE accounts_apitoken SET revoked_at = now() WHERE id = %s",
     "revoked, and no audit event revoked it"),
    # A token that could only submit may now review and publish too.
    ("working", "UPDATE accounts_apitoken SET scopes = '[\"publish\", \"submit\", \"read\", "
                "\"review\"]' WHERE id = %s", "scopes"),
    # Someone else's token let in under this one's name.
    ("working", "UPDATE accounts_apitoken SET digest = repeat('a', 64) WHERE id = %s",
     "the token itself"),
    ("working", "UPDATE accounts_apitoken SET user_id = (SELECT id FROM auth_user WHERE "
                "username = 'ada') WHERE id = %s", "user"),
])
def test_a_token_changed_in_the_table_fails_the_verification(
    which: str, change: str, said: str, tokens: Any, tamper: Any, admin_client: Any
) -> None:
    token = dict(zip(("working", "old"), tokens, strict=True))[which]
    with tamper() as cursor:
        cursor.execute(change, [token.pk])

    refused = _refused()

    assert refused.startswith(CHAIN_INTACT)
    assert "Records CHANGED: 1 problem in 0 answers, 0 verdicts, 0 decisions and 2 API " \
        "tokens:" in refused
    assert re.search(rf"API token #{token.pk} \({token.prefix}…\): changed after its audit "
                     rf"events recorded it \({said}\)", refused), refused
    page = admin_client.get("/audit/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Answers, verdicts, decisions or API tokens changed." in page
    problems = page[page.index('data-testid="records-problems"'):]
    assert f'href="/admin/accounts/apitoken/{token.pk}/change/">API token #{token.pk}</a>: ' \
        "changed after its audit event recorded it (" in problems


def test_a_token_minted_by_hand_is_vouched_for_by_nothing(tokens: Any, tamper: Any) -> None:
    working, _old = tokens
    with tamper() as cursor:
        cursor.execute(
            "INSERT INTO accounts_apitoken (user_id, name, prefix, digest, scopes, created_at) "
            "SELECT user_id, 'mine', 'rq_forged', repeat('b', 64), scopes, now() "
            "FROM accounts_apitoken WHERE id = %s RETURNING id", [working.pk])
        [forged] = cursor.fetchone()

    refused = _refused()

    assert (f"API token #{forged} (rq_forged…): no audit event issued it (not made through "
            "ReviewQueue, or its event was taken out of the log)") in refused


def test_a_token_whose_issue_event_was_edited_is_left_to_the_chain_check(
    tokens: Any, tamper: Any
) -> None:
    """The event, not the row, is what changed: the chain check reports it."""
    from reviewqueue.audit.models import AuditEvent

    working, _old = tokens
    issued = AuditEvent.objects.get(action="token.issued", object_id=str(working.pk))
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET after = jsonb_set(after, '{scopes}', "
                       "'[]') WHERE seq = %s", [issued.seq])
    run = verify()
    assert not run.ok
    assert run.records_ok, run.records_problems


def test_a_token_whose_issue_event_was_edited_to_name_another_token_is_left_to_it(
    tokens: Any, tamper: Any
) -> None:
    """The token is not said to be minted by hand, nor one that never existed deleted: only
    the event changed, and the chain check reports it."""
    from reviewqueue.audit.models import AuditEvent

    working, _old = tokens
    issued = AuditEvent.objects.get(action="token.issued", object_id=str(working.pk))
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET object_id = '999999' WHERE seq = %s",
                       [issued.seq])
    run = verify()
    assert not run.ok
    assert run.records_ok, run.records_problems


@pytest.mark.parametrize("object_id", ["\u00b2", "12345678901234567890123"])
def test_a_token_event_edited_to_name_no_number_is_left_to_the_chain_check(
    tokens: Any, tamper: Any, object_id: str
) -> None:
    """A superscript two is a digit to str.isdigit but no number, and 23 digits overflow the
    table's id: the verification still finishes and reports the edited event."""
    from reviewqueue.audit.models import AuditEvent

    working, _old = tokens
    issued = AuditEvent.objects.get(action="token.issued", object_id=str(working.pk))
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET object_id = %s WHERE seq = %s",
                       [object_id, issued.seq])
    run = verify()
    assert not run.ok
    assert f"Event #{issued.seq}" in run.detail
    assert run.records_ok, run.records_problems
