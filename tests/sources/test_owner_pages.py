from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth import get_user_model

from reviewqueue.audit.models import AuditEvent
from reviewqueue.reviews.models import Answer, ReviewItem
from reviewqueue.sources.models import Conflict, Document, Fact, Revision
from tests.reviews.conftest import fact

pytestmark = pytest.mark.django_db
User = get_user_model()


def trial(value: Any, end: str | None = None) -> list[dict[str, Any]]:
    return [
        {
            "key": "trial_days",
            "value": value,
            "valid_from": "2026-01-01",
            "valid_until": end,
            "span": "p1",
        }
    ]


@pytest.fixture
def other_owner(make_user: Any) -> Any:
    return make_user("oscar", "owner")


@pytest.fixture
def conflict_holding_an_answer(
    publish: Any, submit: Any, owner: Any, other_owner: Any, django_capture_on_commit_callbacks: Any
) -> Conflict:
    publish("pricing", facts=trial(14))
    publish("trial-promo", owner="oscar", facts=trial(30))
    body = submit(as_of=None).json()
    assert body["status"] == "held"
    return Conflict.objects.get()


def test_the_inbox_shows_the_conflict_side_by_side_with_the_answers_it_holds(
    client: Any, owner: Any, conflict_holding_an_answer: Conflict
) -> None:
    client.force_login(owner)
    page = client.get("/owner/").content.decode()
    assert "trial_days" in page
    assert "holding 1 answer you may read" in page
    assert "pricing@r1" in page and "trial-promo@r1" in page
    assert "oscar" in page  # the other owner


def test_the_conflict_state_is_said_in_the_owners_language(
    client: Any, owner: Any, conflict_holding_an_answer: Conflict
) -> None:
    client.force_login(owner)
    page = client.get("/owner/", HTTP_ACCEPT_LANGUAGE="ja").content.decode()
    assert '<span class="badge tone-review">未解決</span>' in page


def test_an_owner_not_involved_sees_no_conflict(
    client: Any, make_user: Any, conflict_holding_an_answer: Conflict
) -> None:
    stranger = make_user("sam", "owner")
    client.force_login(stranger)
    assert "trial_days" not in client.get("/owner/").content.decode()
    conflict = conflict_holding_an_answer
    assert client.get(f"/owner/conflicts/{conflict.pk}/").status_code == 404
    response = client.post(f"/owner/conflicts/{conflict.pk}/dismiss", {"reason": "both valid"})
    assert response.status_code == 404
    assert Conflict.objects.get().status == "open"


def test_the_menu_offers_each_person_the_pages_they_may_use(
    client: Any, owner: Any, reviewer: Any, admin_user: Any
) -> None:
    def menu(user: Any) -> str:
        client.force_login(user)
        html = client.get("/owner/" if user == owner else "/").content.decode()
        return html.split('<nav aria-label="Main">', 1)[1].split("</nav>", 1)[0]

    # An owner who is not a reviewer: "Queue" would only lead to "Owner inbox" again.
    assert ">Queue</a>" not in menu(owner) and ">Owner inbox</a>" in menu(owner)
    assert ">Queue</a>" in menu(reviewer) and ">Owner inbox</a>" not in menu(reviewer)
    assert ">Queue</a>" in menu(admin_user) and ">Audit</a>" in menu(admin_user)


def test_a_reviewer_may_not_use_the_owner_pages(client: Any, reviewer: Any) -> None:
    client.force_login(reviewer)
    assert client.get("/owner/").status_code == 403


def test_an_admin_may_resolve_any_conflict(
    client: Any, admin_user: Any, conflict_holding_an_answer: Conflict
) -> None:
    client.force_login(admin_user)
    response = client.post(
        f"/owner/conflicts/{conflict_holding_an_answer.pk}/dismiss",
        {"reason": "both valid", "signature": conflict_holding_an_answer.signature},
    )
    assert response.status_code == 302
    assert Conflict.objects.get().status == "dismissed"


def test_dismissing_without_a_justification_for_other_is_refused(
    client: Any, owner: Any, conflict_holding_an_answer: Conflict
) -> None:
    client.force_login(owner)
    response = client.post(
        f"/owner/conflicts/{conflict_holding_an_answer.pk}/dismiss",
        {"reason": "other", "detail": ""},
    )
    assert response.status_code == 400
    assert "Explain why" in response.content.decode()
    assert Conflict.objects.get().status == "open"


def test_the_dismissal_form_presets_no_reason_and_refuses_one_left_unchosen(
    client: Any, owner: Any, conflict_holding_an_answer: Conflict
) -> None:
    client.force_login(owner)
    page = client.get(f"/owner/conflicts/{conflict_holding_an_answer.pk}/").content.decode()
    menu = page.split('name="reason"', 1)[1].split("</select>", 1)[0]
    assert '<option value="" selected>—</option>' in menu
    response = client.post(
        f"/owner/conflicts/{conflict_holding_an_answer.pk}/dismiss",
        {"reason": "", "detail": "", "signature": conflict_holding_an_answer.signature},
    )
    assert response.status_code == 400
    assert "Choose why these values do not conflict." in response.content.decode()
    assert Conflict.objects.get().status == "open"


