"""The owner pages: what they name and show, and what they keep of what the owner typed."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest

from reviewqueue.jobs.models import Job
from reviewqueue.sources.models import Conflict, Document
from tests.reviews.conftest import days, fact

pytestmark = pytest.mark.django_db


@pytest.fixture
def secret_conflict(make_user: Any, publish: Any, owner: Any) -> Conflict:
    make_user("hugo", "owner", groups=("hr",))
    publish("pricing", facts=[fact("trial_days", 14)])
    publish("secret-hr-salary-plan", owner="hugo", principals=["group:hr"],
            facts=[fact("trial_days", 90)])
    return Conflict.objects.get()


MAY_NOT_JUDGE = ("You may not read every document of this conflict, so you cannot say that "
                 "their values agree.")


@pytest.mark.parametrize("who", ["olivia", "ada"])
def test_who_may_not_read_every_side_is_not_offered_the_dismissal_and_is_refused_it(
    client: Any, make_user: Any, owner: Any, secret_conflict: Conflict, who: str
) -> None:
    # olivia owns the other side; ada is an admin in no group.
    client.force_login(owner if who == "olivia" else make_user("ada", "admin"))
    page = client.get(f"/owner/conflicts/{secret_conflict.pk}/").content.decode()
    assert MAY_NOT_JUDGE in page
    assert "Dismiss the conflict" not in page
    response = client.post(f"/owner/conflicts/{secret_conflict.pk}/dismiss",
                           {"reason": "both valid", "signature": secret_conflict.signature})
    assert response.status_code == 403
    assert MAY_NOT_JUDGE in response.content.decode()
    assert "secret-hr-salary-plan" not in response.content.decode()
    secret_conflict.refresh_from_db()
    assert secret_conflict.status == Conflict.Status.OPEN
    assert not Job.objects.filter(trigger="dismissal").exists()


def test_the_restricted_documents_owner_still_follows_its_job(
    client: Any, make_user: Any, publish: Any, owner: Any, django_capture_on_commit_callbacks: Any
) -> None:
    hugo = make_user("hugo", "owner", groups=("hr",))
    publish("pricing", facts=[fact("trial_days", 14)])
    publish("secret-hr-salary-plan", owner="hugo", principals=["group:hr"],
            facts=[fact("trial_days", 90)])
    conflict = Conflict.objects.get()
    client.force_login(hugo)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/owner/conflicts/{conflict.pk}/dismiss",
                               {"reason": "both valid", "signature": conflict.signature})
    assert "pricing" in response["Location"] and "secret-hr-salary-plan" in response["Location"]
    assert Job.objects.get(document_key="secret-hr-salary-plan",
                           trigger="dismissal").requested_by == hugo


def test_withdrawing_names_no_document_the_owner_may_not_read(
    client: Any, owner: Any, secret_conflict: Conflict, django_capture_on_commit_callbacks: Any
) -> None:
    client.force_login(owner)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/owner/documents/pricing/withdraw", {"confirm": "pricing"})
    assert response.status_code == 302
    assert "secret-hr-salary-plan" not in response["Location"]
    assert "secret-hr-salary-plan" not in client.get(response["Location"]).content.decode()


# --- Text values the owner did not touch survive a correction -------------------------------


# What an owner sends who ticked "The passages are right as they are": tests about something
# else send it with a corrected value whose passage still says the old one
# (test_passage_left_behind.py is about that box).
PASSAGES_CHECKED = {"passages_checked": "1"}


def posted_back(page: str, action: str, **typed: str) -> dict[str, str]:
    """Every input of the form posting to `action`, as rendered, with `typed` over some."""
    form = re.search(rf'<form[^>]*action="{re.escape(action)}".*?</form>', page, re.S)
    assert form is not None, f"no form posting to {action}"
    data = {}
    for tag in re.findall(r"<input[^>]*>", form.group(0)):
        name = re.search(r'name="([^"]*)"', tag)
        value = re.search(r'value="([^"]*)"', tag)
        if name:
            data[name.group(1)] = html.unescape(value.group(1)) if value else ""
    for name, text in re.findall(r'<textarea[^>]*name="([^"]*)"[^>]*>(.*?)</textarea>',
                                 form.group(0), re.S):
        data[name] = html.unescape(text).removeprefix("\n")
    for name, options in re.findall(r'<select[^>]*name="([^"]*)"[^>]*>(.*?)</select>',
                                    form.group(0), re.S):
        chosen = re.search(r'<option value="([^"]*)"[^>]*selected', options)
        data[name] = html.unescape(chosen.group(1)) if chosen else ""
    return data | typed


@pytest.mark.parametrize("untouched", ["  padded  ", "", "two\nlines", "14", "null"])
def test_a_text_value_left_alone_is_republished_exactly(
    client: Any, owner: Any, publish: Any, untouched: str
) -> None:
    publish("pricing", facts=[fact("trial_days", 14), fact("motto", untouched)])
    client.force_login(owner)
    page = client.get("/owner/documents/pricing/").content.decode()
    action = "/owner/documents/pricing/publish"
    response = client.post(action, posted_back(page, action, **{"facts-0-value": "21"},
                                                **PASSAGES_CHECKED))
    assert response.status_code == 302, response.content.decode()
    revision = Document.objects.get(key="pricing").current_revision
    assert revision.revision != "r1"
    assert [f.value for f in revision.facts.order_by("position")] == [21, untouched]


# --- Conflict pages show the difference -----------------------------------------------------


def test_a_number_and_the_same_digits_as_text_look_different(
    client: Any, make_user: Any, publish: Any, owner: Any, admin_user: Any
) -> None:
    make_user("oscar", "owner")
    publish("pricing", facts=[fact("trial_days", 14), fact("annual", True)])
    publish("trial-promo", owner="oscar", facts=[fact("trial_days", "14")])
    conflict = Conflict.objects.get()
    client.force_login(owner)
    page = client.get(f"/owner/conflicts/{conflict.pk}/").content.decode()
    assert "<code>14</code>" in page and "<code>&quot;14&quot;</code>" in page
    document = client.get("/owner/documents/pricing/").content.decode()
    assert "<code>true</code>" in document and "True" not in document
    # An admin may correct either document from the conflict page.
    client.force_login(admin_user)
    page = client.get(f"/owner/conflicts/{conflict.pk}/").content.decode()
    assert 'href="/owner/documents/pricing/"' in page
    assert 'href="/owner/documents/trial-promo/"' in page


def test_facts_ending_soon_show_their_typed_value(
    client: Any, publish: Any, owner: Any
) -> None:
    publish("pricing", facts=[fact("trial_days", "14", end=10)])
    client.force_login(owner)
    page = client.get("/owner/").content.decode()
    assert "<code>&quot;14&quot;</code>" in page


# --- A dismissal covers the revisions the owner judged --------------------------------------


def test_a_dismissal_after_a_new_revision_is_refused_keeping_the_text(
    client: Any, owner: Any, publish: Any, two_owners_disagree: Conflict
) -> None:
    conflict = two_owners_disagree
    client.force_login(owner)
    page = client.get(f"/owner/conflicts/{conflict.pk}/").content.decode()
    action = f"/owner/conflicts/{conflict.pk}/dismiss"
    typed = posted_back(page, action, reason="other", detail="promo is for new teams")
    publish("trial-promo", revision="r2", owner="oscar", facts=[fact("trial_days", 45)])
    response = client.post(action, typed)
    assert response.status_code == 409
    page = response.content.decode()
    assert "has a new revision since you opened it" in page
    assert "promo is for new teams" in page and "trial-promo@r2" in page
    assert Conflict.objects.get().status == "open"
    # Submitted again from that page, it covers r2.
    response = client.post(action, posted_back(page, action))
    assert response.status_code == 302
    dismissed = Conflict.objects.get()
    assert dismissed.status == "dismissed"
    assert dismissed.dismissal_reason == "other: promo is for new teams"
    assert dismissed.dismissed_signature == dismissed.signature != conflict.signature
    page = client.get(f"/owner/conflicts/{conflict.pk}/").content.decode()
    assert "Other: promo is for new teams" in page  # not the form's "(explain below)"
    assert "explain below): promo" not in page


def test_a_dismissal_a_colleague_beat_shows_the_text_that_was_not_recorded(
    client: Any, owner: Any, two_owners_disagree: Conflict
) -> None:
    conflict = two_owners_disagree
    colleague = client_for(type(owner).objects.get(username="oscar"))
    colleague.post(f"/owner/conflicts/{conflict.pk}/dismiss",
                   {"reason": "both valid", "signature": conflict.signature})
    client.force_login(owner)
    response = client.post(f"/owner/conflicts/{conflict.pk}/dismiss",
                           {"reason": "other", "detail": "my careful reasoning",
                            "signature": conflict.signature})
    assert response.status_code == 409
    page = response.content.decode()
    assert "This conflict was resolved while you were writing." in page
    assert "my careful reasoning" in page
    assert "not open" not in page
    assert Conflict.objects.get().dismissal_reason == "both valid"


def test_a_dismissal_sent_twice_by_a_double_click_is_not_said_to_be_unrecorded(
    client: Any, owner: Any, two_owners_disagree: Conflict
) -> None:
    conflict = two_owners_disagree
    client.force_login(owner)
    action = f"/owner/conflicts/{conflict.pk}/dismiss"
    typed = {"reason": "different plans", "detail": "Pro and Basic", "signature":
             conflict.signature}
    assert client.post(action, typed).status_code == 302
    # The second click's request: the browser shows its reply, not the first one's.
    response = client.post(action, typed, follow=True)
    page = response.content.decode()
    assert response.redirect_chain and response.redirect_chain[-1][0].startswith(
        "/owner/progress?")
    assert "not recorded" not in page
    assert "You dismissed the conflict" in page
    assert Conflict.objects.get().dismissal_reason == "different plans: Pro and Basic"


def test_a_second_dismissal_with_other_words_from_another_tab_is_still_refused(
    client: Any, owner: Any, two_owners_disagree: Conflict
) -> None:
    conflict = two_owners_disagree
    client.force_login(owner)
    action = f"/owner/conflicts/{conflict.pk}/dismiss"
    client.post(action, {"reason": "both valid", "signature": conflict.signature})
    response = client.post(action, {"reason": "other", "detail": "second thoughts",
                                    "signature": conflict.signature})
    assert response.status_code == 409
    assert "Your justification was not recorded" in response.content.decode()
    assert Conflict.objects.get().dismissal_reason == "both valid"


def test_a_reopening_sent_twice_by_a_double_click_leads_to_what_it_did(
    client: Any, owner: Any, two_owners_disagree: Conflict
) -> None:
    conflict = two_owners_disagree
    conflict_dismiss_directly(conflict)
    client.force_login(owner)
    page = client.get(f"/owner/conflicts/{conflict.pk}/").content.decode()
    action = f"/owner/conflicts/{conflict.pk}/reopen"
    typed = posted_back(page, action)
    assert client.post(action, typed).status_code == 302
    response = client.post(action, typed, follow=True)
    page = response.content.decode()
    assert response.redirect_chain[-1][0].startswith("/owner/progress?")
    assert "there is nothing to reopen" not in page
    assert "You reopened the conflict" in page
    assert Conflict.objects.get().status == "open"


def test_the_refusal_is_in_japanese(client: Any, owner: Any, two_owners_disagree: Conflict) -> None:
    conflict = two_owners_disagree
    conflict_dismiss_directly(conflict)
    client.force_login(owner)
    response = client.post(f"/owner/conflicts/{conflict.pk}/dismiss",
                           {"reason": "both valid", "signature": conflict.signature},
                           HTTP_ACCEPT_LANGUAGE="ja")
    assert response.status_code == 409
    assert "入力中に、この矛盾は別の操作で解決されました。" in response.content.decode()


def client_for(user: Any) -> Any:
    from django.test import Client

    other = Client()
    other.force_login(user)
    return other


def conflict_dismiss_directly(conflict: Conflict) -> None:
    from reviewqueue.audit.services import SYSTEM
    from reviewqueue.sources.conflicts import conflict_dismiss

    conflict_dismiss(conflict_id=conflict.pk, reason="both valid", user=None, actor=SYSTEM)


# --- Ending a fact's validity after another revision was published --------------------------


def test_ending_a_fact_of_an_older_revision_keeps_the_typed_day_and_note(
    client: Any, owner: Any, publish: Any
) -> None:
    publish("pricing", facts=[fact("seats", 5), fact("trial_days", 14)])
    old = Document.objects.get(key="pricing").current_revision.facts.get(key="trial_days")
    publish("pricing", revision="r2", facts=[fact("trial_days", 14), fact("seats", 10)])
    new = Document.objects.get(key="pricing").current_revision.facts.get(key="trial_days")
    client.force_login(owner)
    response = client.post("/owner/documents/pricing/end-validity",
                           {"fact_id": str(old.pk), "last_day": days(20), "note": "Promo over"})
    assert response.status_code == 409
    page = response.content.decode()
    assert "revision r2 was published" in page
    assert "not a fact of the current revision" not in page
    # The typed day and note now sit on r2's trial_days row, ready to submit again.
    form = re.search(rf'<input[^>]*name="fact_id" value="{new.pk}"[^>]*>(.*?)</form>', page, re.S)
    assert form is not None
    assert f'value="{days(20)}"' in form.group(1) and 'value="Promo over"' in form.group(1)
    assert Document.objects.get(key="pricing").current_revision.revision == "r2"


def test_ending_a_fact_the_new_revision_dropped_shows_what_was_typed(
    client: Any, owner: Any, publish: Any
) -> None:
    publish("pricing", facts=[fact("seats", 5), fact("trial_days", 14)])
    old = Document.objects.get(key="pricing").current_revision.facts.get(key="trial_days")
    publish("pricing", revision="r2", facts=[fact("seats", 10)])
    client.force_login(owner)
    response = client.post("/owner/documents/pricing/end-validity",
                           {"fact_id": str(old.pk), "last_day": days(20), "note": "Promo <b>over"})
    assert response.status_code == 409
    page = response.content.decode()
    assert "revision r2 was published" in page
    [banner] = re.findall(r"<div class=\"banner error\" data-unplaced-end>(.*?)</div>", page, re.S)
    assert "The fact you were ending is no longer in this revision" in banner
    assert "<code>trial_days</code> = <code>14</code>" in banner
    assert days(20) in banner
    assert "Promo &lt;b&gt;over" in banner and "<b>" not in banner
    # r2's only fact, seats, is offered with today's date, not with what was typed for trial_days.
    assert 'value="Promo &lt;b&gt;over"' not in page


@pytest.mark.parametrize(("language", "note"), [("en", "trial_days ends on {day}"),
                                                ("ja", "trial_days は {day} で終了")])
def test_ending_a_fact_without_a_note_writes_one_in_the_owners_language(
    client: Any, owner: Any, publish: Any, language: str, note: str
) -> None:
    publish("pricing", facts=[fact("trial_days", 14)])
    trial = Document.objects.get(key="pricing").current_revision.facts.get()
    client.force_login(owner)
    response = client.post("/owner/documents/pricing/end-validity",
                           {"fact_id": str(trial.pk), "last_day": days(20), "note": ""},
                           HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 302
    assert Document.objects.get(key="pricing").current_revision.note == note.format(day=days(20))


def test_a_note_too_long_says_so_and_not_something_about_the_day(
    client: Any, owner: Any, publish: Any
) -> None:
    publish("pricing", facts=[fact("trial_days", 14)])
    trial = Document.objects.get(key="pricing").current_revision.facts.get()
    client.force_login(owner)
    response = client.post("/owner/documents/pricing/end-validity",
                           {"fact_id": str(trial.pk), "last_day": days(20), "note": "n" * 5001})
    assert response.status_code == 400
    page = response.content.decode()
    assert "Keep the note to 5,000 characters at most." in page
    assert "YYYY-MM-DD" not in page
    assert f'value="{days(20)}"' in page


def test_a_conflict_closed_by_a_document_the_owner_may_not_read_does_not_name_it(
    client: Any, owner: Any, publish: Any, secret_conflict: Conflict,
) -> None:
    publish("secret-hr-salary-plan", "r2", owner="hugo", principals=["group:hr"],
            facts=[fact("trial_days", 14)])
    client.force_login(owner)
    page = client.get(f"/owner/conflicts/{secret_conflict.pk}/").content.decode()
    assert "Closed on " in page and ": the documents no longer disagree over any period" in page
    assert "secret-hr-salary-plan" not in page and "after a new revision of" not in page


def test_a_closed_conflict_shows_no_side_from_a_revision_the_owner_could_not_read(
    client: Any, owner: Any, publish: Any, secret_conflict: Conflict,
) -> None:
    # The salary plan is made public by the revision that closes the conflict; the revision
    # that disagreed was for HR only, and stays so.
    publish("secret-hr-salary-plan", "r2", owner="hugo", principals=["*"],
            title="Salary plan, public", facts=[fact("trial_days", 14)])
    client.force_login(owner)
    page = client.get(f"/owner/conflicts/{secret_conflict.pk}/").content.decode()
    assert "after a new revision of <code>secret-hr-salary-plan</code>" in page  # public now
    assert "A document you may not read gives a different value." in page
    assert "secret-hr-salary-plan@r1" not in page and "<code>90</code>" not in page


def test_ending_a_fact_of_another_document_says_so_in_a_sentence(
    client: Any, owner: Any, publish: Any
) -> None:
    """A form posted with another document's fact id (a stale or altered page): the page says
    what went wrong in words, not as a field name and a code's message."""
    publish("pricing", facts=[fact("trial_days", 14)])
    publish("faq", facts=[fact("seats", 5)])
    other = Document.objects.get(key="faq").current_revision.facts.get()
    client.force_login(owner)
    response = client.post("/owner/documents/pricing/end-validity",
                           {"fact_id": str(other.pk), "last_day": days(20)})
    assert response.status_code == 400
    page = response.content.decode()
    assert ("The fact you were ending is not one of this document&#x27;s: open the document "
            "again and end one of the facts it lists.") in page
    assert "fact: " not in page and "Hidden field" not in page


def test_a_fact_valid_on_one_day_offers_no_day_to_end_on_and_says_why(
    client: Any, owner: Any, publish: Any
) -> None:
    publish("pricing", facts=[fact("trial_days", 14, start=0, end=0),
                              fact("support_hours", "24/7", start=0, end=1)])
    client.force_login(owner)

    page = client.get("/owner/documents/pricing/").content.decode()

    # Only the two-day fact has a picker: its last day can be today (min and max both today).
    assert page.count('action="/owner/documents/pricing/end-validity"') == 1
    assert f'min="{days(0)}"' in page and f'max="{days(0)}"' in page
    assert f'max="{days(-1)}"' not in page  # no picker whose last day comes before its first
    assert "It holds on one day only, so it cannot end any earlier" in page
