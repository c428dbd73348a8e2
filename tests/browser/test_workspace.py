"""The reviewer's workspace in a real browser: queue, passages, decisions, races, stale verdicts."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from reviewqueue.audit.services import Actor
from reviewqueue.reviews.models import Answer, Decision, ReviewItem
from reviewqueue.reviews.services.leases import lease_claim
from tests.reviews.conftest import fact

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def row(page: Any, trace_id: str) -> Any:
    return page.locator(f"tr[data-trace='{trace_id}']")


def open_item(page: Any, trace_id: str) -> None:
    row(page, trace_id).locator("[data-open]").click()
    page.wait_for_url(f"**/answers/{trace_id}/")


def renewal(page: Any, timeout: float | None = None) -> Any:
    """Waits for the page's next lease renewal (use with `with`; the context's timeout by
    default)."""
    return page.expect_response(lambda r: r.url.endswith("/renew"), timeout=timeout)


def open_item_renewed(page: Any, trace_id: str) -> None:
    """Open the item from the queue and wait for the renewal the page sends as it opens."""
    with renewal(page):
        open_item(page, trace_id)


def test_a_reviewer_reads_a_passage_approves_and_the_item_leaves_the_queue(
    hold: Any, publish: Any, reviewer: Any, bob: Any, sign_in: Any, screenshots: Any,
    live_server: Any,
) -> None:
    # Three held answers: sources in conflict, and one quoting a revision since replaced.
    publish("pricing-eu", revision="r2", title="Pricing in the EU",
            facts=[fact("trial_days", 30)],
            passages=[{"span": "p1", "text": "In the EU the free trial lasts 30 calendar days."}])
    hold("t-approve", answer="The free trial lasts 14 days [d1]. Customers in the EU should "
         "check the local terms [d2].")
    hold("t-eu", question="Is the free trial longer in the EU?", retrieved=[
        {"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"},
        {"cite": "d2", "document_id": "pricing-eu", "revision": "r2", "span": "p1"}])
    hold("t-other", question="How many days does a new team get to try the product?",
         retrieved=[
             {"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"},
             {"cite": "d2", "document_id": "pricing-eu", "revision": "r2", "span": "p1"}])
    # An afternoon's queue: items waiting for a while, one of them being worked on by bob.
    now = timezone.now()
    for trace_id, waited in (("t-approve", 26 * 60), ("t-eu", 185), ("t-other", 40)):
        ReviewItem.objects.filter(answer__trace_id=trace_id).update(
            entered_at=now - dt.timedelta(minutes=waited))
    other = Answer.objects.get(trace_id="t-other")
    lease_claim(answer=other, user=bob, actor=Actor.of_user(bob))
    page = sign_in("alice")
    expect(row(page, "t-approve")).to_be_visible()
    page.screenshot(path=str(screenshots / "queue.png"), full_page=True)

    open_item(page, "t-approve")
    expect(page.locator(".lease-box.mine")).to_be_visible()
    with page.expect_response(lambda r: r.url.endswith("/expanded")) as expansion:
        page.locator("details.cite[data-cite='d1'] > summary").first.click()
    assert expansion.value.status == 204
    expect(page.locator("details.cite[data-cite='d1'] mark").first).to_have_text(
        "The free trial lasts 14 days.")
    page.keyboard.press("o")  # expand every passage
    expect(page.locator("details.cite:not([open])")).to_have_count(0)
    page.screenshot(path=str(screenshots / "item.png"), full_page=True)

    page.locator("#decide [data-action=approve] button[type=submit]").click()
    page.wait_for_url(f"{live_server.url}/")
    expect(page.locator(".message.success")).to_contain_text("Approved")
    expect(row(page, "t-approve")).to_have_count(0)
    expect(row(page, "t-other")).to_be_visible()
    decision = Decision.objects.get(answer__trace_id="t-approve")
    assert decision.action == "approve" and decision.read_passages is True
    assert page.console_errors == []


def test_an_edit_into_an_unsupported_claim_is_refused_and_the_text_is_kept(
    hold: Any, reviewer: Any, sign_in: Any
) -> None:
    hold("t-edit")
    page = sign_in("alice")
    page.keyboard.press("j")
    page.keyboard.press("Enter")  # opens (and claims) the selected row
    page.wait_for_url("**/answers/t-edit/")

    page.keyboard.press("e")
    edit = page.locator("#decide [data-action=edit]")
    text = "Support is open from nine to five [d1]."
    edit.locator("textarea[name=edit-answer]").fill(text)
    edit.locator("input[name=claims-0-key]").fill("support_hours")
    edit.locator("input[name=claims-0-value]").fill("9-5")
    edit.locator("select[name=claims-0-value_type]").select_option("text")
    edit.locator("select[name=claims-0-cite]").select_option("d1")
    edit.locator("button[type=submit]").click()

    refusal = page.locator("[data-refused]")
    expect(refusal).to_contain_text("The gate refuses your edit")
    expect(refusal).to_contain_text("is not what [d1] says")
    expect(page.locator("textarea[name=edit-answer]")).to_have_value(text)
    expect(page.locator("input[name=claims-0-value]")).to_have_value("9-5")
    answer = Answer.objects.get(trace_id="t-edit")
    assert (answer.status, answer.current_version.number) == ("held", 1)


def test_the_edit_form_shows_each_claim_whole_on_a_laptop_screen(
    hold: Any, reviewer: Any, sign_in: Any
) -> None:
    hold("t-wide", claims=[{"key": "trial_days", "value": "fourteen days", "cite": "d1"}])
    page = sign_in("alice")
    page.set_viewport_size({"width": 1280, "height": 900})
    open_item(page, "t-wide")
    page.keyboard.press("e")
    edit = page.locator("#decide [data-action=edit]")
    for name, shown in (("claims-0-key", "trial_days"), ("claims-0-value", "fourteen days")):
        field = edit.locator(f"input[name={name}]")
        expect(field).to_have_value(shown)
        # Nothing of what the field holds is scrolled out of sight.
        assert field.evaluate("el => el.scrollWidth <= el.clientWidth"), name
    # Each choice of the type and cited menus fits its menu, arrow included ("true/false",
    # not "true/f").
    fits = """el => {
        const style = getComputedStyle(el);
        const pen = document.createElement("canvas").getContext("2d");
        pen.font = style.font;
        const room = el.clientWidth - parseFloat(style.paddingLeft) - 16;
        return Array.from(el.options).filter(o => pen.measureText(o.text).width > room)
            .map(o => o.text);
    }"""
    for name in ("claims-0-value_type", "claims-0-cite"):
        assert edit.locator(f"select[name={name}]").evaluate(fits) == [], name
    # The claims table beside it keeps its verdict column in view.
    holds = page.locator("table.claims th").last
    expect(holds).to_have_text("Holds?")
    box = holds.bounding_box()
    shown = page.locator("table.claims").locator("xpath=..").bounding_box()  # its scroll box
    assert box and shown and box["x"] + box["width"] <= shown["x"] + shown["width"] + 1


def test_a_refused_decision_brings_its_error_and_field_into_view(
    hold: Any, reviewer: Any, sign_in: Any
) -> None:
    hold("t-why")
    page = sign_in("alice")
    page.set_viewport_size({"width": 1280, "height": 700})
    open_item(page, "t-why")
    page.keyboard.press("r")
    reject = page.locator("#decide [data-action=reject]")
    reject.locator("select").select_option("other")
    reject.locator("button[type=submit]").click()
    page.wait_for_load_state()

    comment = page.locator("#decide [data-action=reject] textarea")
    expect(page.locator("#decide .errorlist")).to_contain_text("Say why")
    expect(page.locator("#decide .errorlist")).to_be_in_viewport()
    expect(comment).to_be_focused()
    assert Answer.objects.get(trace_id="t-why").status == "held"
    # The page has the item's address, not the form's: Reload opens the item again and sends
    # nothing (a form sent again would be refused the same way, or worse, taken).
    assert "/decide" not in page.url and "/answers/t-why/" in page.url
    page.reload()
    expect(page.locator(".lease-box.mine")).to_be_visible()
    expect(page.locator("#decide .errorlist")).to_have_count(0)


def test_the_decide_card_stays_reachable_beside_a_long_list_of_findings(
    hold: Any, reviewer: Any, sign_in: Any
) -> None:
    # Forty claims resting on one source each put forty warnings above the Decide card, and
    # a long answer keeps the page scrolling long past it.
    hold("t-many", claims=[{"key": "trial_days", "value": 14, "cite": "d1"}] * 40,
         answer="The free trial lasts 14 days [d1]. " * 120)
    page = sign_in("alice")
    page.set_viewport_size({"width": 1280, "height": 700})
    open_item(page, "t-many")
    assert page.locator("[data-single-source] p").count() >= 40
    page.keyboard.press("a")
    approve = page.locator("#decide [data-action=approve] textarea")
    expect(approve).to_be_focused()
    expect(approve).to_be_in_viewport()


def test_two_reviewers_race_for_one_item_and_exactly_one_gets_it(
    hold: Any, reviewer: Any, bob: Any, sign_in: Any
) -> None:
    hold("t-race")
    alice_page = sign_in("alice")
    bob_page = sign_in("bob")
    for page in (alice_page, bob_page):
        expect(row(page, "t-race")).to_be_visible()
    # Both press "open" before either response has come back.
    alice_page.locator("tr[data-trace='t-race'] [data-open]").click(no_wait_after=True)
    bob_page.locator("tr[data-trace='t-race'] [data-open]").click(no_wait_after=True)
    for page in (alice_page, bob_page):
        page.wait_for_url("**/answers/t-race/")
        page.wait_for_load_state()

    holder = ReviewItem.objects.get(answer__trace_id="t-race").leased_by.username
    winner, loser = (alice_page, bob_page) if holder == "alice" else (bob_page, alice_page)
    expect(winner.locator(".lease-box.mine")).to_be_visible()
    expect(loser.locator(".lease-box.other")).to_contain_text(f"{holder} is working on this")
    expect(loser.locator(".lease-box.other")).to_contain_text("until")
    expect(loser.locator("#decide [data-action=approve]")).to_have_count(0)


def test_a_revision_published_while_reviewing_refuses_the_approval_with_the_fresh_verdict(
    hold: Any, publish: Any, reviewer: Any, sign_in: Any
) -> None:
    hold("t-stale")
    page = sign_in("alice")
    open_item(page, "t-stale")
    expect(page.locator(".status-strip")).to_contain_text("Conflicting sources")

    # The document system publishes a new revision of a cited document meanwhile.
    publish("pricing", revision="r2",
            facts=[fact("trial_days", 14), fact("support_hours", "24/7", span="p2")],
            passages=[{"span": "p1", "text": "The free trial lasts 14 days for new teams."},
                      {"span": "p2", "text": "Support is available 24/7."}])

    page.locator("#decide [data-action=approve] textarea").fill("Looks right to me.")
    page.locator("#decide [data-action=approve] button[type=submit]").click()
    stale = page.locator("[data-stale]")
    expect(stale).to_contain_text("The sources changed while you were reviewing.")
    expect(stale).to_contain_text("Source revised")
    expect(page.locator(".status-strip")).to_contain_text("Source revised")
    expect(page.locator(".diff ins")).to_contain_text("for new teams")
    expect(page.locator("#decide [data-action=approve] textarea")).to_have_value(
        "Looks right to me.")
    answer = Answer.objects.get(trace_id="t-stale")
    assert answer.status == "held"
    assert not Decision.objects.filter(answer=answer).exists()


def test_the_workspace_follows_a_japanese_browser(hold: Any, reviewer: Any,
                                                  sign_in: Any) -> None:
    hold("t-ja")
    page = sign_in("alice", locale="ja-JP")
    expect(page.locator("h1")).to_have_text("レビュー待ち一覧")
    open_item(page, "t-ja")
    expect(page.locator("#decide [data-action=approve] button[type=submit]")).to_contain_text(
        "承認")


def test_the_item_page_renews_its_lease_while_it_stays_open(
    hold: Any, reviewer: Any, sign_in: Any, settings: Any
) -> None:
    settings.REVIEW_LEASE_SECONDS = 30  # the page renews every third of it: 10 seconds
    hold("t-renew")
    page = sign_in("alice")
    open_item_renewed(page, "t-renew")
    # Say the lease ran to three hours from now when the page was drawn: the renewal the page
    # sends as it opens moves the time the lease box shows to the lease's new end.
    drawn = timezone.now() + dt.timedelta(hours=3)
    ReviewItem.objects.filter(answer__trace_id="t-renew").update(lease_until=drawn)
    with renewal(page) as opening:
        page.reload()
    assert opening.value.status == 200
    box = page.locator(".lease-box.mine [data-lease-until]")

    def says_until(moment: dt.datetime) -> str:
        return (f"You are working on this until {timezone.localtime(moment):%H:%M} UTC; the lease "
                "renews while this page is open.")

    renewed = ReviewItem.objects.get(answer__trace_id="t-renew").lease_until
    assert renewed < drawn
    expect(box).to_have_text(says_until(renewed))
    # And again a third of the lease later, with no reload.
    with renewal(page, timeout=20_000) as ticked:
        pass
    assert ticked.value.status == 200
    later = ReviewItem.objects.get(answer__trace_id="t-renew").lease_until
    assert later > renewed
    expect(box).to_have_text(says_until(later))


def lease_of(trace_id: str) -> tuple[str | None, dt.datetime | None]:
    item = ReviewItem.objects.select_related("leased_by").get(answer__trace_id=trace_id)
    return (item.leased_by.username if item.leased_by else None), item.lease_until


def test_leaving_the_item_page_frees_the_answer_within_a_minute_and_a_reload_keeps_it(
    hold: Any, reviewer: Any, sign_in: Any, live_server: Any
) -> None:
    hold("t-leave")
    page = sign_in("alice")
    open_item_renewed(page, "t-leave")
    expect(page.locator(".lease-box.mine")).to_be_visible()
    # A reload: the page that goes says it is leaving, the page that comes renews; the lease
    # keeps its whole term whichever of the two the server reads first.
    with renewal(page):
        page.reload()
    page.wait_for_timeout(500)
    holder, until = lease_of("t-leave")
    assert holder == "alice" and until > timezone.now() + dt.timedelta(minutes=10)
    # Back to the queue by the link: the answer is still alice's, for a minute at most, and
    # the queue says so (the page said it was leaving before it asked for the queue).
    page.locator(".crumbs a").first.click()
    page.wait_for_url(f"{live_server.url}/")
    _, short = lease_of("t-leave")
    expect(page.locator("tr[data-trace='t-leave']")).to_contain_text(
        f"until {timezone.localtime(short):%H:%M}")
    for _ in range(50):
        holder, until = lease_of("t-leave")
        if until <= timezone.now() + dt.timedelta(seconds=60):
            break
        page.wait_for_timeout(100)
    assert holder == "alice" and until <= timezone.now() + dt.timedelta(seconds=60)
    assert page.console_errors == []


def test_leaving_one_of_two_pages_of_an_answer_leaves_the_lease_to_the_other(
    hold: Any, reviewer: Any, sign_in: Any, live_server: Any
) -> None:
    hold("t-tabs")
    first = sign_in("alice")
    open_item_renewed(first, "t-tabs")
    second = first.context.new_page()
    with renewal(second):
        second.goto(f"{live_server.url}/answers/t-tabs/")
    # The second page renewed last, so its leave matches: the first page is told, and renews.
    with renewal(first) as renewed:
        second.goto(f"{live_server.url}/")
    assert renewed.value.status == 200
    second.wait_for_timeout(500)
    holder, until = lease_of("t-tabs")
    assert holder == "alice" and until > timezone.now() + dt.timedelta(minutes=10)
    expect(first.locator("[data-lease-lost]")).to_be_hidden()


def test_a_reject_refused_because_a_colleague_took_the_item_shows_what_was_written(
    hold: Any, reviewer: Any, bob: Any, sign_in: Any, live_server: Any
) -> None:
    hold("t-taken", answer=" ".join(f"Sentence {i} of a long answer [d1]." for i in range(60)))
    page = sign_in("alice")
    page.goto(f"{live_server.url}/answers/t-taken/")  # read before claiming: forms are open
    lease_claim(answer=Answer.objects.get(trace_id="t-taken"), user=bob,
                actor=Actor.of_user(bob))
    page.keyboard.press("r")
    page.select_option("#decide [data-action=reject] select", index=1)
    page.fill("#decide [data-action=reject] textarea", "The EU figure is outdated.")
    page.locator("#decide [data-action=reject] button[type=submit]").click()
    expect(page.locator(".message.warning")).to_contain_text("Not recorded: another reviewer")
    expect(page.locator("[data-lease]")).to_contain_text("bob is working on this until")
    unsaved = page.locator("[data-unsaved]")
    expect(unsaved).to_contain_text("The EU figure is outdated.")
    expect(unsaved).to_be_in_viewport()
    assert ".." not in page.locator(".message.warning").inner_text()


def test_a_lost_lease_is_said_where_the_reviewer_is_reading(
    hold: Any, reviewer: Any, sign_in: Any, settings: Any
) -> None:
    settings.REVIEW_LEASE_SECONDS = 30
    hold("t-lost", answer=" ".join(f"Sentence {i} of a long answer [d1]." for i in range(80)))
    page = sign_in("alice")
    open_item(page, "t-lost")
    page.mouse.wheel(0, 4000)  # down at the decision forms, far from the top
    ReviewItem.objects.filter(answer__trace_id="t-lost").update(lease_until=None,
                                                                leased_by=None)
    banner = page.locator("[data-lease-lost]")
    expect(banner).to_be_visible(timeout=20_000)
    expect(banner).to_contain_text("Your lease on this answer has ended")
    assert page.evaluate("window.scrollY") > 500
    box = banner.bounding_box()
    assert box is not None and 0 <= box["y"] < 900  # inside the viewport, not off at the top
    top_bar = page.locator("header.topbar").bounding_box()
    assert top_bar is not None and box["y"] >= top_bar["y"] + top_bar["height"]  # not over it
    expect(page.locator("#decide [data-action=approve] button[type=submit]")).to_be_disabled()
    # The lease box no longer says the page holds the answer, and nothing else can be done.
    expect(page.locator(".lease-box.lost")).to_contain_text("Your lease on this answer has ended")
    expect(page.locator(".lease-box.mine")).to_have_count(0)  # no longer green
    expect(page.locator(".lease-box button[type=submit]")).to_be_disabled()
    expect(page.locator("header form.logout button")).to_be_enabled()


def test_a_lease_broken_while_the_reviewer_was_away_is_said_as_they_come_back(
    hold: Any, reviewer: Any, sign_in: Any
) -> None:
    """A 15-minute lease: the page does not wait for its next renewal, 5 minutes on."""
    hold("t-away")
    page = sign_in("alice")
    open_item_renewed(page, "t-away")
    page.wait_for_timeout(5500)  # past the focus throttle of the renewal on opening
    ReviewItem.objects.filter(answer__trace_id="t-away").update(lease_until=None,
                                                                leased_by=None)
    page.evaluate("window.dispatchEvent(new Event('focus'))")
    expect(page.locator("[data-lease-lost]")).to_be_visible(timeout=5_000)
    expect(page.locator("#decide [data-action=approve] button[type=submit]")).to_be_disabled()


def test_the_language_menu_waits_for_its_button_when_used_from_the_keyboard(
    hold: Any, reviewer: Any, sign_in: Any
) -> None:
    hold("t-lang")
    page = sign_in("alice")
    menu = page.locator("header select[name=language]")
    menu.focus()
    page.keyboard.press("ArrowDown")  # one step through the list, not a choice yet
    page.wait_for_timeout(300)
    expect(page.locator("h1")).to_have_text("Review queue")
    button = page.locator("header form.language button[type=submit]")
    expect(button).to_be_visible()
    button.click()
    expect(page.locator("h1")).to_have_text("レビュー待ち一覧")
    # Picked with the mouse, the menu applies at once.
    page.locator("header select[name=language]").select_option("en")
    expect(page.locator("h1")).to_have_text("Review queue")


def test_each_claim_input_of_the_edit_form_has_a_name(hold: Any, reviewer: Any,
                                                      sign_in: Any) -> None:
    hold("t-labels")
    page = sign_in("alice")
    open_item(page, "t-labels")
    page.keyboard.press("e")
    expect(page.get_by_label("Key of claim 1", exact=True)).to_have_value("trial_days")
    expect(page.get_by_label("Value of claim 1", exact=True)).to_have_value("14")
    expect(page.get_by_label("Source cited by claim 1", exact=True)).to_have_value("d1")
    expect(page.get_by_label("Key of claim 2", exact=True)).to_have_value("")  # to add one


def test_question_mark_opens_the_keyboard_help(hold: Any, reviewer: Any, sign_in: Any) -> None:
    hold("t-help")
    page = sign_in("alice")
    page.keyboard.press("?")
    expect(page.locator("dialog#help")).to_be_visible()
    expect(page.locator("dialog#help")).to_contain_text("Claim and open the oldest")
    page.keyboard.press("n")  # read in the help, it must not claim an answer behind it
    page.keyboard.press("j")
    page.wait_for_timeout(300)
    assert page.url.endswith("/") and not page.locator("[data-row].selected").count()
    page.keyboard.press("Escape")
    expect(page.locator("dialog#help")).to_be_hidden()
    assert not ReviewItem.objects.filter(leased_by__isnull=False).exists()


def test_the_queue_and_an_item_fit_a_phone(hold: Any, reviewer: Any, sign_in: Any,
                                           live_server: Any) -> None:
    """At 390 px nothing is wider than the window: no page scrolls sideways."""
    hold("t-phone")
    page = sign_in("alice")
    page.set_viewport_size({"width": 390, "height": 844})
    for url in ("/?reason=conflicting_sources", "/answers/t-phone/"):
        page.goto(f"{live_server.url}{url}")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, url
    # Each claim and each verdict is a card: nothing of it behind a sideways scroll.
    for table in ("claims", "history"):
        wrap = page.locator(f".table-wrap:has(table.{table})")
        assert wrap.evaluate("el => el.scrollWidth <= el.clientWidth"), table
        expect(wrap).not_to_have_attribute("data-more", re.compile(".*"))
    holds = page.locator("table.claims tbody td").last
    expect(holds).to_have_attribute("data-label", "Holds?")
    box = holds.bounding_box()
    assert box is not None and box["x"] + box["width"] <= 390, box
    expect(page.get_by_role("button", name="Sign out")).to_be_in_viewport()


def test_the_owner_and_admin_pages_of_a_revised_source_fit_a_phone(
    hold: Any, publish: Any, reviewer: Any, owner: Any, admin_user: Any, sign_in: Any,
    live_server: Any,
) -> None:
    """At 390 px: the owner's document page, an item whose source was revised (its table of
    fact changes), and the answer's audit timeline, with its long event lines."""
    hold("t-rev")
    publish("pricing", revision="r2",
            facts=[fact("trial_days", 14, end=20), fact("support_hours", "24/7", span="p2")],
            passages=[{"span": "p1", "text": "The free trial lasts 14 days."},
                      {"span": "p2", "text": "Support is available 24/7."}])
    pages = [("olivia", "/owner/", "/owner/documents/pricing/"),
             ("alice", "/", "/answers/t-rev/"), ("ada", "/", "/audit/answers/t-rev/")]
    for who, lands, url in pages:
        page = sign_in(who, lands=lands)
        page.set_viewport_size({"width": 390, "height": 844})
        page.goto(f"{live_server.url}{url}")
        # What sticks out, to say where (a table scrolls inside its wrapper, so not its cells).
        wide = page.evaluate("""Array.from(document.querySelectorAll('body *'))
            .filter(e => e.getBoundingClientRect().right > 391
                         && !e.parentElement.closest('.table-wrap'))
            .slice(0, 6).map(e => e.tagName + '.' + e.className)""")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, (url, wide)
        if url.startswith("/owner/"):
            # Each fact of the correction table is a block of fields: nothing is left behind a
            # sideways scroll, so its edge has no fade (test_owner_narrow_screens.py).
            table = page.locator(".table-wrap:has(table.facts-edit)")
            expect(table).not_to_have_attribute("data-more", re.compile(".*"))
            assert table.evaluate("el => getComputedStyle(el).maskImage") == "none"
    # The answer's audit timeline lists the revisions each verdict used as cards, and the
    # item's fact table stacks: each revision's value and dates in sight, not cut off.
    assert page.locator("table.revisions").first.evaluate(
        "el => el.scrollWidth <= el.clientWidth")
    page.goto(f"{live_server.url}/answers/t-rev/")
    cells = page.locator("table.fact-changes tbody td")
    expect(cells).to_have_count(2)
    for i in range(2):
        box = cells.nth(i).bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, box