def test_the_other_owner_sees_the_dismissal_and_can_reopen_it(
    client: Any, owner: Any, other_owner: Any, conflict_holding_an_answer: Conflict
) -> None:
    client.force_login(owner)
    dismissed = client.post(
        f"/owner/conflicts/{conflict_holding_an_answer.pk}/dismiss",
        {"reason": "different plans", "detail": "promo is for new teams.",
         "signature": conflict_holding_an_answer.signature}, follow=True,
    )
    # Which answers it releases: not those citing both sides, which the owner may see stay.
    assert ("an answer citing the documents that disagree still waits for a reviewer to check "
            "that it says which value applies.") in dismissed.content.decode()
    client.force_login(other_owner)
    page = client.get("/owner/").content.decode()
    assert "Dismissed by olivia" in page
    # Its code in words, and one full stop, not one inside the quotes and one after them.
    assert "Different plans or audiences: promo is for new teams”." in page
    # Said from its dismissal: it was never reopened.
    assert "<span class=\"muted\" data-since>dismissed just now</span>" in page
    assert "reopened" not in page
    client.post(f"/owner/conflicts/{conflict_holding_an_answer.pk}/reopen")
    assert Conflict.objects.get().status == "open"
    page = client.get("/owner/").content.decode()
    assert "reopened just now" in page and "Dismissed by olivia" not in page
    # Reopened again from a page still open on the dismissal: said in words, nothing done.
    again = client.post(f"/owner/conflicts/{conflict_holding_an_answer.pk}/reopen", follow=True)
    page = again.content.decode()
    assert ("This conflict is not dismissed any more (it is open now): there is nothing to "
            "reopen.") in page
    assert "not dismissed</" not in page and "the conflict is open" not in page


def test_reopening_from_a_page_read_before_a_newer_dismissal_undoes_nothing(
    client: Any, owner: Any, other_owner: Any, conflict_holding_an_answer: Conflict
) -> None:
    """The other owner read olivia's first dismissal; meanwhile it was reopened and she
    dismissed it again with a new reason. Their "Reopen" is about the dismissal they read."""
    url = f"/owner/conflicts/{conflict_holding_an_answer.pk}"
    client.force_login(owner)
    client.post(f"{url}/dismiss", {"reason": "both valid", "detail": "first look",
                                   "signature": conflict_holding_an_answer.signature})
    client.force_login(other_owner)
    stale_form = re.search(r'name="dismissed_at" value="([^"]+)"',
                           client.get(f"{url}/").content.decode())
    assert stale_form is not None
    client.post(f"{url}/reopen", {"dismissed_at": stale_form.group(1)})
    client.force_login(owner)
    client.post(f"{url}/dismiss", {"reason": "different plans", "detail": "second look",
                                   "signature": Conflict.objects.get().signature})
    client.force_login(other_owner)

    response = client.post(f"{url}/reopen", {"dismissed_at": stale_form.group(1)})

    assert response.status_code == 409
    page = response.content.decode()
    assert "dismissed again since you opened this page" in page and "second look" in page
    assert Conflict.objects.get().status == "dismissed"
    fresh = re.search(r'name="dismissed_at" value="([^"]+)"', page)
    assert fresh is not None
    assert client.post(f"{url}/reopen", {"dismissed_at": fresh.group(1)}).status_code == 302
    assert Conflict.objects.get().status == "open"


def test_verdicts_after_a_dismissal_or_a_reopening_name_it_as_their_cause(
    client: Any, owner: Any, reviewer: Any, admin_user: Any,
    conflict_holding_an_answer: Conflict, django_capture_on_commit_callbacks: Any,
) -> None:
    pk = conflict_holding_an_answer.pk
    client.force_login(owner)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/owner/conflicts/{pk}/dismiss",
                    {"reason": "different plans", "detail": "promo is for new teams",
                     "signature": conflict_holding_an_answer.signature})
    answer = Answer.objects.get(trace_id="t-1")
    assert answer.current_verdict.trigger == "dismissal"
    client.force_login(reviewer)
    page = client.get("/answers/t-1/").content.decode()
    assert re.search(r"current</span><br>.*?</td>\s*<td[^>]*>Conflict dismissed</td>", page, re.S)
    assert "Re-evaluated on request" not in page
    assert "data-current-not-newest" not in page  # the current verdict is the newest
    client.force_login(owner)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/owner/conflicts/{pk}/reopen")
    # The reopened conflict holds the answer again, on the verdict it was first held with.
    answer.refresh_from_db()
    assert answer.current_verdict.trigger == "ingest"
    client.force_login(reviewer)
    page = client.get("/answers/t-1/").content.decode()
    assert re.search(r"current</span> <span class=\"muted\" data-current-again>again: the "
                     r"sources and the conflicts on them came back to what this verdict saw"
                     r"</span><br>.*?</td>\s*"
                     r"<td[^>]*>Ingested</td>", page, re.S)
    # Above the table, a sentence says which one applies, since it is not the first row.
    first, newest = answer.verdicts.order_by("created_at", "id")
    assert answer.current_verdict == first
    said = re.search(r"<p class=\"hint\" data-current-not-newest>(.*?)</p>", page)
    assert said is not None and said.group(1) == (
        f"The current verdict is #{first.pk}, not the newest: after #{newest.pk}, the sources "
        f"and the conflicts on them came back to what #{first.pk} saw, so it applies again. "
        "It is marked below.")
    client.force_login(admin_user)
    jobs = client.get("/jobs/").content.decode()
    assert "Conflict dismissed" in jobs and "Conflict reopened" in jobs


