"""A conflict's mail goes out whatever its key or subject holds. Keys and subjects with a line
break are refused now, but rows stored before may hold one, which a mail header may not carry
(the mail would not go out): it becomes a space in the mail's subject. Text that may still hold
line breaks (a document's title, a value) never reaches a mail's headers."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.core import mail
from django.utils import timezone

from reviewqueue.audit.services import SYSTEM
from reviewqueue.sources.services import FactInput, PassageInput, RevisionInput, revision_publish
from tests.conftest import revision_body
from tests.reviews.conftest import fact

pytestmark = pytest.mark.django_db


def stored(document: str, owner: str, key: str, subject: str, value: int) -> None:
    """A revision as the API took it until keys and subjects with line breaks were refused."""
    revision_publish(document_key=document, revision="r1", actor=SYSTEM, data=RevisionInput(
        title=document, owner=owner, updated_at=timezone.now(), allowed_principals=("*",),
        passages=(PassageInput("p1", f"The trial lasts {value} days."),),
        facts=(FactInput(key=key, value=value, subject=subject, span="p1",
                         valid_from=timezone.localdate() - dt.timedelta(days=30),
                         valid_until=None),)))


@pytest.mark.parametrize(("key", "subject", "shown"), [
    ("trial\ndays", "", "trial days"),
    ("trial_days", "plan\r\nbasic", "plan basic / trial_days"),
    ("trial\u2028days", "", "trial days"),
    ("trial_days", "plan\r\nBcc: mallory@example.test", "plan Bcc: mallory@example.test / "
                                                        "trial_days"),
])
def test_each_owner_is_mailed_when_a_stored_key_or_subject_holds_a_line_break(
    owners_with_mail: None, django_capture_on_commit_callbacks: Any,
    key: str, subject: str, shown: str,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        stored("pricing", "olivia", key, subject, 14)
        stored("trial-promo", "oscar", key, subject, 30)

    assert sorted(m.to[0] for m in mail.outbox) == ["olivia@example.test", "oscar@example.test"]
    assert {m.subject for m in mail.outbox} == {f"[ReviewQueue] Conflict opened on {shown}"}
    for sent in mail.outbox:
        # One line of subject: nothing written in it became a header of its own.
        message = sent.message()
        assert message["Bcc"] is None and message["Cc"] is None
        assert sent.recipients() == sent.to


def test_a_key_or_subject_with_a_line_break_is_refused_so_no_new_one_reaches_a_mail(
    service_api: Any, owners_with_mail: None, django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        response = service_api.put("/api/v1/documents/pricing/revisions/r1", revision_body(
            facts=[fact("trial_days", 14, subject="plan\r\nBcc: mallory@example.test")]),
            format="json")

    assert response.status_code == 400
    assert [e["field"] for e in response.json()["errors"]] == ["facts[0].subject"]
    assert mail.outbox == []


def test_a_title_with_a_line_break_stays_out_of_the_mails_headers(
    publish: Any, owners_with_mail: None, django_capture_on_commit_callbacks: Any,
) -> None:
    """Titles are free text and keep their line breaks; a conflict's mail names the key, not
    the documents' titles, in its subject."""
    with django_capture_on_commit_callbacks(execute=True):
        publish("pricing", title="Pricing\r\nBcc: mallory@example.test",
                facts=[fact("trial_days", 14)])
        publish("trial-promo", owner="oscar", title="Promo\nBcc: mallory@example.test",
                facts=[fact("trial_days", 30)])

    assert sorted(m.to[0] for m in mail.outbox) == ["olivia@example.test", "oscar@example.test"]
    for sent in mail.outbox:
        assert sent.subject == "[ReviewQueue] Conflict opened on trial_days"
        headers = sent.message().as_bytes().split(b"\n\n", 1)[0].lower()
        assert b"mallory" not in headers
        assert sent.recipients() == sent.to