def test_long_names_on_the_owner_pages_and_japanese_history_fit_a_phone(
    hold: Any, publish: Any, reviewer: Any, owner: Any, sign_in: Any, live_server: Any,
) -> None:
    """A long key beside a conflict's badges, a long revision label beside a title, and the
    verdict history in Japanese, whose words may break between any two characters."""
    key = "customer_record_retention_days"
    publish("trial-promo-autumn-campaign", revision="2026-12-02.4",
            facts=[fact(key, 30)], title="Autumn campaign for the free trial")
    publish("data-retention-policy", revision="2026-12-02.1", facts=[fact(key, 90)])
    hold("t-ja")
    page = sign_in("olivia", lands="/owner/")
    page.set_viewport_size({"width": 390, "height": 844})
    for url in ("/owner/", "/owner/documents/trial-promo-autumn-campaign/"):
        page.goto(f"{live_server.url}{url}")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, url
    page = sign_in("alice", locale="ja-JP")
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{live_server.url}/answers/t-ja/")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    # The decision and the reason each read on one or two lines, not one character a line.
    for column in (3, 4):
        cell = page.locator(f"table.history tbody tr >> nth=0 >> td:nth-child({column})")
        lines = cell.evaluate("""el => {
            const range = document.createRange(); range.selectNodeContents(el);
            return new Set(Array.from(range.getClientRects()).map(r => Math.round(r.top))).size;
        }""")
        assert lines <= 2, (column, cell.inner_text(), lines)


def test_long_urls_in_a_fact_and_a_webhook_address_fit_a_phone(
    publish: Any, submit: Any, owner: Any, reviewer: Any, admin_user: Any, sign_in: Any,
    live_server: Any,
) -> None:
    from reviewqueue.webhooks.models import WebhookEndpoint

    link = "https://docs.example.test/policies/" + "refund-and-cancellation-terms-" * 3
    publish("links", facts=[fact("policy_url", link)])
    response = submit("t-url", as_of=None, answer="The policy is online [d1].",
                      claims=[{"key": "policy_url", "value": "elsewhere", "cite": "d1"}],
                      retrieved=[{"cite": "d1", "document_id": "links", "revision": "r1",
                                  "span": "p1"}])
    assert response.status_code == 201, response.content
    endpoint = WebhookEndpoint.objects.create(url="https://hooks.example.test/" + "x" * 150,
                                              secret="s" * 32)
    page = sign_in("alice")
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{live_server.url}/answers/t-url/")
    page.locator("details.cite summary").first.click()
    expect(page.locator("details.cite .fact code").first).to_contain_text("refund")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page = sign_in("ada")
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{live_server.url}/webhooks/{endpoint.pk}/")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