def test_a_dismissal_says_beforehand_and_after_that_answers_retrieving_both_stay_held(
    client: Any, owner: Any, conflict_holding_an_answer: Conflict, submit: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    both = submit("both", as_of=None, retrieved=[
        {"cite": "d1", "document_id": "pricing", "revision": "r1"},
        {"cite": "d2", "document_id": "trial-promo", "revision": "r1"}]).json()
    assert both["status"] == "held"
    client.force_login(owner)
    before = client.get(f"/owner/conflicts/{conflict_holding_an_answer.pk}/").content.decode()
    form = before.split('action="/owner/conflicts/', 1)[1].split("</form>", 1)[0]
    assert "An answer that retrieved both documents, even citing only one" in form
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/owner/conflicts/{conflict_holding_an_answer.pk}/dismiss",
                    {"reason": "different plans", "detail": "promo is for new teams",
                     "signature": conflict_holding_an_answer.signature})
    page = client.get(f"/owner/conflicts/{conflict_holding_an_answer.pk}/").content.decode()
    assert "Still held over these values: 1 answer you may read in the review queue." in page
    assert "This conflict is holding" not in page
    assert ("An answer that retrieved both documents, even citing only one, still puts both "
            "values before its reader") in page


def test_publishing_a_corrected_revision_closes_the_conflict_and_clears_the_queue(
    client: Any,
    other_owner: Any,
    conflict_holding_an_answer: Conflict,
    django_capture_on_commit_callbacks: Any,
) -> None:
    document = Document.objects.get(key="trial-promo")
    fact = document.current_revision.facts.get()
    client.force_login(other_owner)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            "/owner/documents/trial-promo/publish",
            {
                "facts-TOTAL_FORMS": "1",
                "facts-INITIAL_FORMS": "1",
                "facts-0-fact_id": str(fact.pk),
                "facts-0-value": "14",
                "facts-0-valid_from": "2026-01-01",
                "facts-0-valid_until": "",
                "note": "Promo aligned with the policy",
            },
        )
    assert response.status_code == 302
    assert "/owner/progress" in response["Location"]
    document.refresh_from_db()
    assert document.current_revision.note == "Promo aligned with the policy"
    assert document.current_revision.facts.get().value == 14
    assert Conflict.objects.get().status == "closed"
    assert Answer.objects.get().status == "candidate"
    assert not ReviewItem.objects.exists()
    # Both owners' page of the closed conflict says what closed it, and shows the values that
    # disagreed as history: the promo's side is superseded, and neither side offers a fix.
    for who in ("oscar", "olivia"):
        client.force_login(User.objects.get(username=who))
        page = client.get(f"/owner/conflicts/{conflict_holding_an_answer.pk}/").content.decode()
        assert ("after a new revision of <code>trial-promo</code>: the documents no longer "
                "disagree") in page
        assert re.search(r"trial-promo@r1</code>\s*<span class=\"badge\">superseded</span>", page)
        assert "pricing@r1</code>\n" in page  # still current, so no badge
        assert "Correct this document" not in page
    # It has left the inbox's open conflicts, and is listed among those closed lately.
    inbox = client.get("/owner/").content.decode()
    assert "No open conflicts involve your documents." in inbox
    closed = inbox[inbox.index("Closed in the last 30 days"):]
    assert f'href="/owner/conflicts/{conflict_holding_an_answer.pk}/"' in closed


def test_a_conflict_closed_by_a_withdrawal_says_so(
    client: Any, owner: Any, other_owner: Any, conflict_holding_an_answer: Conflict
) -> None:
    client.force_login(other_owner)
    client.post("/owner/documents/trial-promo/withdraw", {"confirm": "trial-promo"})
    assert Conflict.objects.get().status == "closed"
    client.force_login(owner)
    page = client.get(f"/owner/conflicts/{conflict_holding_an_answer.pk}/").content.decode()
    assert ", when <code>trial-promo</code> was withdrawn." in page
    assert re.search(r"trial-promo@r1</code>\s*<span class=\"badge\">withdrawn</span>", page)


def test_a_value_that_changes_type_is_published_as_typed(
    client: Any, other_owner: Any, conflict_holding_an_answer: Conflict
) -> None:
    fact = Document.objects.get(key="trial-promo").current_revision.facts.get()
    client.force_login(other_owner)
    client.post(
        "/owner/documents/trial-promo/publish",
        {
            "facts-TOTAL_FORMS": "1",
            "facts-INITIAL_FORMS": "1",
            "facts-0-fact_id": str(fact.pk),
            "facts-0-value": '"30"',
            "facts-0-valid_from": "2026-01-01",
            "facts-0-valid_until": "",
        },
    )
    assert Document.objects.get(key="trial-promo").current_revision.facts.get().value == "30"


def test_the_document_page_says_how_many_answers_a_new_revision_sends_back(
    client: Any, owner: Any, other_owner: Any, conflict_holding_an_answer: Conflict, submit: Any,
) -> None:
    submit("t-2", as_of=None)  # a second answer citing pricing only
    client.force_login(other_owner)
    page = client.get("/owner/documents/trial-promo/").content.decode()
    assert "No answer retrieved this document." in page and "even one that only ends" not in page
    # A third that retrieved pricing without citing it: the gate checks it again too.
    submit("t-3", as_of=None, answer="The trial lasts 30 days [d2].",
           claims=[{"key": "trial_days", "value": 30, "cite": "d2"}],
           retrieved=[{"cite": "d1", "document_id": "pricing", "revision": "r1"},
                      {"cite": "d2", "document_id": "trial-promo", "revision": "r1"}])
    page = client.get("/owner/documents/trial-promo/").content.decode()
    assert "1 answer retrieved this document, citing it or not." in page
    client.force_login(owner)
    page = client.get("/owner/documents/pricing/").content.decode()
    assert "3 answers retrieved this document, citing it or not." in page
    assert "even one that only ends a fact's validity" in page
    assert ("those that only retrieved it get whatever verdict the gate now gives, and may be "
            "let through.") in page
    # The progress after a change counts those too: the two figures are told apart.
    assert ("Answers that claim one of its facts' keys without retrieving it are checked "
            "again too") in page


