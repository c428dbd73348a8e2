"""A row rewritten by hand to hold JSON of a shape ReviewQueue never writes (the revisions a
verdict or decision used turned into plain strings or one object, an answer's first claims
into a number) is a changed row like any other: the verification names it and finishes, and
the answer's timeline still opens, marking it."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from unittest import mock

import pytest

from reviewqueue.audit.models import AuditAlert, AuditEvent, VerificationRun
from tests.audit.conftest import verify

pytestmark = pytest.mark.django_db


def _details(run: Any) -> list[str]:
    return [p["detail"] for p in run.records_problems]


@pytest.mark.parametrize("kind, value", [
    ("verdict", '["pricing"]'),
    ("verdict", '{"document": "x"}'),
    ("decision", '["pricing"]'),
    ("decision", '{"document": "x"}'),
])
def test_revisions_used_rewritten_into_another_shape_fail_the_verification(
    answer_story: Callable[..., Any], tamper: Any, kind: str, value: str
) -> None:
    answer = answer_story("t-story")
    row = getattr(answer, f"{kind}s").order_by("pk").first()
    with tamper() as cursor:
        cursor.execute(f"UPDATE reviews_{kind} SET revisions_used = %s WHERE id = %s",
                       [value, row.pk])

    run = verify()

    assert run.ok  # the chain is intact
    assert [d for d in _details(run) if d.startswith(f"{kind} #{row.pk} of answer t-story: "
                                                     "changed after its audit event recorded "
                                                     "it (")], _details(run)


def test_a_decision_s_revisions_rewritten_into_the_pairs_its_event_holds_fail_it(
    answer_story: Callable[..., Any], tamper: Any
) -> None:
    """Read bare, the rows' own documents and revisions written as the event's pairs would
    equal them: what the gate read (withdrawn, not received) is gone, and nothing says so."""
    decision = answer_story("t-story").decisions.get()
    pairs = AuditEvent.objects.get(action="decision.approve").after["revisions"]
    with tamper() as cursor:
        cursor.execute("UPDATE reviews_decision SET revisions_used = %s WHERE id = %s",
                       [json.dumps(pairs), decision.pk])

    run = verify()

    assert _details(run) == [f"decision #{decision.pk} of answer t-story: changed after its "
                             "audit event recorded it (revisions)"]


def test_an_answer_whose_first_claims_were_rewritten_into_a_number_fails_the_verification(
    answer_story: Callable[..., Any], tamper: Any
) -> None:
    answer = answer_story("t-story")
    with tamper() as cursor:
        cursor.execute("UPDATE reviews_answerversion SET claims = '7' "
                       "WHERE answer_id = %s AND number = 1", [answer.pk])

    run = verify()

    assert [d for d in _details(run) if d.startswith(
        "answer t-story: its body (question, askers, as_of, index release, citations, or first "
        "text and claims) changed after audit event #")], _details(run)


def test_the_timeline_marks_a_verdict_whose_revisions_were_rewritten_into_strings(
    answer_story: Callable[..., Any], tamper: Any, admin_client: Any
) -> None:
    verdict = answer_story("t-story").verdicts.order_by("pk").first()
    with tamper() as cursor:
        cursor.execute("UPDATE reviews_verdict SET revisions_used = '[\"pricing\"]' "
                       "WHERE id = %s", [verdict.pk])

    page = admin_client.get("/audit/answers/t-story/", HTTP_ACCEPT_LANGUAGE="en")

    assert page.status_code == 200
    assert page.content.decode().count('data-against-log="changed"') == 1


def test_a_records_check_that_fails_still_leaves_the_broken_chain_recorded_and_alerted(
    answer_story: Callable[..., Any], tamper: Any
) -> None:
    """Whatever stops the records check (a bug, or a row it cannot read), the chain's own
    finding is stored and raises its alert before the failure is raised."""
    answer_story("t-story")
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET actor = 'user:mallory' "
                       "WHERE action = 'decision.approve'")

    with mock.patch("reviewqueue.reviews.integrity.records_check",
                    side_effect=RuntimeError("records check stopped")), \
            pytest.raises(RuntimeError, match="records check stopped"):
        verify()

    run = VerificationRun.objects.get()
    assert not run.ok and run.problem == "changed"
    assert run.records_checked is None  # not said to be unchanged
    assert run.sources_checked is not None
    assert AuditAlert.objects.filter(run=run, problem="changed").exists()
