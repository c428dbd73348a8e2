"""What a restricted revision or document still let slip: titles of older revisions, an owner's
dismissal reason, held counts. A reader learns nothing of what they may not read."""

from __future__ import annotations

import re
from typing import Any

import pytest

from reviewqueue.audit.services import Actor
from reviewqueue.sources.conflicts import conflict_dismiss
from reviewqueue.sources.models import Conflict
from tests.reviews.conftest import fact, login  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db

SECRET_TITLE = "Layoffs plan Q3"
SECRET_REASON = "executives get 90 days"


@pytest.fixture
def public_now(publish: Any, submit: Any) -> str:
    """`policy` r1 was for HR only; r2 is public. An answer cites r1."""
    publish("policy", revision="r1", principals=["group:hr"], title=SECRET_TITLE,
            facts=[fact("k", 1)], passages=[{"span": "p1", "text": "old restricted text"}])
    publish("policy", revision="r2", principals=["*"], title="Public policy",
            facts=[fact("k", 1)], passages=[{"span": "p1", "text": "New public text."}])
    submit("pol", as_of=None, claims=[{"key": "k", "value": 1, "cite": "d1"}],
           answer="K is one [d1].",
           retrieved=[{"cite": "d1", "document_id": "policy", "revision": "r1", "span": "p1"}])
    return "pol"


def test_the_item_page_names_an_older_restricted_revision_by_the_current_title(
    public_now: str, reviewer: Any, login: Any  # noqa: F811
) -> None:
    page = login(reviewer).get(f"/answers/{public_now}/").content.decode()
    assert "That revision was restricted; you may not read its text." in page
    assert "Public policy" in page
    assert SECRET_TITLE not in page


def test_the_item_page_shows_the_restricted_title_to_who_may_read_it(
    public_now: str, hr_reviewer: Any, login: Any  # noqa: F811
) -> None:
    page = login(hr_reviewer).get(f"/answers/{public_now}/").content.decode()
    assert SECRET_TITLE in page
    assert "old restricted text" in page


def test_the_document_history_hides_the_title_of_a_revision_the_reader_may_not_read(
    public_now: str, reviewer: Any, hr_reviewer: Any, service_api: Any, token_client: Any
) -> None:
    history = token_client(reviewer).get("/api/v1/documents/policy").json()["history"]
    assert [(h["revision"], h["title"]) for h in history] == [
        ("r2", "Public policy"), ("r1", None)]
    for client in (token_client(hr_reviewer), service_api):
        history = client.get("/api/v1/documents/policy").json()["history"]
        assert [h["title"] for h in history] == ["Public policy", SECRET_TITLE]


@pytest.fixture
def dismissed_about_hr(publish: Any, submit: Any, make_user: Any, owner: Any) -> Conflict:
    """olivia's public pricing and oscar's HR document disagree; oscar dismissed the conflict
    with a reason about his document."""
    oscar = make_user("oscar", "owner", groups=("hr",))
    publish("pricing", facts=[fact("trial_days", 14)])
    publish("hr-doc", owner="oscar", principals=["group:hr"], title="HR doc",
            facts=[fact("trial_days", 90)],
            passages=[{"span": "p1", "text": "Executives get 90 days."}])
    assert submit("t-x", as_of=None, asked_by=["group:hr"]).json()["status"] == "held"
    conflict = Conflict.objects.get(key="trial_days")
    conflict_dismiss(conflict_id=conflict.pk, reason=f"both valid: {SECRET_REASON}", user=oscar,
                     actor=Actor.of_user(oscar))
    return conflict


def test_an_admin_sees_the_document_but_not_the_title_of_a_revision_they_may_not_read(
    public_now: str, admin_user: Any, token_client: Any, make_user: Any
) -> None:
    history = token_client(admin_user).get("/api/v1/documents/policy").json()["history"]
    assert [(h["revision"], h["title"]) for h in history] == [
        ("r2", "Public policy"), ("r1", None)]
    hr_admin = make_user("hilda", "admin", groups=("hr",))
    history = token_client(hr_admin).get("/api/v1/documents/policy").json()["history"]
    assert [h["title"] for h in history] == ["Public policy", SECRET_TITLE]


def test_the_admins_verdict_page_redacts_a_value_from_a_document_they_may_not_read(
    publish: Any, submit: Any, admin_client: Any
) -> None:
    from reviewqueue.reviews.models import Answer

    publish("pricing", facts=[fact("trial_days", 14)])
    publish("exec-doc", principals=["group:exec"], facts=[fact("trial_days", 4242)])
    assert submit("t-exec", as_of=None, asked_by=["group:exec"]).status_code == 201
    verdict = Answer.objects.get(trace_id="t-exec").current_verdict
    assert "4242" in str(verdict.findings)  # the gate saw it; the admin may not

    page = admin_client.get(f"/admin/reviews/verdict/{verdict.pk}/change/").content.decode()

    assert "4242" not in page and "exec-doc" not in page
    assert "a document you may not read" in page
    assert "conflicting_sources" in page