def test_ending_a_fact_publishes_a_revision_with_that_last_day(
    client: Any, other_owner: Any, conflict_holding_an_answer: Conflict
) -> None:
    fact = Document.objects.get(key="trial-promo").current_revision.facts.get()
    client.force_login(other_owner)
    response = client.post(
        "/owner/documents/trial-promo/end-validity",
        {"fact_id": str(fact.pk), "last_day": "2026-03-31"},
    )
    assert response.status_code == 302
    current = Document.objects.get(key="trial-promo").current_revision
    assert current.seq == 2
    assert str(current.facts.get().valid_until) == "2026-03-31"


def test_an_owner_cannot_correct_someone_elses_document(
    client: Any, owner: Any, conflict_holding_an_answer: Conflict
) -> None:
    client.force_login(owner)
    assert client.get("/owner/documents/trial-promo/").status_code == 404
    response = client.post("/owner/documents/trial-promo/withdraw", {"confirm": "trial-promo"})
    assert response.status_code == 404
    assert Document.objects.get(key="trial-promo").withdrawn_at is None


def test_the_withdraw_box_warns_that_answers_held_for_its_conflict_can_be_released(
    client: Any, other_owner: Any, conflict_holding_an_answer: Conflict, publish: Any
) -> None:
    client.force_login(other_owner)
    page = client.get("/owner/documents/trial-promo/").content.decode()
    warning = re.search(r"<p class=\"hint\" data-withdraw-releases>(.*?)</p>", page, re.S)
    assert warning is not None, page
    assert " ".join(warning.group(1).split()) == (
        "It is part of 1 open conflict, which it will leave: an answer held only for that "
        "conflict can then be released as a candidate, with no reviewer. 1 held answer you may "
        "read waits on it now. To settle a conflict, correct a value or dismiss the conflict "
        "instead.")
    # Once withdrawn, or for a document in no open conflict, the box says nothing of it.
    publish("faq", owner="oscar", facts=[fact("refund_days", 30)])
    assert "data-withdraw-releases" not in client.get("/owner/documents/faq/").content.decode()
    client.post("/owner/documents/trial-promo/withdraw", {"confirm": "trial-promo"})
    assert "data-withdraw-releases" not in client.get(
        "/owner/documents/trial-promo/").content.decode()


def test_withdrawing_needs_the_id_typed_to_confirm(
    client: Any, other_owner: Any, conflict_holding_an_answer: Conflict
) -> None:
    client.force_login(other_owner)
    response = client.post("/owner/documents/trial-promo/withdraw", {"confirm": "trial-prom"})
    assert Document.objects.get(key="trial-promo").withdrawn_at is None
    # Said at the field, with what was typed kept.
    assert response.status_code == 400
    page = response.content.decode()
    field = page.split('id="withdraw-confirm"', 1)[1].split(">", 1)[0]
    assert 'value="trial-prom"' in field and 'aria-invalid="true"' in field
    assert ('<ul class="errorlist" id="withdraw-error"><li>Type the document id to confirm the '
            "withdrawal.</li></ul>") in page
    client.post("/owner/documents/trial-promo/withdraw", {"confirm": "trial-promo"})
    withdrawn_at = Document.objects.get(key="trial-promo").withdrawn_at
    assert withdrawn_at is not None
    assert Conflict.objects.get().status == "closed"
    # Its page says so once, in the heading and first in its history.
    page = client.get("/owner/documents/trial-promo/").content.decode()
    assert page.count(">trial-promo<") == 1
    assert '<span class="badge tone-abstain" data-withdrawn>withdrawn</span>' in page
    logged = AuditEvent.objects.get(action="document.withdrawn").created_at
    assert (f"<li data-withdrawn-at>Withdrawn on {logged:%Y-%m-%d %H:%M} UTC · by "
            f"{other_owner.username}</li>") in page
    assert page.index("data-withdrawn-at") < page.index('<code class="rev">r1</code>')


def test_facts_ending_soon_are_listed_with_the_answers_resting_on_them(
    client: Any, publish: Any, submit: Any, owner: Any, today: Any
) -> None:
    from datetime import timedelta

    end = (today + timedelta(days=10)).isoformat()
    publish("pricing", facts=trial(14, end))
    submit(as_of=None)
    client.force_login(owner)
    page = client.get("/owner/").content.decode()
    assert "Facts that have ended or end within 30 days" in page
    assert "in 10 days" in page
    assert '<a href="/answers/t-1/">t-1</a> How long is the free trial?' in page


def _inbox_rows(page: str) -> list[str]:
    table = page.split("data-expiring", 1)[1].split("</table>", 1)[0]
    return [" ".join(re.sub(r"<[^>]+>", " ", row.split(">", 1)[1]).split())
            for row in table.split("<tr")[2:]]


def test_facts_that_have_ended_are_listed_first_with_the_answers_held_on_them(
    client: Any, publish: Any, submit: Any, owner: Any, today: Any
) -> None:
    """trial_days ended 12 days ago with nothing after it; seats ended too, but the document
    states seats again from then on, so nothing is missing there."""
    from datetime import timedelta

    ended = (today - timedelta(days=12)).isoformat()
    soon = (today + timedelta(days=3)).isoformat()
    publish("pricing", facts=[
        *trial(14, ended),
        {"key": "seats", "value": 5, "valid_from": "2026-01-01", "valid_until": ended,
         "span": "p1"},
        {"key": "seats", "value": 6, "valid_from": ended, "valid_until": None, "span": "p1"},
        {"key": "regions", "value": 3, "valid_from": "2026-01-01", "valid_until": soon,
         "span": "p1"},
    ])
    for n in range(7):
        assert submit(f"t-{n}", as_of=None).json()["status"] == "held"
    client.force_login(owner)
    rows = _inbox_rows(client.get("/owner/").content.decode())
    assert len(rows) == 2
    # The document by its title, with its id beside it, as under "My documents".
    assert rows[0].startswith(
        f"Pricing and plans pricing trial_days = 14 {ended} (ended 12 days ago) 7 t-6 ")
    # Five are listed, newest first, each by its trace id; the count says what is left out.
    assert [f"t-{n}" for n in (6, 5, 4, 3, 2)] == re.findall(r"\bt-\d\b", rows[0])
    assert "and 2 more" in rows[0]
    assert rows[1].startswith(f"Pricing and plans pricing regions = 3 {soon} (in 3 days) 0")