def test_a_conflict_reopened_by_hand_mails_the_other_owners_not_the_one_who_reopened_it(
    publish: Any, owner: Any, owners_with_mail: None, client: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    from reviewqueue.sources.models import Conflict

    publish("pricing", facts=[fact("trial_days", 14)])
    publish("trial-promo", owner="oscar", facts=[fact("trial_days", 30)])
    conflict = Conflict.objects.get()
    client.force_login(owner)
    client.post(f"/owner/conflicts/{conflict.pk}/dismiss",
                {"reason": "different plans", "detail": "", "signature": conflict.signature})
    mail.outbox.clear()

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/owner/conflicts/{conflict.pk}/reopen")

    assert response.status_code == 302
    assert Conflict.objects.get().status == "open"
    assert [m.to for m in mail.outbox] == [["oscar@example.test"]]
    sent = mail.outbox[0]
    assert sent.subject == "[ReviewQueue] Conflict reopened on trial_days"
    assert sent.body.startswith("olivia reopened this conflict, which had been dismissed as "
                                "expected. Documents disagree, at least one of them yours:\n")
    assert "- pricing (r1): 14\n- trial-promo (r1): 30" in sent.body


def test_a_dismissal_a_new_revision_undoes_is_mailed_as_reopened_naming_the_revision(
    publish: Any, owner: Any, owners_with_mail: None, client: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """olivia dismissed the conflict; oscar's document system then publishes a revision with
    another value. Both are told that the conflict they had put aside is open again, and why:
    not that a conflict "opened", as if they had never seen it."""
    from reviewqueue.sources.models import Conflict

    publish("pricing", facts=[fact("trial_days", 14)])
    publish("trial-promo", owner="oscar", facts=[fact("trial_days", 30)])
    conflict = Conflict.objects.get()
    client.force_login(owner)
    client.post(f"/owner/conflicts/{conflict.pk}/dismiss",
                {"reason": "different plans", "detail": "", "signature": conflict.signature})
    mail.outbox.clear()

    with django_capture_on_commit_callbacks(execute=True):
        publish("trial-promo", "r2", owner="oscar", facts=[fact("trial_days", 31)])

    assert Conflict.objects.get().status == "open"
    assert sorted(m.to[0] for m in mail.outbox) == ["olivia@example.test", "oscar@example.test"]
    for sent in mail.outbox:
        assert sent.subject == "[ReviewQueue] Conflict reopened on trial_days"
        assert sent.body.startswith(
            "A new revision of trial-promo changed the values this conflict had been dismissed "
            "for, so it is open again. Documents disagree, at least one of them yours:\n")
        assert "- pricing (r1): 14\n- trial-promo (r2): 31" in sent.body


def test_a_reopening_by_a_document_the_owner_may_not_read_does_not_name_it(
    publish: Any, owner: Any, make_user: Any, django_capture_on_commit_callbacks: Any,
) -> None:
    from reviewqueue.audit.services import SYSTEM
    from reviewqueue.sources.conflicts import conflict_dismiss
    from reviewqueue.sources.models import Conflict

    owner.email = "olivia@example.test"
    owner.save(update_fields=["email"])
    make_user("hugo", "owner", groups=("hr",))
    publish("pricing", facts=[fact("trial_days", 14)])
    publish("hr-trials", owner="hugo", principals=["group:hr"], facts=[fact("trial_days", 30)])
    conflict_dismiss(conflict_id=Conflict.objects.get().pk, reason="both valid", user=None,
                     actor=SYSTEM)
    mail.outbox.clear()

    with django_capture_on_commit_callbacks(execute=True):
        publish("hr-trials", "r2", owner="hugo", principals=["group:hr"],
                facts=[fact("trial_days", 31)])

    [sent] = mail.outbox
    assert sent.subject == "[ReviewQueue] Conflict reopened on trial_days"
    assert sent.body.startswith(
        "A change to a document you may not read changed the values this conflict had been "
        "dismissed for, so it is open again. ")
    assert "hr-trials" not in sent.body
