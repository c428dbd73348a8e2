"""What a reviewer or an owner typed and has not sent, a second press of a button, and a screen
left alone with an item open, in a real browser."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from reviewqueue.reviews.models import Decision
from tests.browser.test_workspace import open_item_renewed, renewal

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

REWRITE = "The free trial lasts 14 days for every new team [d1]."


def open_held(page: Any, live_server: Any) -> None:
    """From the queue, which claims the answer for the reviewer."""
    if page.url != f"{live_server.url}/":
        page.goto(f"{live_server.url}/")
    open_item_renewed(page, "t-1")


@pytest.fixture
def alice_on_t1(hold: Any, reviewer: Any, sign_in: Any, live_server: Any) -> Any:
    """alice's page on the held answer t-1, which she holds."""
    hold()
    page = sign_in("alice")
    open_held(page, live_server)
    return page


def test_leaving_with_a_rewrite_typed_asks_first_and_keeps_it(
    alice_on_t1: Any, live_server: Any
) -> None:
    page = alice_on_t1
    asked: list[str] = []
    page.on("dialog", lambda dialog: (asked.append(dialog.type), dialog.dismiss()))
    # Nothing typed: the queue link just goes.
    page.locator(".crumbs a").first.click()
    page.wait_for_url(f"{live_server.url}/")
    assert asked == []
    open_held(page, live_server)
    page.locator("#decide [data-action=edit] summary").click()
    page.locator("#decide textarea[name=edit-answer]").fill(REWRITE)
    page.locator(".crumbs a").first.click()
    page.wait_for_timeout(1500)
    assert asked == ["beforeunload"]
    assert page.url == f"{live_server.url}/answers/t-1/"
    expect(page.locator("#decide textarea[name=edit-answer]")).to_have_value(REWRITE)


def test_leaving_with_a_note_to_the_owners_typed_asks_first_and_keeps_it(
    alice_on_t1: Any, live_server: Any
) -> None:
    page = alice_on_t1
    asked: list[str] = []
    page.on("dialog", lambda dialog: (asked.append(dialog.type), dialog.dismiss()))
    page.locator("[data-action=send-to-owner] summary").click()
    page.locator("#owner-note").fill("Which trial length holds in the EU?")
    page.locator(".crumbs a").first.click()
    page.wait_for_timeout(1500)
    assert asked == ["beforeunload"]
    assert page.url == f"{live_server.url}/answers/t-1/"
    expect(page.locator("#owner-note")).to_have_value("Which trial length holds in the EU?")


def test_a_double_click_on_approve_sends_one_decision(
    alice_on_t1: Any, live_server: Any
) -> None:
    page = alice_on_t1
    sent: list[str] = []
    page.on("request", lambda r: r.url.endswith("/decide") and sent.append(r.method))
    page.locator("#decide [data-action=approve] textarea").fill("Checked both sources.")
    page.locator("#decide [data-action=approve] button[type=submit]").dblclick()
    page.wait_for_url(f"{live_server.url}/")
    expect(page.locator(".messages")).to_contain_text("Approved t-1")
    assert sent == ["POST"]
    assert Decision.objects.count() == 1
    assert page.console_errors == []


def test_approve_still_sends_after_the_help_was_closed_with_its_button(
    alice_on_t1: Any, live_server: Any
) -> None:
    # The help's Close button sends its <form method="dialog">, which loads no page: it is not
    # a decision on its way, and leaves the decision buttons working.
    page = alice_on_t1
    page.keyboard.press("?")
    expect(page.locator("dialog#help")).to_be_visible()
    page.locator("dialog#help button", has_text="Close").click()
    expect(page.locator("dialog#help")).to_be_hidden()
    page.locator("#decide [data-action=approve] textarea").fill("Checked both sources.")
    page.locator("#decide [data-action=approve] button[type=submit]").click()
    page.wait_for_url(f"{live_server.url}/")
    expect(page.locator(".messages")).to_contain_text("Approved t-1")


def test_reject_still_sends_after_the_help_was_closed_from_the_keyboard(
    alice_on_t1: Any, live_server: Any
) -> None:
    page = alice_on_t1
    page.keyboard.press("?")
    expect(page.locator("dialog#help")).to_be_visible()
    # The help opens with the focus on its Close button: Enter closes it.
    page.keyboard.press("Enter")
    expect(page.locator("dialog#help")).to_be_hidden()
    page.keyboard.press("r")
    page.locator("#decide [data-action=reject] select").select_option(index=1)
    page.locator("#decide [data-action=reject] textarea").fill("Quotes an outdated price.")
    page.locator("#decide [data-action=reject] button[type=submit]").click()
    page.wait_for_url(f"{live_server.url}/")
    expect(page.locator(".messages")).to_contain_text("Rejected t-1")


