"""What the owner pages show of documents the viewer may not read: managing every document, as
an admin does, is no reason to read a dismissal's reason or a revision's note about one; and an
answer a reviewer sent to some owners is listed for those owners only."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.audit.services import Actor
from reviewqueue.reviews.services.handoff import review_item_send_to_owner
from reviewqueue.sources.conflicts import conflict_dismiss
from reviewqueue.sources.models import Conflict
from tests.conftest import revision_body
from tests.reviews.conftest import fact

pytestmark = pytest.mark.django_db

SECRET_REASON = "other: the promo is for the ACME merger only"



# --- A dismissal's reason -------------------------------------------------------------------


@pytest.fixture
def hr_conflict_dismissed(publish: Any, owner: Any, make_user: Any) -> Conflict:
    """Two documents only group:hr may read disagree; olivia, their owner, dismissed it."""
    make_user("oscar", "owner")
    publish("pricing", facts=[fact("trial_days", 14)], principals=["group:hr"])
    publish("promo", owner="oscar", facts=[fact("trial_days", 30)], principals=["group:hr"])
    conflict = Conflict.objects.get()
    conflict_dismiss(conflict_id=conflict.pk, reason=SECRET_REASON, user=owner,
                     actor=Actor.of_user(owner))
    return conflict


def test_an_admin_who_may_not_read_the_documents_is_not_shown_the_reason(
    client: Any, admin_user: Any, hr_conflict_dismissed: Conflict,
) -> None:
    client.force_login(admin_user)
    page = client.get(f"/owner/conflicts/{hr_conflict_dismissed.pk}/").content.decode()
    assert "ACME" not in page
    assert "the reason concerns a document you may not read" in page
    inbox = client.get("/owner/").content.decode()
    assert "ACME" not in inbox
    assert "the reason concerns a document you may not read" in inbox


def test_an_admin_in_the_group_the_documents_allow_is_shown_the_reason(
    client: Any, make_user: Any, hr_conflict_dismissed: Conflict,
) -> None:
    client.force_login(make_user("hank", "admin", groups=("hr",)))
    page = client.get(f"/owner/conflicts/{hr_conflict_dismissed.pk}/").content.decode()
    assert "the ACME merger only" in page


def test_the_owner_of_one_side_is_not_shown_the_reason_if_the_other_is_closed_to_them(
    client: Any, publish: Any, owner: Any, make_user: Any,
) -> None:
    hugo = make_user("hugo", "owner", groups=("hr",))
    publish("pricing", facts=[fact("trial_days", 14)])
    publish("promo", owner="hugo", facts=[fact("trial_days", 30)], principals=["group:hr"])
    conflict = Conflict.objects.get()
    conflict_dismiss(conflict_id=conflict.pk, reason=SECRET_REASON, user=hugo,
                     actor=Actor.of_user(hugo))
    client.force_login(owner)
    assert "ACME" not in client.get(f"/owner/conflicts/{conflict.pk}/").content.decode()
    client.force_login(hugo)
    assert "ACME" in client.get(f"/owner/conflicts/{conflict.pk}/").content.decode()


# --- A revision's note in the document's history ----------------------------------------------


def publish_with_note(service_api: Any, revision: str, note: str, principals: list[str]) -> None:
    body = {**revision_body(facts=[fact("trial_days", 14)], principals=principals), "note": note}
    response = service_api.put(f"/api/v1/documents/pricing/revisions/{revision}", body,
                               format="json")
    assert response.status_code in (200, 201), response.content


def test_a_withdrawn_documents_notes_are_not_shown_to_an_admin_who_may_not_read_them(
    client: Any, owner: Any, admin_user: Any, service_api: Any,
) -> None:
    publish_with_note(service_api, "r1", "Merger with ACME: trial now 21 days", ["group:hr"])
    assert service_api.delete("/api/v1/documents/pricing").status_code == 200

    client.force_login(admin_user)
    page = client.get("/owner/documents/pricing/").content.decode()
    assert "Withdrawn on" in page and '<code class="rev">r1</code>' in page
    assert "ACME" not in page
    client.force_login(owner)
    assert "Merger with ACME" in client.get("/owner/documents/pricing/").content.decode()


def test_an_older_restricted_revisions_note_is_not_shown_beside_a_readable_current_one(
    client: Any, owner: Any, admin_user: Any, service_api: Any,
) -> None:
    publish_with_note(service_api, "r1", "Merger with ACME: trial now 21 days", ["group:hr"])
    publish_with_note(service_api, "r2", "Published for everyone", ["*"])

    client.force_login(admin_user)
    page = client.get("/owner/documents/pricing/").content.decode()
    assert "Published for everyone" in page
    assert '<code class="rev">r1</code>' in page and "ACME" not in page


# --- Answers a reviewer sent to owners --------------------------------------------------------


def _submit_pricing_and_faq(submit: Any, pricing_revision: str) -> Any:
    """An answer citing pricing (at `pricing_revision`) for the trial and carl's faq for
    support."""
    return submit(
        retrieved=[{"cite": "d1", "document_id": "pricing", "revision": pricing_revision,
                    "span": "p1"},
                   {"cite": "d2", "document_id": "faq", "revision": "r1", "span": "p1"}],
        claims=[{"key": "trial_days", "value": 14, "cite": "d1"},
                {"key": "support", "value": "email", "cite": "d2"}],
        answer="The trial lasts 14 days [d1]; support is by email [d2].", as_of=None,
        asked_by=["*"])


def test_an_answer_sent_to_the_owners_in_conflict_is_not_listed_for_other_cited_owners(
    client: Any, publish: Any, submit: Any, owner: Any, make_user: Any, reviewer: Any,
) -> None:
    make_user("oscar", "owner")
    carl = make_user("carl", "owner")
    publish("pricing", facts=[fact("trial_days", 14)])
    publish("promo", owner="oscar", facts=[fact("trial_days", 30)])
    publish("faq", owner="carl", facts=[fact("support", "email")])
    # Cites pricing, in conflict with promo, and carl's faq, in no conflict.
    response = _submit_pricing_and_faq(submit, "r1")
    assert response.json()["status"] == "held"
    review_item_send_to_owner(trace_id="t-1", user=reviewer, note="Which trial length holds?",
                              actor=Actor.of_user(reviewer))

    client.force_login(carl)
    page = client.get("/owner/").content.decode()
    assert "Which trial length holds?" not in page
    assert "No reviewer is waiting for you." in page
    client.force_login(owner)
    assert "Which trial length holds?" in client.get("/owner/").content.decode()


def test_an_answer_in_no_conflict_is_listed_for_the_owner_of_the_document_behind_the_hold(
    client: Any, publish: Any, submit: Any, owner: Any, make_user: Any, reviewer: Any,
) -> None:
    carl = make_user("carl", "owner")
    publish("pricing", facts=[fact("trial_days", 14)])
    publish("faq", owner="carl", facts=[fact("support", "email")])
    # Held for another reason than a conflict: the cited fact has ended.
    publish("pricing", revision="r2", facts=[fact("trial_days", 14, start=-30, end=-1)])
    response = _submit_pricing_and_faq(submit, "r2")
    assert response.json()["status"] == "held", response.json()
    review_item_send_to_owner(trace_id="t-1", user=reviewer, note="Is the trial still on?",
                              actor=Actor.of_user(reviewer))

    client.force_login(owner)
    assert "Is the trial still on?" in client.get("/owner/").content.decode()
    # carl's FAQ is cited too, but nothing in it holds the answer: he was not asked.
    client.force_login(carl)
    assert "Is the trial still on?" not in client.get("/owner/").content.decode()


def test_the_history_says_who_published_each_revision(
    client: Any, owner: Any, service_api: Any,
) -> None:
    """An owner reading the history sees whether a revision came from the upstream service or
    from a person, beside its time and note."""
    from reviewqueue.audit.services import Actor
    from reviewqueue.sources.models import Document
    from reviewqueue.sources.services import FactEdit, revision_publish_corrected

    publish_with_note(service_api, "r1", "First", ["*"])
    document = Document.objects.get(key="pricing")
    trial = document.current_revision.facts.get()
    revision_publish_corrected(
        document=document, edits=[FactEdit(trial.pk, 21, trial.valid_from, trial.valid_until)],
        note="Now 21 days", actor=Actor.of_user(owner), user=owner)
    client.force_login(owner)
    page = client.get("/owner/documents/pricing/").content.decode()
    history = page[page.index("<h2>History</h2>"):]
    assert history.index("by olivia") < history.index("Now 21 days")
    assert history.index("Now 21 days") < history.index("by rag-service")
