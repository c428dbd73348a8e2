"""A conflict's mail goes out whatever its key or subject holds: a line break, which a mail
header may not carry, becomes a space in the mail's subject."""

from __future__ import annotations

from typing import Any

import pytest
from django.core import mail

from tests.reviews.conftest import fact

pytestmark = pytest.mark.django_db



@pytest.mark.parametrize(("key", "subject", "shown"), [
    ("trial\ndays", "", "trial days"),
    ("trial_days", "plan\r\nbasic", "plan basic / trial_days"),
    ("trial\u2028days", "", "trial days"),
])
def test_each_owner_is_mailed_when_the_key_or_subject_holds_a_line_break(
    publish: Any, owners_with_mail: None, django_capture_on_commit_callbacks: Any,
    key: str, subject: str, shown: str,
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        publish("pricing", facts=[fact(key, 14, subject=subject)])
        publish("trial-promo", owner="oscar", facts=[fact(key, 30, subject=subject)])

    assert sorted(m.to[0] for m in mail.outbox) == ["olivia@example.test", "oscar@example.test"]
    assert {m.subject for m in mail.outbox} == {f"[ReviewQueue] Conflict opened on {shown}"}


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