def test_a_reviewer_is_not_told_a_dismissal_reason_about_a_document_they_may_not_read(
    dismissed_about_hr: Conflict, reviewer: Any, login: Any  # noqa: F811
) -> None:
    page = login(reviewer).get("/answers/t-x/").content.decode()
    assert "Dismissed conflict" in page
    assert SECRET_REASON not in page
    assert "The reason concerns a document you may not read." in page


def test_the_other_owner_is_not_told_the_reason_either(
    dismissed_about_hr: Conflict, owner: Any, login: Any  # noqa: F811
) -> None:
    client = login(owner)
    for path in ("/owner/", f"/owner/conflicts/{dismissed_about_hr.pk}/"):
        page = client.get(path).content.decode()
        assert SECRET_REASON not in page, path
    page = client.get(f"/owner/conflicts/{dismissed_about_hr.pk}/").content.decode()
    assert "Dismissed by oscar" in page


def test_who_may_read_both_documents_reads_the_reason(
    dismissed_about_hr: Conflict, hr_reviewer: Any, make_user: Any, login: Any  # noqa: F811
) -> None:
    assert SECRET_REASON in login(hr_reviewer).get("/answers/t-x/").content.decode()
    oscar = make_user("oscar", "owner", groups=("hr",))
    page = login(oscar).get(f"/owner/conflicts/{dismissed_about_hr.pk}/").content.decode()
    assert SECRET_REASON in page


def test_the_owner_inbox_counts_only_held_answers_the_owner_may_read(
    publish: Any, submit: Any, make_user: Any, owner: Any, login: Any  # noqa: F811
) -> None:
    make_user("oscar", "owner")
    publish("pricing", facts=[fact("trial_days", 14)])
    publish("hr-doc", owner="oscar", principals=["group:hr"], title="HR doc",
            facts=[fact("trial_days", 90)])
    hr_only = [{"cite": "d1", "document_id": "hr-doc", "revision": "r1", "span": "p1"}]
    response = submit("t-hr", as_of=None, asked_by=["group:hr"], retrieved=hr_only,
                      claims=[{"key": "trial_days", "value": 90, "cite": "d1"}])
    assert response.json()["status"] == "held"
    # Cites pricing only; the HR asker's knowledge base holds the other value.
    assert submit("t-pub", as_of=None, asked_by=["group:hr"]).json()["status"] == "held"
    conflict = Conflict.objects.get()
    client = login(owner)
    for path in ("/owner/", f"/owner/conflicts/{conflict.pk}/"):
        page = client.get(path).content.decode()
        assert re.search(r"holding 1 answer(?!s)", page), path
    # The conflict's page lists the one olivia may read, and nothing of the other.
    assert "/answers/t-pub/" in page and "t-hr" not in page
    oscar = make_user("oscar", "owner", groups=("hr",))
    assert "holding 2 answers" in login(oscar).get("/owner/").content.decode()
    page = login(oscar).get(f"/owner/conflicts/{conflict.pk}/").content.decode()
    assert "/answers/t-pub/" in page and "/answers/t-hr/" in page


def test_the_admin_lists_no_answer_verdict_decision_or_queue_entry_they_may_not_read(
    publish: Any, submit: Any, admin_client: Any, make_user: Any, client: Any,
    hr_reviewer: Any, token_client: Any,
) -> None:
    from reviewqueue.reviews.models import Answer

    publish("pricing", facts=[fact("trial_days", 14)])
    publish("hr-doc", principals=["group:hr"], title="HR doc", facts=[fact("trial_days", 90)])
    hr_only = [{"cite": "d1", "document_id": "hr-doc", "revision": "r1", "span": "p1"}]
    assert submit("t-hr", as_of=None, asked_by=["group:hr"], retrieved=hr_only,
                  claims=[{"key": "trial_days", "value": 90, "cite": "d1"}]).status_code == 201
    # Cites pricing only; held for the HR asker's knowledge base, which disagrees.
    assert submit("t-pub", as_of=None, asked_by=["group:hr"]).json()["status"] == "held"
    hidden = Answer.objects.get(trace_id="t-hr")
    client.force_login(make_user("hilda", "admin", groups=("hr",)))

    pages = {"answer": hidden.pk, "verdict": hidden.current_verdict_id,
             "reviewitem": hidden.review_item.pk}
    for model, pk in pages.items():
        listed = admin_client.get(f"/admin/reviews/{model}/").content.decode()
        assert "t-pub" in listed and "t-hr" not in listed, model
        assert admin_client.get(f"/admin/reviews/{model}/{pk}/change/").status_code == 404
        assert "t-hr" in client.get(f"/admin/reviews/{model}/").content.decode(), model
        assert client.get(f"/admin/reviews/{model}/{pk}/change/").status_code == 200

    # A decision's comment may quote the restricted document.
    api = token_client(hr_reviewer)
    for trace_id in ("t-hr", "t-pub"):
        verdict = Answer.objects.get(trace_id=trace_id).current_verdict_id
        assert api.post(f"/api/v1/answers/{trace_id}/decisions",
                        {"action": "reject", "verdict": verdict, "reason": "outdated",
                         "comment": f"{trace_id}: HR says 90"},
                        format="json").status_code == 201
    listed = admin_client.get("/admin/reviews/decision/").content.decode()
    assert "t-pub" in listed and "t-hr" not in listed