def test_a_renewal_says_whether_the_reviewer_did_anything_since_the_last(
    alice_on_t1: Any, live_server: Any
) -> None:
    page = alice_on_t1
    # Another page of this answer says it is leaving: this one renews at once.
    other_page_leaves = """() => new BroadcastChannel(
        'reviewqueue-lease:' + document.getElementById('workspace').dataset.renewUrl
    ).postMessage('leaving')"""
    with renewal(page) as renewed:
        page.evaluate(other_page_leaves)
    assert renewed.value.request.headers.get("x-background") == "1"
    page.keyboard.press("j")
    with renewal(page) as renewed:
        page.evaluate(other_page_leaves)
    assert renewed.value.request.headers.get("x-background") is None
    assert renewed.value.status == 200


def test_a_session_that_idled_out_takes_the_page_read_only_keeping_the_text(
    alice_on_t1: Any, live_server: Any
) -> None:
    page = alice_on_t1
    page.locator("#decide [data-action=approve] textarea").fill("Half a thought")
    # The server ends a session that idled out: the page's next renewal is sent to sign in.
    page.context.clear_cookies(name="sessionid")
    with renewal(page):
        page.evaluate("""() => new BroadcastChannel(
            'reviewqueue-lease:' + document.getElementById('workspace').dataset.renewUrl
        ).postMessage('leaving')""")
    expect(page.locator("[data-lease-lost]")).to_contain_text("You were signed out")
    expect(page.locator("#decide [data-action=approve] textarea")).to_have_value("Half a thought")
    expect(page.locator("#decide [data-action=approve] button[type=submit]")).to_be_disabled()


@pytest.mark.parametrize("width", [390, 1280])
def test_the_sentence_j_selects_is_not_hidden_under_the_top_bar(
    hold: Any, reviewer: Any, sign_in: Any, live_server: Any, width: int
) -> None:
    hold(answer="The free trial lasts 14 days [d1]. Customers in the EU should check the "
         "local terms [d2].")
    page = sign_in("alice")
    page.set_viewport_size({"width": width, "height": 700})
    open_held(page, live_server)
    page.evaluate("() => window.scrollTo(0, document.body.scrollHeight)")
    page.keyboard.press("j")
    selected = page.locator("[data-sentence].selected")
    expect(selected).to_have_count(1)
    bar = page.locator(".topbar").bounding_box()
    box = selected.bounding_box()
    assert bar is not None and box is not None
    assert box["y"] >= bar["y"] + bar["height"], (box, bar)


def test_several_claims_are_added_in_one_edit(
    hold: Any, reviewer: Any, sign_in: Any, live_server: Any
) -> None:
    from reviewqueue.reviews.models import Answer

    hold()
    page = sign_in("alice")
    open_held(page, live_server)
    page.locator("#decide [data-action=edit] summary").click()
    rows = page.locator("[data-claim-row]")
    # The answer's claim; the empty row the page ends with waits, hidden, for "Add a claim".
    expect(rows).to_have_count(2)
    expect(rows.nth(1)).to_be_hidden()
    page.get_by_role("button", name="Add a claim").click()
    expect(rows).to_have_count(2)
    expect(rows.nth(1)).to_be_visible()
    expect(page.locator("input[name=claims-1-key]")).to_be_focused()
    page.get_by_role("button", name="Add a claim").click()
    expect(rows).to_have_count(3)
    expect(page.locator("input[name=claims-2-key]")).to_be_focused()
    expect(page.get_by_label("Key of claim 3")).to_have_count(1)
    # The added row's fields count their characters near the limit, as the others do (as the
    # server does: an emoji is one character).
    value = page.locator("[name=claims-2-value]")
    value.fill("😀" * 1700)
    counter = page.locator("#id_claims-2-value-count")
    expect(counter).to_have_text("1,700 / 2,000")
    value.fill("")
    expect(counter).to_be_hidden()
    for n, (key, value, kind, cite) in enumerate(
            [("support_hours", "24/7", "text", "d1"), ("trial_days", "30", "number", "d2")],
            start=1):
        page.fill(f"input[name=claims-{n}-key]", key)
        page.fill(f"[name=claims-{n}-value]", value)
        page.select_option(f"select[name=claims-{n}-value_type]", kind)
        page.select_option(f"select[name=claims-{n}-cite]", cite)
    page.get_by_role("button", name="Check and save the edit").click()
    expect(page.locator(".messages")).to_contain_text("Saved the edit as version 2")
    claims = Answer.objects.get(trace_id="t-1").current_version.claims
    assert [(c["key"], c["value"], c["cite"]) for c in claims] == [
        ("trial_days", 14, "d1"), ("support_hours", "24/7", "d1"), ("trial_days", 30, "d2")]


