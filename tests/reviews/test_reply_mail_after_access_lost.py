"""The owner's reply is mailed to the reviewer who asked only while they may still read the
answer: not once they are deactivated, nor once they left the groups that let them read it
(before, both were mailed the question and the whole reply)."""

from __future__ import annotations

from typing import Any

import pytest
from django.core import mail

from reviewqueue.accounts.models import Role
from reviewqueue.accounts.services import user_create_or_update, user_deactivate
from reviewqueue.audit.services import SYSTEM

pytestmark = pytest.mark.django_db

REPLY = "Internal: the HR handbook's probation figure is confidential, use 90."


@pytest.fixture
def asked(hold: Any, login: Any, make_user: Any, owner: Any, publish: Any) -> tuple[str, Any]:
    """rita, a reviewer in HR, sends olivia an answer citing an HR-only document."""
    rita = make_user("rita", "reviewer", groups=("hr",))
    rita.email = "rita@example.test"
    rita.save()
    publish("hr-handbook", title="HR handbook", principals=["group:hr", "user:olivia"],
            facts=[{"key": "trial_days", "value": 90, "valid_from": "2026-01-01",
                    "valid_until": None, "span": "p1"}],
            passages=[{"span": "p1", "text": "Probation lasts 90 days."}])
    trace = hold(retrieved=[
        {"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"},
        {"cite": "d2", "document_id": "pricing-eu", "revision": "r1", "span": "p1"},
        {"cite": "d3", "document_id": "hr-handbook", "revision": "r1", "span": "p1"}],
        asked_by=["group:hr"])
    response = login(rita).post(f"/answers/{trace}/send-to-owner", {"note": "Which holds?"})
    assert response.status_code == 302, response.content.decode()[:2000]
    return trace, rita


def _reply(login: Any, owner: Any, trace: str, on_commit: Any) -> None:
    mail.outbox.clear()
    with on_commit(execute=True):
        response = login(owner).post(f"/answers/{trace}/owner-reply", {"reply": REPLY})
    assert response.status_code == 302, response.content.decode()[:2000]


def test_a_reviewer_who_left_is_not_mailed_the_reply(
    asked: tuple[str, Any], login: Any, owner: Any, django_capture_on_commit_callbacks: Any
) -> None:
    trace, rita = asked
    user_deactivate(user=rita, actor=SYSTEM)
    _reply(login, owner, trace, django_capture_on_commit_callbacks)
    assert [m.to for m in mail.outbox if REPLY in m.body] == []


def test_a_reviewer_who_may_no_longer_read_the_answer_is_not_mailed_the_reply(
    asked: tuple[str, Any], login: Any, owner: Any, django_capture_on_commit_callbacks: Any
) -> None:
    trace, rita = asked
    # rita moves out of HR: she may no longer open the answer (its page is a 404 to her).
    user_create_or_update(username="rita", role=Role.REVIEWER, groups=[], password=None,
                          actor=SYSTEM, email="rita@example.test")
    assert login(rita).get(f"/answers/{trace}/").status_code == 404
    _reply(login, owner, trace, django_capture_on_commit_callbacks)
    assert [m.to for m in mail.outbox if REPLY in m.body] == []


def test_a_reviewer_who_may_no_longer_open_the_answer_page_is_not_mailed_the_reply(
    asked: tuple[str, Any], login: Any, owner: Any, django_capture_on_commit_callbacks: Any
) -> None:
    from django.contrib.auth.models import Group

    trace, rita = asked
    # rita stays in HR, so she may still read the answer, but no longer reviews: the answer's
    # page, which the mail sends her to, refuses her.
    rita.groups.remove(Group.objects.get(name="reviewer"))
    assert login(rita).get(f"/answers/{trace}/").status_code == 403
    _reply(login, owner, trace, django_capture_on_commit_callbacks)
    assert [m.to for m in mail.outbox if REPLY in m.body] == []
