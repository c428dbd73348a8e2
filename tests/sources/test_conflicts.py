from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from django.core import mail

from reviewqueue.audit.models import AuditEvent
from reviewqueue.audit.services import SYSTEM
from reviewqueue.errors import Conflict as ConflictError
from reviewqueue.errors import FieldError
from reviewqueue.sources.conflicts import conflict_dismiss, conflict_reopen
from reviewqueue.sources.models import Conflict

pytestmark = pytest.mark.django_db


def trial(value: Any, start: str = "2026-01-01", end: str | None = None) -> list[dict[str, Any]]:
    return [
        {"key": "trial_days", "value": value, "valid_from": start, "valid_until": end, "span": "p1"}
    ]


@pytest.fixture
def second_owner(make_user: Any) -> Any:
    user = make_user("oscar", "owner")
    user.email = "oscar@example.test"
    user.save()
    return user


def test_two_documents_disagreeing_open_a_conflict_and_mail_the_owners(
    publish: Any, owner: Any, second_owner: Any, django_capture_on_commit_callbacks: Any
) -> None:
    publish("trial-policy", facts=trial(14))
    with django_capture_on_commit_callbacks(execute=True):
        publish("trial-promo", owner="oscar", facts=trial(30))
    conflict = Conflict.objects.get()
    assert conflict.status == "open"
    assert conflict.documents == ["trial-policy", "trial-promo"]
    assert sorted(p["value"] for p in conflict.participants) == [14, 30]
    assert any("oscar@example.test" in m.to for m in mail.outbox)


def test_agreeing_documents_open_no_conflict(publish: Any, owner: Any) -> None:
    publish("trial-policy", facts=trial(14))
    publish("trial-faq", facts=trial(14))
    assert not Conflict.objects.exists()


def test_values_of_another_type_disagree(publish: Any, owner: Any) -> None:
    publish("trial-policy", facts=trial(14))
    publish("trial-faq", facts=trial("14"))
    assert Conflict.objects.get().status == "open"


def test_periods_that_do_not_overlap_do_not_conflict(publish: Any, owner: Any) -> None:
    publish("trial-policy", facts=trial(14, "2026-01-01", "2099-06-30"))
    publish("trial-next", facts=trial(30, "2099-07-01", None))
    assert not Conflict.objects.exists()


def test_an_expired_fact_does_not_conflict(publish: Any, owner: Any) -> None:
    publish("trial-policy", facts=trial(14, "2020-01-01", "2020-12-31"))
    publish("trial-promo", facts=trial(30))
    assert not Conflict.objects.exists()


def test_a_revision_that_removes_the_disagreement_closes_it(publish: Any, owner: Any) -> None:
    publish("trial-policy", facts=trial(14))
    publish("trial-promo", facts=trial(30))
    publish("trial-promo", revision="r2", facts=trial(14))
    conflict = Conflict.objects.get()
    assert conflict.status == "closed"
    assert conflict.closed_at is not None


def test_withdrawing_one_side_closes_it(publish: Any, owner: Any, service_api: Any) -> None:
    publish("trial-policy", facts=trial(14))
    publish("trial-promo", facts=trial(30))
    service_api.delete("/api/v1/documents/trial-promo")
    assert Conflict.objects.get().status == "closed"


def test_a_new_disagreement_reopens_a_closed_conflict(publish: Any, owner: Any) -> None:
    publish("trial-policy", facts=trial(14))
    publish("trial-promo", facts=trial(30))
    publish("trial-promo", revision="r2", facts=trial(14))
    publish("trial-promo", revision="r3", facts=trial(45))
    conflict = Conflict.objects.get()
    assert conflict.status == "open"
    assert {p["revision"] for p in conflict.participants} == {"r1", "r3"}


def test_a_dismissal_needs_a_justification(publish: Any, owner: Any) -> None:
    publish("trial-policy", facts=trial(14))
    publish("trial-promo", facts=trial(30))
    with pytest.raises(FieldError):
        conflict_dismiss(
            conflict_id=Conflict.objects.get().pk, reason="  ", user=owner, actor=SYSTEM
        )