def test_answers_rest_on_the_fact_of_the_subject_they_claim(
    client: Any, publish: Any, submit: Any, owner: Any, today: Any
) -> None:
    from datetime import timedelta

    end = (today + timedelta(days=5)).isoformat()
    price = "monthly_price_usd"
    publish("plans", facts=[
        {"subject": subject, "key": price, "value": value, "valid_from": "2026-01-01",
         "valid_until": end, "span": "p1"} for subject, value in (("basic", 20), ("pro", 50))])
    retrieved = [{"cite": "d1", "document_id": "plans", "revision": "r1", "span": "p1"}]
    submit("t-pro", as_of=None, retrieved=retrieved, answer="Pro costs 50 [d1].",
           claims=[{"subject": "pro", "key": price, "value": 50, "cite": "d1"}])
    submit("t-any", as_of=None, retrieved=retrieved, answer="Prices start at 20 [d1].",
           claims=[{"key": price, "value": 20, "cite": "d1"}])
    client.force_login(owner)
    rows = _inbox_rows(client.get("/owner/").content.decode())
    basic, pro = (next(r for r in rows if f"{s} {price}" in r) for s in ("basic ·", "pro ·"))
    # A claim naming no subject asks about the key's facts of every subject, as in the gate.
    assert "t-any" in basic and "t-pro" not in basic
    assert "t-any" in pro and "t-pro" in pro


def test_a_fact_that_has_ended_is_marked_and_offered_for_correction_not_for_ending(
    client: Any, publish: Any, owner: Any, today: Any
) -> None:
    from datetime import timedelta

    ended = (today - timedelta(days=1)).isoformat()
    publish("pricing", facts=trial(14, ended))
    client.force_login(owner)
    page = client.get("/owner/documents/pricing/").content.decode()
    assert ('<code>trial_days</code> <span class="badge tone-abstain" data-ended>ended</span>'
            in page)
    assert 'name="last_day"' not in page
    assert ("Every fact of this revision has ended already: extend one by correcting its dates "
            "above.") in page


def test_a_conflict_side_from_a_document_the_owner_may_not_read_shows_nothing_of_it(
    client: Any, publish: Any, owner: Any, other_owner: Any, make_user: Any, admin_user: Any
) -> None:
    publish("pricing", facts=trial(14))
    publish("hr-trial", owner="oscar", facts=trial(30), principals=["group:hr"],
            title="Staff handbook", passages=[{"span": "p1", "text": "Staff get 30 days."}])
    conflict = Conflict.objects.get()
    client.force_login(owner)
    for url in ("/owner/", f"/owner/conflicts/{conflict.pk}/"):
        page = client.get(url).content.decode()
        assert "A document you may not read gives a different value." in page
        assert "pricing@r1" in page and "The free trial lasts 14 days." in page
        for secret in ("Staff get 30 days.", "Staff handbook", "hr-trial", "oscar", ">30<"):
            assert secret not in page, (url, secret)
    # The restricted document's own owner, and an admin in the group allowed, see both sides
    # in full.
    hr_admin = make_user("adam", "admin", groups=("hr",))
    for viewer in (other_owner, hr_admin):
        client.force_login(viewer)
        page = client.get(f"/owner/conflicts/{conflict.pk}/").content.decode()
        assert "Staff get 30 days." in page and "The free trial lasts 14 days." in page
        assert "may not read" not in page
    # An admin manages every document, and may resolve the conflict, but reads only what
    # their principals allow.
    client.force_login(admin_user)
    page = client.get(f"/owner/conflicts/{conflict.pk}/").content.decode()
    assert "A document you may not read gives a different value." in page
    assert "The free trial lasts 14 days." in page
    assert "Staff get 30 days." not in page and "Staff handbook" not in page


def test_an_admin_who_may_not_read_a_document_manages_it_without_seeing_its_text(
    client: Any, publish: Any, other_owner: Any, make_user: Any, admin_user: Any
) -> None:
    publish("hr-trial", owner="oscar", facts=trial(30), principals=["group:hr"],
            title="Staff handbook", passages=[{"span": "p1", "text": "Staff get 30 days."}])
    client.force_login(admin_user)
    response = client.get("/owner/documents/hr-trial/")
    assert response.status_code == 200
    page = response.content.decode()
    assert ("None of your principals may read this document, so its facts and passages are "
            "not shown here. Its owner, oscar, or someone allowed to read it can correct it; "
            "you can still withdraw it.") in page
    assert "hr-trial@r1" in page and "Withdraw the document" in page
    for secret in ("Staff get 30 days.", "Staff handbook", "trial_days", ">30<",
                   "Publish corrected revision", 'name="last_day"'):
        assert secret not in page, secret
    # Posting a correction anyway is refused, and says why; nothing is published.
    fact = Fact.objects.get(revision__document__key="hr-trial")
    for url, data in (
        ("/owner/documents/hr-trial/publish", {"revision": "r1", "note": "blind"}),
        ("/owner/documents/hr-trial/end-validity",
         {"fact_id": fact.pk, "last_day": "2026-01-01"}),
    ):
        refused = client.post(url, data)
        assert refused.status_code == 403, url
        text = refused.content.decode()
        assert "None of your principals may read this document, so you cannot correct it." in text
        assert "Staff get 30 days." not in text
    assert Revision.objects.filter(document__key="hr-trial").count() == 1
    # The document's owner, and an admin allowed to read it, see and correct it.
    for viewer in (other_owner, make_user("adam", "admin", groups=("hr",))):
        client.force_login(viewer)
        page = client.get("/owner/documents/hr-trial/").content.decode()
        assert "Staff get 30 days." in page and "Publish corrected revision" in page
        assert "data-unreadable" not in page


