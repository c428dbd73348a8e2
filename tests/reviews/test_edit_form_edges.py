"""Edges of the decision forms that a reviewer could hit without doing anything wrong: a claim
that arrived with an empty value, a fix of only a claim's type, a long comment with line
breaks, a form whose hidden verdict id was damaged, an odd expansion report."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.reviews.models import Answer, AnswerVersion, Decision
from tests.reviews.test_decisions import claims_form, page_post

pytestmark = pytest.mark.django_db

TEXT = "The trial lasts 14 days [d1]."
TRIAL = {"key": "trial_days", "value": "14", "value_type": "number", "cite": "d1"}


def test_a_claim_that_came_in_with_an_empty_value_does_not_block_an_edit(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold(claims=[{"key": "trial_days", "value": 14, "cite": "d1"},
                         {"key": "note", "value": "", "cite": "d1"}])
    client = login(reviewer)

    response = page_post(client, trace, "edit", answer=TEXT, **claims_form(
        TRIAL, {"key": "note", "value": "", "value_type": "text", "cite": "d1"}))

    assert "Enter a value." not in response.content.decode()
    assert response.status_code in (200, 302), response.content.decode()[:300]
    latest = AnswerVersion.objects.filter(answer__trace_id=trace).order_by("-number").first()
    assert latest is not None and latest.number == 2 and latest.text == TEXT
    assert {"key": "note", "value": "", "cite": "d1"} in latest.claims


def test_an_empty_value_typed_into_a_claim_that_had_one_is_still_refused(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold()
    response = page_post(login(reviewer), trace, "edit", answer=TEXT, **claims_form(
        {"key": "trial_days", "value": "", "value_type": "text", "cite": "d1"}))

    assert response.status_code == 400
    assert "Enter a value." in response.content.decode()


def test_correcting_only_a_claims_type_is_a_change(hold: Any, reviewer: Any,
                                                   login: Any) -> None:
    """1 and true are equal in Python, not to the gate."""
    trace = hold(claims=[{"key": "trial_days", "value": 14, "cite": "d1"},
                         {"key": "sso", "value": 1, "cite": "d1"}],
                 answer="The trial lasts 14 days, with single sign-on [d1].")
    text = Answer.objects.get(trace_id=trace).current_version.text

    response = page_post(login(reviewer), trace, "edit", answer=text, **claims_form(
        TRIAL, {"key": "sso", "value": "true", "value_type": "boolean", "cite": "d1"}))

    assert "changes nothing" not in response.content.decode()
    latest = AnswerVersion.objects.filter(answer__trace_id=trace).order_by("-number").first()
    assert latest is not None and latest.number == 2
    assert {"key": "sso", "value": True, "cite": "d1"} in latest.claims


def test_a_comment_the_browser_let_through_is_counted_as_the_browser_counts_it(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold()
    comment = "ok\r\n" * 1600  # 4,800 characters as typed, 6,400 as sent

    response = page_post(login(reviewer), trace, "reject", reason="incorrect", comment=comment)

    assert response.status_code == 302
    assert Decision.objects.get().comment == ("ok\n" * 1600).strip()


def test_an_edit_comment_over_the_limit_is_said_on_the_page(hold: Any, reviewer: Any,
                                                           login: Any) -> None:
    trace = hold()
    response = page_post(login(reviewer), trace, "edit", answer=TEXT, comment="x" * 5001,
                         **claims_form(TRIAL))

    assert response.status_code == 400
    assert "At most 5,000 characters: this text has " in response.content.decode()


def test_a_claim_value_over_the_limit_is_refused_for_its_length_alone(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold()
    long_note = {"key": "note", "value": "n" * 2100, "value_type": "text", "cite": "d1"}
    response = page_post(login(reviewer), trace, "edit", answer=TEXT,
                         **claims_form(TRIAL, long_note))

    assert response.status_code == 400
    page = response.content.decode()
    assert "At most 2,000 characters: this text has 2,100." in page
    assert "Enter a value." not in page  # it was typed: it is too long, not missing


@pytest.mark.parametrize("verdict", ["10000000000000000000000000", "abc", "999999"])
def test_a_damaged_verdict_id_is_said_above_the_form(hold: Any, reviewer: Any, login: Any,
                                                     verdict: str) -> None:
    trace = hold()
    client = login(reviewer)
    response = client.post(f"/answers/{trace}/decide",
                           {"action": "approve", "approve-verdict": verdict})

    assert response.status_code == 400
    html = response.content.decode()
    start = html.index('data-action="approve"')
    form = html[start:html.index("</form>", start)]
    assert 'class="errorlist' in form
    assert not Decision.objects.exists()


def test_an_expansion_report_with_an_infinite_verdict_is_refused(hold: Any, reviewer: Any,
                                                                 login: Any) -> None:
    trace = hold()
    response = login(reviewer).post(f"/answers/{trace}/expanded",
                                    '{"cite": "d1", "verdict": 1e400}',
                                    content_type="application/json")

    assert response.status_code == 400


MULTILINE = "The free trial lasts 14 days [d1].\nIn the EU it lasts 30 days [d2]."


# A browser sends the text area's line breaks as CRLF; spaces around the text are unseen.
@pytest.mark.parametrize("sent", [MULTILINE.replace("\n", "\r\n"), MULTILINE + " \n"])
def test_a_multiline_answer_sent_back_untouched_by_a_browser_changes_nothing(
    hold: Any, reviewer: Any, login: Any, sent: str
) -> None:
    trace = hold(answer=MULTILINE)
    client = login(reviewer)
    client.post(f"/answers/{trace}/claim")
    response = page_post(client, trace, "edit", answer=sent, **claims_form(TRIAL))
    assert response.status_code == 400
    assert "changes nothing" in response.content.decode()
    assert list(AnswerVersion.objects.filter(answer__trace_id=trace)
                .values_list("number", "text")) == [(1, MULTILINE)]


def test_an_edited_multiline_answer_is_stored_with_the_line_breaks_the_api_uses(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold(answer=MULTILINE)
    client = login(reviewer)
    edited = MULTILINE.replace("In the EU", "In the European Union")
    response = page_post(client, trace, "edit", answer=edited.replace("\n", "\r\n"),
                         **claims_form(TRIAL))
    assert response.status_code in (200, 302)
    assert Answer.objects.get(trace_id=trace).current_version.text == edited


def test_an_answer_with_more_than_200_claims_can_be_edited_on_its_page(
    hold: Any, reviewer: Any, login: Any
) -> None:
    """Ingest takes up to 1,000 claims an answer; so does the page's claim editor."""
    trace = hold(claims=[{"key": "trial_days", "value": 14, "cite": "d1"}] * 201)
    client = login(reviewer)
    assert client.get(f"/answers/{trace}/").content.decode().count("data-claim-row") >= 201
    response = page_post(client, trace, "edit",
                         answer="The free trial lasts 14 days on every plan [d1].",
                         **claims_form(*[TRIAL] * 201))
    assert "characters: this text has" not in response.content.decode()
    latest = Answer.objects.get(trace_id=trace).current_version
    assert latest.number == 2 and len(latest.claims) == 201


