"""Bugs the generated tests found, pinned down one by one."""

from __future__ import annotations

import json
from typing import Any

from tests.security.conftest import World, api_client, fact, revision


def test_a_field_name_with_a_nul_character_is_refused_not_a_crash(world: World, db: Any) -> None:
    """Schemathesis found it: the error names the field, PostgreSQL refuses NUL in jsonb, and
    quarantining the refused body turned a 400 into a 500."""
    from reviewqueue.audit.models import QuarantinedPayload

    client = api_client(world.tokens["alice"])
    response = client.post("/api/v1/answers/t-public/release",
                           data=json.dumps({"bad\u0000name": 1}),
                           content_type="application/json")
    assert response.status_code == 400
    kept = QuarantinedPayload.objects.latest("pk")
    assert kept.errors[0]["field"] == "bad\ufffdname"


def test_the_answer_api_does_not_quote_a_document_the_reader_may_not_read(
    world: World, db: Any
) -> None:
    """Hypothesis found it: a finding drawn from a knowledge-base document told a reviewer
    the value held in a document they may not read."""
    service = api_client(world.tokens["rag-service"])
    secret = "SECRET-VALUE-OF-OLIVIA-ONLY"
    response = service.put("/api/v1/documents/notice/revisions/r1", revision(
        owner="olivia", title="Notice", principals=["*"],
        passages=[{"span": "p1", "text": "Notice is 10 days."}],
        facts=[fact("notice_days", 10)]), format="json")
    assert response.status_code == 201
    response = service.put("/api/v1/documents/private/revisions/r1", revision(
        owner="olivia", title="Private", principals=["user:olivia"],
        passages=[{"span": "p1", "text": "Private."}], facts=[fact("notice_days", secret)]),
        format="json")
    assert response.status_code == 201
    answer = {"trace_id": "t-kb", "question": "How long?", "answer": "It is 10 [d1].",
              # Asked by olivia, who may read both: the gate weighs her private document.
              "asked_by": ["user:olivia"], "index_release": "r",
              "retrieved": [{"cite": "d1", "document_id": "notice", "revision": "r1",
                             "span": "p1"}],
              "claims": [{"key": "notice_days", "value": 10, "cite": "d1"}]}
    assert service.post("/api/v1/answers", answer, format="json").status_code == 201

    reader = api_client(world.tokens["alice"])
    response = reader.get("/api/v1/answers/t-kb")
    assert response.status_code == 200
    assert secret not in response.content.decode()
    # The service sent every document itself and still gets the full finding.
    assert secret in service.get("/api/v1/answers/t-kb").content.decode()


def test_the_django_admin_shows_answers_queue_entries_and_documents_but_never_changes_them(
    world: World, db: Any
) -> None:
    """A review found it: the admin's change form set an answer approved with no decision,
    no audit event and the answer still in the queue."""
    from reviewqueue.audit.models import AuditEvent
    from reviewqueue.reviews.models import Answer, ReviewItem
    from reviewqueue.sources.models import Document

    client = api_client()
    client.force_login(world.users["ada"])
    events = AuditEvent.objects.count()
    for model, obj in ((Answer, Answer.objects.first()), (ReviewItem, ReviewItem.objects.first()),
                       (Document, Document.objects.first())):
        assert obj is not None
        base = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        assert client.get(base).status_code == 200
        page = client.get(f"{base}{obj.pk}/change/")
        assert page.status_code == 200 and 'name="_save"' not in page.content.decode()
        assert client.post(f"{base}{obj.pk}/change/", {"status": "approved"}).status_code == 403
        assert client.post(f"{base}{obj.pk}/delete/", {"post": "yes"}).status_code == 403
        assert client.get(f"{base}add/").status_code == 403
    assert AuditEvent.objects.count() == events


def test_an_admin_reads_the_history_of_any_answer_but_not_what_it_asked(
    world: World, db: Any
) -> None:
    """Review found it: an admin's API token read the question of an HR answer whose page
    and audit timeline the same admin may not read. The history stays theirs to audit."""
    admin = api_client(world.tokens["ada"]).get("/api/v1/answers/t-hr").json()
    assert admin["question"] is None
    # Nor what it answered, nor its claims: only which version it is at.
    assert (admin["answer"], admin["claims"], admin["version"]) == (None, None, 1)
    assert admin["status"] == "held" and admin["verdicts"][0]["decision"] == "review"
    assert api_client(world.tokens["hana"]).get("/api/v1/answers/t-hr").json()["question"] \
        == "How long?"
    assert api_client(world.tokens["ada"]).get("/api/v1/answers/t-public").json()[
        "question"] == "How long?"
    assert api_client(world.tokens["rag-service"]).get("/api/v1/answers/t-hr").json()[
        "question"] == "How long?"


def test_the_answer_api_gives_the_owner_questions_but_not_their_text_to_who_may_not_read(
    world: World, db: Any
) -> None:
    """The questions to the owners and their replies talk about the documents: an admin who
    gets `question` null gets both texts null too, with who asked and replied, and when."""
    from django.utils import timezone

    from reviewqueue.reviews.models import Answer, OwnerQuestion

    now = timezone.now()
    OwnerQuestion.objects.create(
        answer=Answer.objects.get(trace_id="t-hr"), asked_by=world.users["hana"], asked_at=now,
        note="Is 90 days still right?", replied_by=world.users["olivia"], replied_at=now,
        reply="Yes, for everyone.")
    OwnerQuestion.objects.create(answer=Answer.objects.get(trace_id="t-hr"),
                                 asked_by=world.users["hana"], asked_at=now, note="And for EU?")
    stamp = now.isoformat().replace("+00:00", "Z")
    for caller in ("hana", "rag-service"):
        body = api_client(world.tokens[caller]).get("/api/v1/answers/t-hr").json()
        assert body["owner_questions"] == [
            {"asked_by": "hana", "asked_at": stamp, "note": "Is 90 days still right?",
             "replied_by": "olivia", "replied_at": stamp, "reply": "Yes, for everyone."},
            {"asked_by": "hana", "asked_at": stamp, "note": "And for EU?",
             "replied_by": None, "replied_at": None, "reply": None},
        ], caller
    admin = api_client(world.tokens["ada"]).get("/api/v1/answers/t-hr").json()
    assert [(q["asked_by"], q["note"], q["replied_by"], q["reply"])
            for q in admin["owner_questions"]] == [("hana", None, "olivia", None),
                                                   ("hana", None, None, None)]