def post_correction(client: Any, document: str, fact_id: int, value: str) -> Any:
    """The correction form of revision r1, as its page drew it, with one value changed."""
    return client.post(f"/owner/documents/{document}/publish", {
        "revision": "r1", "facts-TOTAL_FORMS": "1", "facts-INITIAL_FORMS": "1",
        "facts-MIN_NUM_FORMS": "0", "facts-MAX_NUM_FORMS": "1000",
        "facts-0-fact_id": fact_id, "facts-0-value": value, "facts-0-valid_from": "2026-01-01",
        "facts-0-valid_until": ""})


def test_a_form_posted_with_a_restricted_older_revisions_fact_shows_nothing_of_it(
    client: Any, publish: Any, other_owner: Any, admin_user: Any
) -> None:
    """r1 was for HR only; r2 is public and no longer states the salary band. An admin outside
    HR reads r2, and posts r1's fact id (History names r1, fact ids count up) to the forms that
    carry an edit over to the current revision: neither page names the band or its value."""
    publish("handbook", owner="oscar", principals=["group:hr"], title="Staff handbook",
            facts=[{"subject": "layoffs-2027", "key": "band_b7", "value": 123456,
                    "valid_from": "2026-01-01", "valid_until": None, "span": "p1"}],
            passages=[{"span": "p1", "text": "Band B7 pays 123456."}])
    publish("handbook", revision="r2", owner="oscar", title="Handbook", facts=trial(14),
            passages=[{"span": "p1", "text": "The trial lasts 14 days."}])
    secret = Fact.objects.get(key="band_b7")
    client.force_login(admin_user)
    ended = client.post("/owner/documents/handbook/end-validity",
                        {"fact_id": secret.pk, "last_day": "2026-11-01"})
    published = post_correction(client, "handbook", secret.pk, "1")
    for response in (ended, published):
        page = response.content.decode()
        assert response.status_code in (403, 409), response.status_code
        for word in ("band_b7", "123456", "layoffs-2027", "Band B7"):
            assert word not in page, word
    assert "The trial lasts 14 days." in ended.content.decode()  # the current revision shows
    assert Revision.objects.filter(document__key="handbook").count() == 2


def test_a_withdrawn_document_one_may_not_read_cannot_be_corrected(
    client: Any, publish: Any, other_owner: Any, admin_user: Any, service_api: Any
) -> None:
    """Checking a correction against the passages of a revision one may not read would tell
    what they say: the withdrawn HR document refuses it, as a current one does."""
    publish("hr-trial", owner="oscar", facts=trial(30), principals=["group:hr"],
            title="Staff handbook", passages=[{"span": "p1", "text": "Staff get 30 days."}])
    assert service_api.delete("/api/v1/documents/hr-trial").status_code == 200
    fact = Fact.objects.get(revision__document__key="hr-trial")
    client.force_login(admin_user)
    refused = post_correction(client, "hr-trial", fact.pk, "31")
    assert refused.status_code == 403
    page = refused.content.decode()
    assert "None of your principals may read this document, so you cannot correct it." in page
    assert "still says" not in page and "Staff get 30 days." not in page