def test_a_dismissal_is_audited_with_the_digest_of_its_justification(
    publish: Any, owner: Any
) -> None:
    publish("trial-policy", facts=trial(14))
    publish("trial-promo", facts=trial(30))
    conflict_dismiss(conflict_id=Conflict.objects.get().pk,
                     reason="  different plans: staff keep theirs ", user=owner, actor=SYSTEM)
    event = AuditEvent.objects.get(action="conflict.dismissed")
    assert "staff keep theirs" not in json.dumps(event.after)  # no free text in the log
    assert event.after["dismissal_reason"] == "different plans"  # the code chosen is not
    assert event.after["reason_sha256"] == hashlib.sha256(
        b"different plans: staff keep theirs").hexdigest()
    assert Conflict.objects.get().dismissal_reason == "different plans: staff keep theirs"


def test_a_dismissal_holds_while_the_same_revisions_are_current(publish: Any, owner: Any) -> None:
    publish("trial-policy", facts=trial(14))
    publish("trial-promo", facts=trial(30))
    conflict = conflict_dismiss(
        conflict_id=Conflict.objects.get().pk, reason="different plans", user=owner, actor=SYSTEM
    )
    assert conflict.status == "dismissed"
    publish(
        "unrelated",
        facts=[{"key": "support_hours", "value": 8, "valid_from": "2026-01-01", "span": "p1"}],
    )
    assert Conflict.objects.get().status == "dismissed"


def test_a_later_revision_of_either_document_reopens_a_dismissed_conflict(
    publish: Any, owner: Any
) -> None:
    publish("trial-policy", facts=trial(14))
    publish("trial-promo", facts=trial(30))
    conflict_dismiss(
        conflict_id=Conflict.objects.get().pk, reason="both valid", user=owner, actor=SYSTEM
    )
    publish("trial-promo", revision="r2", facts=trial(31))
    assert Conflict.objects.get().status == "open"


def test_the_other_owner_can_reopen_a_dismissal(publish: Any, owner: Any) -> None:
    publish("trial-policy", facts=trial(14))
    publish("trial-promo", facts=trial(30))
    conflict = conflict_dismiss(
        conflict_id=Conflict.objects.get().pk, reason="both valid", user=owner, actor=SYSTEM
    )
    assert conflict_reopen(conflict_id=conflict.pk, actor=SYSTEM).status == "open"
    with pytest.raises(ConflictError):
        conflict_reopen(conflict_id=conflict.pk, actor=SYSTEM)


class TestGateUsesKnowledgeBaseFacts:
    def test_a_conflicting_fact_in_an_unretrieved_readable_document_holds_the_answer(
        self, publish: Any, submit: Any
    ) -> None:
        publish("pricing", facts=trial(14))
        publish("trial-promo", facts=trial(30))
        body = submit().json()
        assert body["status"] == "held"
        assert body["verdict"]["reason"] == "conflicting_sources"
        finding = next(f for f in body["verdict"]["findings"] if f["code"] == "conflicting_sources")
        assert "trial-promo" in str(finding)

    def test_a_fact_the_asker_may_not_read_is_not_counted(self, publish: Any, submit: Any) -> None:
        publish("pricing", facts=trial(14))
        publish("hr-trial", facts=trial(30), principals=["group:hr"])
        body = submit(asked_by=["user:customer-7"]).json()
        assert body["status"] == "candidate"

    def test_the_same_fact_counts_for_an_asker_who_may_read_it(
        self, publish: Any, submit: Any
    ) -> None:
        publish("pricing", facts=trial(14))
        publish("hr-trial", facts=trial(30), principals=["group:hr"])
        body = submit(asked_by=["group:hr"]).json()
        assert body["verdict"]["reason"] == "conflicting_sources"

    def test_a_dismissed_conflict_no_longer_holds_answers_through_the_knowledge_base(
        self,
        publish: Any,
        submit: Any,
        owner: Any,
        service_api: Any,
        django_capture_on_commit_callbacks: Any,
    ) -> None:
        publish("pricing", facts=trial(14))
        publish("trial-promo", facts=trial(30))
        assert submit().json()["status"] == "held"
        with django_capture_on_commit_callbacks(execute=True):
            conflict_dismiss(
                conflict_id=Conflict.objects.get().pk,
                reason="different plans",
                user=owner,
                actor=SYSTEM,
            )
        body = service_api.get("/api/v1/answers/t-1").json()
        assert body["status"] == "candidate"