@pytest.mark.parametrize("line_break", ["\n", "\r\n", "\r"])
def test_a_claim_value_with_a_line_break_survives_an_edit_of_the_text_alone(
    hold: Any, reviewer: Any, login: Any, line_break: str
) -> None:
    """A text input would drop the value's line breaks, so the editor shows it in a text area,
    and what a browser sends back from it (CRLF) is the value it showed. A value that came in
    with CR LF or a lone CR keeps it: it came back with LF, a claim nobody made."""
    import html
    import re

    hours = f"Mon-Fri 9-17{line_break}Sat 10-14"
    trace = hold(claims=[{"key": "trial_days", "value": 14, "cite": "d1"},
                         {"key": "support_hours", "value": hours, "cite": "d1"}])
    client = login(reviewer)
    page = client.get(f"/answers/{trace}/").content.decode()
    area = re.search(r'<textarea name="claims-1-value"[^>]*>\n(.*?)</textarea>', page, re.S)
    assert area is not None, "the value is not in a text area"
    shown = html.unescape(area.group(1))
    assert shown == hours
    sent = shown.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\r\n")
    response = page_post(client, trace, "edit",
                         answer="The free trial lasts 14 days; support hours vary [d1].",
                         **claims_form(TRIAL, {"key": "support_hours", "value": sent,
                                               "value_type": "text", "cite": "d1"}))
    assert response.status_code in (200, 302)
    latest = Answer.objects.get(trace_id=trace).current_version
    assert latest.number == 2
    assert {"key": "support_hours", "value": hours, "cite": "d1"} in latest.claims


def _blank_rows(html: str) -> list[str]:
    import re

    return re.findall(r'<tr data-claim-row data-blank-row>.*?name="(claims-\d+)-key"', html,
                      re.S)