def test_the_inbox_reads_its_conflicts_in_queries_that_do_not_grow_with_them(
    client: Any, publish: Any, owner: Any, other_owner: Any
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def inbox_queries() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert client.get("/owner/").status_code == 200
        return len(queries)

    client.force_login(owner)
    publish("pricing", facts=trial(14))
    publish("trial-promo", owner="oscar", facts=trial(30))
    one = inbox_queries()
    def more(value: int) -> list[dict[str, Any]]:
        return [{"key": key, "value": value, "valid_from": "2026-01-01", "valid_until": None,
                 "span": "p1"} for key in ("seats", "regions", "retention")]

    publish("pricing", revision="r2", facts=[*trial(14), *more(2)])
    publish("trial-promo", revision="r2", owner="oscar", facts=[*trial(30), *more(1)])
    assert Conflict.objects.exclude(status="closed").count() == 4
    assert inbox_queries() == one


def test_facts_ending_soon_list_only_answers_the_owner_may_read(
    client: Any, publish: Any, submit: Any, owner: Any, other_owner: Any, today: Any
) -> None:
    from datetime import timedelta

    end = (today + timedelta(days=10)).isoformat()
    publish("pricing", facts=trial(14, end))
    publish("hr-doc", owner="oscar", principals=["group:hr"],
            facts=[{"key": "probation", "value": 90, "valid_from": "2026-01-01",
                    "valid_until": None, "span": "p1"}])
    submit("t-open", as_of=None)
    hr = submit("t-hr", as_of=None, asked_by=["group:hr"], retrieved=[
        {"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"},
        {"cite": "d2", "document_id": "hr-doc", "revision": "r1", "span": "p1"},
    ])
    assert hr.status_code == 201, hr.content
    Answer.objects.filter(trace_id="t-hr").update(question="Why was Bob dismissed?")
    client.force_login(owner)
    page = client.get("/owner/").content.decode()
    assert "How long is the free trial?" in page and "/answers/t-open/" in page
    assert "Bob" not in page and "t-hr" not in page
    assert "and 1 you may not read" in page


def test_times_just_past_and_a_last_day_today_read_as_such(
    client: Any, owner: Any, publish: Any, make_user: Any
) -> None:
    make_user("oscar", "owner")
    publish("pricing", facts=[fact("trial_days", 14, end=0)])
    publish("trial-promo", owner="oscar", facts=[fact("trial_days", 30)])
    client.force_login(owner)
    page = re.sub(r"\s+", " ", client.get("/owner/").content.decode())
    assert "opened just now" in page and "0 minutes" not in page
    assert "(today)" in page and "in 0 days" not in page
    japanese = client.get("/owner/", HTTP_ACCEPT_LANGUAGE="ja").content.decode()
    assert "発生: たった今" in japanese and "(本日)" in japanese


def test_a_dismissal_refused_as_made_meanwhile_gives_back_the_reason_in_words(
    client: Any, owner: Any, other_owner: Any, conflict_holding_an_answer: Conflict
) -> None:
    url = f"/owner/conflicts/{conflict_holding_an_answer.pk}"
    signature = conflict_holding_an_answer.signature
    client.force_login(other_owner)
    client.post(f"{url}/dismiss", {"reason": "different plans", "signature": signature})
    client.force_login(owner)
    response = client.post(f"{url}/dismiss", {"reason": "both valid", "detail": "my look",
                                              "signature": signature})
    page = re.sub(r"\s+", " ", response.content.decode())
    assert "Your justification, not recorded: Both values are valid" in page
    assert "my look" in page


def test_the_withdraw_box_says_what_the_withdrawal_does_to_citing_and_retrieving_answers(
    client: Any, owner: Any, publish: Any, submit: Any, django_capture_on_commit_callbacks: Any,
) -> None:
    publish("pricing", facts=[fact("trial_days", 14)])
    publish("faq", facts=[fact("trial_days", 14)])
    both = [{"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"},
            {"cite": "d2", "document_id": "faq", "revision": "r1", "span": "p1"}]
    submit("t-cites", as_of=None, retrieved=both,
           answer="The free trial lasts 14 days [d1] [d2].",
           claims=[{"key": "trial_days", "value": 14, "cite": "d2"}])
    submit("t-marks", as_of=None, retrieved=both,  # [d2] in its text, in no claim
           answer="The free trial lasts 14 days [d1] [d2].",
           claims=[{"key": "trial_days", "value": 14, "cite": "d1"}])
    submit("t-retrieves", as_of=None, retrieved=both,
           answer="The free trial lasts 14 days [d1].",
           claims=[{"key": "trial_days", "value": 14, "cite": "d1"}])
    client.force_login(owner)
    page = client.get("/owner/documents/faq/").content.decode()
    hint = re.search(r"<p class=\"hint\" data-withdraw-effect>(.*?)</p>", page, re.S)
    assert hint is not None, page
    assert hint.group(1).startswith(
        "An answer that cites it, in a claim or with a mark in its text, will abstain: the "
        "citation no longer resolves. An answer that only retrieved it is checked again without "
        "it, and may be released.")
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/owner/documents/faq/withdraw", {"confirm": "faq"})
    # As the box said.
    assert dict(Answer.objects.values_list("trace_id", "status")) == {
        "t-cites": "abstained", "t-marks": "abstained", "t-retrieves": "candidate"}


def _reopened_line(client: Any, conflict: Conflict) -> str | None:
    page = client.get(f"/owner/conflicts/{conflict.pk}/").content.decode()
    line = re.search(r"<p class=\"card hint\" data-reopened>(.*?)</p>", page, re.S)
    return re.sub(r"<[^>]+>", "", line.group(1)) if line else None


def _dismiss(client: Any, conflict: Conflict) -> None:
    conflict.refresh_from_db()
    response = client.post(f"/owner/conflicts/{conflict.pk}/dismiss",
                           {"reason": "both valid", "signature": conflict.signature})
    assert response.status_code == 302, response.content.decode()


def test_the_conflict_page_says_who_or_what_reopened_a_dismissal(
    client: Any, owner: Any, other_owner: Any, conflict_holding_an_answer: Conflict,
    publish: Any, make_user: Any,
) -> None:
    conflict = conflict_holding_an_answer
    client.force_login(owner)
    assert _reopened_line(client, conflict) is None  # opened, never dismissed
    _dismiss(client, conflict)
    assert _reopened_line(client, conflict) is None
    # By hand: olivia, whose dismissal it was, reads who undid it.
    client.force_login(other_owner)
    client.post(f"/owner/conflicts/{conflict.pk}/reopen")
    client.force_login(owner)
    line = _reopened_line(client, conflict)
    assert line is not None and re.fullmatch(
        r"Reopened by oscar on \d{4}-\d\d-\d\d \d\d:\d\d UTC: the dismissal no longer "
        r"holds\.", line)
    # By a revision of a document she may read.
    _dismiss(client, conflict)
    publish("trial-promo", revision="r2", owner="oscar", facts=trial(31))
    assert Conflict.objects.get().status == "open"
    assert _reopened_line(client, conflict).endswith(  # type: ignore[union-attr]
        ", when a revision of trial-promo changed the values it had been dismissed for.")
    # By a document she may not read, which she is not named.
    _dismiss(client, conflict)
    make_user("hugo", "owner", groups=("hr",))
    publish("hr-trial", owner="hugo", principals=["group:hr"], facts=trial(45))
    line = _reopened_line(client, conflict)
    assert line is not None and line.endswith(
        ", when a change to a document you may not read changed the values it had been "
        "dismissed for.") and "hr-trial" not in line
    # Once dismissed again (by hugo, who may read every document), it says nothing of it.
    client.force_login(type(owner).objects.get(username="hugo"))
    _dismiss(client, conflict)
    assert _reopened_line(client, conflict) is None
    # A withdrawal only takes values away from those judged: the dismissal stands.
    client.force_login(other_owner)
    client.post("/owner/documents/trial-promo/withdraw", {"confirm": "trial-promo"})
    assert Conflict.objects.get().status == "dismissed"
    client.force_login(owner)
    assert _reopened_line(client, conflict) is None


def test_a_conflict_closed_by_withdrawing_a_document_the_owner_may_not_read_says_so(
    client: Any, owner: Any, publish: Any, make_user: Any,
) -> None:
    hugo = make_user("hugo", "owner", groups=("hr",))
    publish("pricing", facts=trial(14))
    publish("hr-trial", owner="hugo", principals=["group:hr"], facts=trial(45))
    conflict = Conflict.objects.get()
    client.force_login(hugo)
    client.post("/owner/documents/hr-trial/withdraw", {"confirm": "hr-trial"})
    assert Conflict.objects.get().status == "closed"
    client.force_login(owner)
    page = client.get(f"/owner/conflicts/{conflict.pk}/").content.decode()
    closed = re.search(r"<div class=\"card\" data-closed>\s*<p>(.*?)</p>", page, re.S)
    assert closed is not None and re.fullmatch(
        r"Closed on \d{4}-\d\d-\d\d \d\d:\d\d UTC, when a document you may not read was "
        r"withdrawn\.", closed.group(1)), page
    assert "hr-trial" not in page


def test_a_form_of_a_revision_one_may_no_longer_read_gets_the_current_revision_to_correct(
    client: Any, publish: Any, other_owner: Any, make_user: Any
) -> None:
    """ada read r1 (HR only) in group hr, then left it; r2, public, came meanwhile. Her r1
    form is not refused as unreadable: she gets r2, which she may correct."""
    from django.contrib.auth.models import Group

    ada = make_user("ada", "admin", groups=("hr",))
    publish("handbook", owner="oscar", principals=["group:hr"], facts=trial(30),
            passages=[{"span": "p1", "text": "Staff get 30 days."}])
    fact = Fact.objects.get(revision__document__key="handbook")
    ada.groups.remove(Group.objects.get(name="hr"))
    publish("handbook", revision="r2", owner="oscar", facts=trial(14),
            passages=[{"span": "p1", "text": "The trial lasts 14 days."}])
    client.force_login(ada)
    response = post_correction(client, "handbook", fact.pk, "31")
    page = response.content.decode()
    assert response.status_code == 409
    assert "The trial lasts 14 days." in page and "Staff get 30 days." not in page
    assert "None of your principals may read this document" not in page


def test_the_withdraw_box_counts_an_answer_held_by_two_conflicts_once(
    client: Any, owner: Any, make_user: Any, publish: Any, submit: Any
) -> None:
    make_user("oscar", "owner")
    publish("pricing", facts=[fact("trial_days", 14), fact("seats", 5)],
            passages=[{"span": "p1", "text": "The trial lasts 14 days and a plan has 5 seats."}])
    publish("trial-promo", owner="oscar", facts=[fact("trial_days", 30), fact("seats", 6)],
            passages=[{"span": "p1", "text": "The trial lasts 30 days and a plan has 6 seats."}])
    assert Conflict.objects.filter(status="open").count() == 2
    body = submit(as_of=None, answer="The trial lasts 14 days and a plan has 5 seats [d1].",
                  claims=[{"key": "trial_days", "value": 14, "cite": "d1"},
                          {"key": "seats", "value": 5, "cite": "d1"}]).json()
    assert body["status"] == "held", body
    client.force_login(owner)
    page = client.get("/owner/documents/pricing/").content.decode()
    warning = re.search(r"<p class=\"hint\" data-withdraw-releases>(.*?)</p>", page, re.S)
    assert warning is not None, page
    # It said "2 held answers you may read wait on them now."
    assert "1 held answer you may read waits on them now." in " ".join(
        warning.group(1).split())


def test_the_document_page_tells_two_conflicts_on_one_key_apart_by_their_subjects(
    client: Any, owner: Any, make_user: Any, publish: Any
) -> None:
    make_user("oscar", "owner")
    publish("refunds", facts=[fact("refund_days", 14, subject="EU"),
                              fact("refund_days", 30, subject="US")],
            passages=[{"span": "p1", "text": "EU: 14 days. US: 30 days."}])
    publish("refunds-faq", owner="oscar", facts=[fact("refund_days", 21, subject="EU"),
                                                 fact("refund_days", 45, subject="US")],
            passages=[{"span": "p1", "text": "EU: 21 days. US: 45 days."}])
    assert sorted(Conflict.objects.values_list("subject", flat=True)) == ["EU", "US"]
    client.force_login(owner)

    def banners(language: str) -> list[str]:
        page = client.get("/owner/documents/refunds/",
                          HTTP_ACCEPT_LANGUAGE=language).content.decode()
        return sorted(" ".join(re.sub(r"<[^>]+>", " ", b).split())
                      for b in re.findall(r'<p class="banner">(.*?)</p>', page, re.S)
                      if "/owner/conflicts/" in b)

    assert banners("en") == ["Conflict on EU · refund_days (Open)",
                             "Conflict on US · refund_days (Open)"]
    assert [b for b in banners("ja") if "Conflict" in b] == []