def test_the_conflict_mail_shows_an_owner_only_the_sides_they_may_read(
    publish: Any, owner: Any, second_owner: Any, django_capture_on_commit_callbacks: Any
) -> None:
    owner.email = "olivia@example.test"
    owner.save()
    publish("trial-policy", owner="oscar", facts=trial(14))
    with django_capture_on_commit_callbacks(execute=True):
        publish("hr-trial-secret", principals=["group:hr"], facts=trial(90))
    [to_oscar] = [m for m in mail.outbox if m.to == ["oscar@example.test"]]
    assert "trial-policy (r1): 14" in to_oscar.body
    assert "a document you may not read" in to_oscar.body
    assert "hr-trial-secret" not in to_oscar.body and "90" not in to_oscar.body
    [to_olivia] = [m for m in mail.outbox if m.to == ["olivia@example.test"]]
    assert "hr-trial-secret (r1): 90" in to_olivia.body


def test_a_document_joining_an_open_conflict_mails_its_owner_only(
    publish: Any, owner: Any, second_owner: Any, make_user: Any,
    django_capture_on_commit_callbacks: Any
) -> None:
    owner.email = "olivia@example.test"
    owner.save()
    third = make_user("otto", "owner")
    third.email = "otto@example.test"
    third.save()
    publish("trial-policy", facts=trial(14))
    with django_capture_on_commit_callbacks(execute=True):
        publish("trial-promo", owner="oscar", facts=trial(30))
    opened = len(mail.outbox)
    with django_capture_on_commit_callbacks(execute=True):
        publish("trial-faq", owner="otto", facts=trial(7))
    assert Conflict.objects.get().documents == ["trial-faq", "trial-policy", "trial-promo"]
    [to_otto] = mail.outbox[opened:]
    assert to_otto.to == ["otto@example.test"]
    assert to_otto.subject == "[ReviewQueue] Your document joined the conflict on trial_days"
    assert "trial-faq (r1): 7" in to_otto.body and "trial-policy (r1): 14" in to_otto.body
    # A change among the same documents mails no one.
    with django_capture_on_commit_callbacks(execute=True):
        publish("trial-faq", "r2", owner="otto", facts=trial(8))
    assert len(mail.outbox) == opened + 1


def test_the_daily_sweep_closes_a_conflict_whose_overlap_has_ended(
    publish: Any, owner: Any, second_owner: Any, client: Any, settings: Any
) -> None:
    import datetime as dt

    from reviewqueue.sources.tasks import close_ended_conflicts

    publish("trial-policy", facts=trial(14, "2026-01-01", "2099-06-30"))
    publish("trial-promo", owner="oscar", facts=trial(30, "2099-06-01"))
    # A third pair stays in disagreement, and a dismissed one whose facts still overlap.
    publish("eu-policy", facts=[{**trial(14)[0], "key": "eu_trial_days"}])
    publish("eu-promo", owner="oscar", facts=[{**trial(30)[0], "key": "eu_trial_days"}])
    ending, lasting = (Conflict.objects.get(key="trial_days"),
                       Conflict.objects.get(key="eu_trial_days"))
    conflict_dismiss(conflict_id=lasting.pk, reason="different plans", user=owner, actor=SYSTEM)
    settings.REEVALUATION_TODAY = dt.date(2099, 6, 30)
    close_ended_conflicts()
    assert Conflict.objects.get(pk=ending.pk).status == "open"  # the last day they overlap
    settings.REEVALUATION_TODAY = dt.date(2099, 7, 1)
    close_ended_conflicts()
    close_ended_conflicts()  # again: nothing more happens
    assert Conflict.objects.get(pk=ending.pk).status == "closed"
    assert Conflict.objects.get(pk=lasting.pk).status == "dismissed"
    (closed,) = AuditEvent.objects.filter(action="conflict.closed")
    assert (closed.actor, closed.document_id, closed.object_id) == ("worker", "", str(ending.pk))
    client.force_login(owner)
    page = client.get(f"/owner/conflicts/{ending.pk}/").content.decode()
    assert "the periods in which the documents disagreed have ended." in page