def test_the_empty_row_that_ends_the_claim_editor_is_marked_until_something_is_typed_in_it(
    hold: Any, reviewer: Any, login: Any
) -> None:
    """The page hides that row behind "Add a claim" (item.js); a row the reviewer filled,
    drawn again after a refusal, is theirs and never hidden."""
    trace = hold()
    client = login(reviewer)
    client.post(f"/answers/{trace}/claim")
    assert _blank_rows(client.get(f"/answers/{trace}/").content.decode()) == ["claims-1"]
    extra = {"key": "", "value": "", "value_type": "text", "cite": ""}

    def as_the_page_posts(*rows: dict[str, str]) -> dict[str, str]:
        return {**claims_form(*rows), "claims-INITIAL_FORMS": "1"}  # one claim came in

    refused = page_post(client, trace, "edit", answer="", **as_the_page_posts(TRIAL, extra))
    assert refused.status_code == 400
    assert _blank_rows(refused.content.decode()) == ["claims-1"]
    typed = page_post(client, trace, "edit", answer="", **as_the_page_posts(
        TRIAL, {**extra, "key": "support_hours"}))
    assert typed.status_code == 400 and _blank_rows(typed.content.decode()) == []


def test_an_edit_to_citation_markers_alone_is_refused(hold: Any, reviewer: Any,
                                                     login: Any) -> None:
    trace = hold()
    response = page_post(login(reviewer), trace, "edit", answer=" [d1] ", **claims_form(TRIAL))
    assert response.status_code == 400
    assert "Enter the answer text." in response.content.decode()
    assert AnswerVersion.objects.filter(answer__trace_id=trace).count() == 1


@pytest.mark.parametrize(("language", "says"), [
    ("en", "Enter the answer text. Citation markers and HTML comments alone show the reader "
           "nothing."),
    ("ja", "回答本文を入力してください。引用マーカーや HTML コメントだけでは、読み手には何も表示"
           "されません。"),
])
def test_an_edit_to_an_html_comment_alone_is_refused_saying_it_shows_nothing(
    hold: Any, reviewer: Any, login: Any, language: str, says: str
) -> None:
    trace = hold()
    response = page_post(login(reviewer, HTTP_ACCEPT_LANGUAGE=language), trace, "edit",
                         answer="<!-- [d1] -->", **claims_form(TRIAL))
    assert response.status_code == 400
    assert says in response.content.decode()
    assert AnswerVersion.objects.filter(answer__trace_id=trace).count() == 1


@pytest.mark.parametrize("blank", ["\n", "\r\n", "\r", " \r\n "])
def test_a_blank_claim_value_with_a_line_break_survives_an_edit_of_the_text_alone(
    hold: Any, reviewer: Any, login: Any, blank: str
) -> None:
    trace = hold(claims=[{"key": "trial_days", "value": 14, "cite": "d1"},
                         {"key": "note", "value": blank, "cite": "d1"}])
    client = login(reviewer)
    # What a browser sends back from the text area the value is shown in: each line break
    # as CR LF.
    sent = blank.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "\r\n")
    response = page_post(client, trace, "edit",
                         answer="Our free trial lasts 14 days [d1].",
                         **claims_form(TRIAL, {"key": "note", "value": sent,
                                               "value_type": "text", "cite": "d1"}))
    assert "Enter a value." not in response.content.decode()
    assert response.status_code in (200, 302), response.content.decode()[:300]
    latest = Answer.objects.get(trace_id=trace).current_version
    assert latest.number == 2
    assert {"key": "note", "value": blank, "cite": "d1"} in latest.claims


def test_a_whole_number_typed_with_digit_groups_stays_a_whole_number(
    hold: Any, reviewer: Any, login: Any
) -> None:
    """Python reads 1_000 as a number; read as a decimal, 1000.0 would never match the
    source's 1000, which the gate tells apart from it."""
    trace = hold()

    page_post(login(reviewer), trace, "edit", answer="The trial lasts 1000 days [d1].",
              **claims_form({"key": "trial_days", "value": "1_000", "value_type": "number",
                             "cite": "d1"}))

    latest = AnswerVersion.objects.filter(answer__trace_id=trace).order_by("-number").first()
    assert latest is not None and latest.number == 2
    assert latest.claims == [{"key": "trial_days", "value": 1000, "cite": "d1"}]
    assert type(latest.claims[0]["value"]) is int