def test_a_form_that_sends_nothing_typed_asks_first_and_may_be_sent_after(
    alice_on_t1: Any, live_server: Any
) -> None:
    # "Re-evaluate now" leaves for the job's page: the rewrite would go with this one.
    page = alice_on_t1
    answers: list[bool] = [False, True]
    asked: list[str] = []

    def answer(dialog: Any) -> None:
        asked.append(dialog.type)
        (dialog.accept if answers.pop(0) else dialog.dismiss)()

    page.on("dialog", answer)
    page.locator("#decide [data-action=edit] summary").click()
    page.locator("#decide textarea[name=edit-answer]").fill(REWRITE)
    reevaluate = page.get_by_role("button", name="Re-evaluate now")
    reevaluate.click()
    page.wait_for_timeout(1500)
    assert asked == ["beforeunload"]
    assert page.url == f"{live_server.url}/answers/t-1/"
    expect(page.locator("#decide textarea[name=edit-answer]")).to_have_value(REWRITE)
    # Staying was a choice, not a lost press: the button still goes, once confirmed.
    reevaluate.click()
    page.wait_for_url(f"{live_server.url}/jobs/**")
    assert asked == ["beforeunload", "beforeunload"]


def test_an_owner_leaving_a_reply_typed_in_the_inbox_is_asked_first(
    hold: Any, reviewer: Any, owner: Any, sign_in: Any, live_server: Any
) -> None:
    from reviewqueue.audit.services import Actor
    from reviewqueue.reviews.services.handoff import review_item_send_to_owner

    trace = hold()
    review_item_send_to_owner(trace_id=trace, user=reviewer, note="Which trial holds?",
                              actor=Actor.of_user(reviewer))
    page = sign_in("olivia", lands="/owner/")
    asked: list[str] = []
    page.on("dialog", lambda dialog: (asked.append(dialog.type), dialog.dismiss()))
    page.locator(f"#reply-{trace}").fill("14 days is right.")
    page.get_by_role("link", name="Owner inbox").first.click()
    page.wait_for_timeout(1500)
    assert asked == ["beforeunload"]
    expect(page.locator(f"#reply-{trace}")).to_have_value("14 days is right.")


CORRECTION_NOTE = "The EU trial was shortened to 14 days on 1 December; see the legal memo LM-2211."
JUSTIFICATION = "Both are right: 30 days applies to EU customers only, 14 days to everyone else."


def follow_crumb_and_stay(page: Any) -> list[str]:
    """Follow the page's first crumb link, answering "stay" to anything the page asks; the
    kinds of dialog asked."""
    asked: list[str] = []
    page.on("dialog", lambda dialog: (asked.append(dialog.type), dialog.dismiss()))
    with page.expect_event("dialog"):
        page.locator(".crumbs a").first.click()
    return asked


def test_an_owner_leaving_a_typed_correction_is_asked_first_and_keeps_it(
    sources: Any, owner: Any, sign_in: Any, live_server: Any
) -> None:
    page = sign_in("olivia", lands="/owner/")
    page.goto(f"{live_server.url}/owner/documents/pricing-eu/")
    correction = page.locator("form[action$='/publish']")
    correction.locator("input[name=facts-0-value]").fill("14")
    correction.locator("textarea[name=note]").fill(CORRECTION_NOTE)
    assert follow_crumb_and_stay(page) == ["beforeunload"]
    assert page.url == f"{live_server.url}/owner/documents/pricing-eu/"
    expect(correction.locator("input[name=facts-0-value]")).to_have_value("14")
    expect(correction.locator("textarea[name=note]")).to_have_value(CORRECTION_NOTE)


def test_an_owner_leaving_a_typed_dismissal_is_asked_first_and_keeps_it(
    sources: Any, owner: Any, sign_in: Any, live_server: Any
) -> None:
    from reviewqueue.sources.models import Conflict

    page = sign_in("olivia", lands="/owner/")
    page.goto(f"{live_server.url}/owner/conflicts/{Conflict.objects.get().pk}/")
    justification = page.locator("form[action$='/dismiss'] textarea")
    justification.fill(JUSTIFICATION)
    assert follow_crumb_and_stay(page) == ["beforeunload"]
    expect(justification).to_have_value(JUSTIFICATION)


def test_an_owner_sending_the_typed_dismissal_is_not_asked(
    sources: Any, owner: Any, sign_in: Any, live_server: Any
) -> None:
    from reviewqueue.sources.models import Conflict

    conflict = Conflict.objects.get()
    page = sign_in("olivia", lands="/owner/")
    asked: list[str] = []
    page.on("dialog", lambda dialog: (asked.append(dialog.type), dialog.dismiss()))
    page.goto(f"{live_server.url}/owner/conflicts/{conflict.pk}/")
    dismissal = page.locator("form[action$='/dismiss']")
    dismissal.locator("select[name=reason]").select_option("different plans")
    dismissal.locator("textarea").fill(JUSTIFICATION)
    dismissal.get_by_role("button", name="Dismiss the conflict").click()
    expect(page.locator(".messages")).to_contain_text("Conflict dismissed.")
    assert asked == []
    conflict.refresh_from_db()
    assert conflict.status == Conflict.Status.DISMISSED
