"""A text value made of brackets only ("[" 1,500 times, which the API takes: a text value may
hold 2,000 characters) is text like any other. Python's JSON decoder gives up on brackets
nested that deep with a RecursionError, not the ValueError of any other text that is not
JSON: the pages and forms that read a value as JSON show and take it as the plain text it is,
and a conflict over it is mailed, the publication answered as any other. Conflict mail goes out
after the commit, best effort: a mail that cannot be written is logged, and the publication
that opened the conflict is still answered with what it stored."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from django.core import mail

from reviewqueue.reviews.models import Answer
from reviewqueue.sources.models import Conflict
from tests.reviews.conftest import fact, hold, sources  # noqa: F401
from tests.reviews.test_decisions import claims_form, page_post
from tests.sources.test_owner_input import current, field_errors, field_value, publish_form

pytestmark = pytest.mark.django_db

BRACKETS = "[" * 1500


def test_the_owner_inbox_lists_a_conflict_over_a_bracket_value(
    publish: Any, owner: Any, client: Any
) -> None:
    publish("pricing", facts=[fact("shape", BRACKETS)])
    publish("pricing-eu", facts=[fact("shape", "round")])
    client.force_login(owner)
    response = client.get("/owner/")
    assert response.status_code == 200
    assert f"<code>{BRACKETS}</code>" in response.content.decode()


def test_the_document_page_and_the_conflict_page_show_a_bracket_value_as_typed(
    publish: Any, owner: Any, client: Any
) -> None:
    publish("pricing", facts=[fact("shape", BRACKETS)])
    publish("pricing-eu", facts=[fact("shape", "round")])
    client.force_login(owner)
    page = client.get("/owner/documents/pricing/")
    assert page.status_code == 200
    assert field_value(page.content.decode(), "facts-0-value") == BRACKETS  # not quoted
    page = client.get(f"/owner/conflicts/{Conflict.objects.get().pk}/")
    assert page.status_code == 200
    assert f"<code>{BRACKETS}</code>" in page.content.decode()


def test_the_item_page_shows_a_claimed_fact_that_changed_to_a_bracket_value(
    hold: Any, publish: Any, reviewer: Any, client: Any,  # noqa: F811
) -> None:
    trace = hold()
    publish("pricing", revision="r2", updated_at="2026-10-02T09:00:00Z",
            facts=[fact("trial_days", BRACKETS), fact("support_hours", "24/7", span="p2")],
            passages=[{"span": "p1", "text": "The free trial lasts 14 days."},
                      {"span": "p2", "text": "Support is available 24/7."}])
    client.force_login(reviewer)
    response = client.get(f"/answers/{trace}/")
    assert response.status_code == 200
    page = response.content.decode()
    section = page[page.index("What changed in the sources"):page.index("Verdict history")]
    assert f'<code class="changed">{BRACKETS}</code>' in section


def test_the_correction_form_takes_a_bracket_value_as_text(
    publish: Any, owner: Any, client: Any
) -> None:
    publish("pricing", facts=[fact("shape", "round"), fact("trial_days", 14)])
    facts = list(current().facts.order_by("position"))
    client.force_login(owner)
    response = client.post("/owner/documents/pricing/publish",
                           publish_form(facts, {"shape": BRACKETS}, revision="r1"))
    assert response.status_code == 302, response.content.decode()[-3000:]
    assert current().facts.get(key="shape").value == BRACKETS

    # Posted back as the page shows it, it stays that text while another fact changes.
    facts = list(current().facts.order_by("position"))
    shown = field_value(client.get("/owner/documents/pricing/").content.decode(),
                        "facts-0-value")
    response = client.post("/owner/documents/pricing/publish",
                           publish_form(facts, {"shape": shown, "trial_days": "15"},
                                        revision=current().revision))
    assert response.status_code == 302, response.content.decode()[-3000:]
    assert {f.key: f.value for f in current().facts.all()} == {"shape": BRACKETS,
                                                               "trial_days": 15}


def test_a_bracket_value_typed_over_a_number_asks_for_quotes(
    publish: Any, owner: Any, client: Any
) -> None:
    publish("pricing", facts=[fact("trial_days", 14)])
    facts = list(current().facts.order_by("position"))
    client.force_login(owner)
    response = client.post("/owner/documents/pricing/publish",
                           publish_form(facts, {"trial_days": BRACKETS}, revision="r1"))
    assert response.status_code == 400
    assert field_errors(response.content.decode(), "id_facts-0-value").strip().startswith(
        f"This fact is a number. To make it the text {BRACKETS}, write it in quotes")
    assert current().revision == "r1"


def test_the_edit_form_takes_a_bracket_claim_as_text(
    publish: Any, hold: Any, reviewer: Any, client: Any,  # noqa: F811
) -> None:
    publish("shapes", facts=[fact("shape", BRACKETS)],
            passages=[{"span": "p1", "text": "The shape, as the drawing gives it."}])
    trace = hold(retrieved=[
        {"cite": "d1", "document_id": "pricing", "revision": "r1", "span": "p1"},
        {"cite": "d2", "document_id": "pricing-eu", "revision": "r1", "span": "p1"},
        {"cite": "d3", "document_id": "shapes", "revision": "r1", "span": "p1"}])
    client.force_login(reviewer)
    response = page_post(client, trace, "edit", answer="The shape is on record [d3].",
                         **claims_form({"key": "shape", "value": BRACKETS,
                                        "value_type": "text", "cite": "d3"}))
    assert response.status_code == 302, response.content.decode()[-3000:]
    answer = Answer.objects.get(trace_id=trace)
    assert answer.status == "approved"
    assert answer.current_version.claims == [{"key": "shape", "value": BRACKETS, "cite": "d3"}]


@pytest.mark.django_db(transaction=True)
def test_publishing_a_conflicting_bracket_value_is_answered_and_mailed(
    publish: Any, owners_with_mail: None
) -> None:
    publish("pricing", facts=[fact("shape", "round")])
    response = publish("trial-promo", owner="oscar", facts=[fact("shape", BRACKETS)])
    assert response.status_code == 201
    assert Conflict.objects.get().status == "open"
    assert sorted(m.to[0] for m in mail.outbox) == ["olivia@example.test",
                                                   "oscar@example.test"]
    for sent in mail.outbox:
        assert f"- pricing (r1): round\n- trial-promo (r1): {BRACKETS}\n" in sent.body


@pytest.mark.django_db(transaction=True)
def test_a_conflict_mail_that_cannot_be_written_is_logged_and_the_publication_answered(
    publish: Any, owners_with_mail: None, monkeypatch: Any, caplog: Any
) -> None:
    def broken(*args: Any) -> tuple[str, str]:
        raise RuntimeError("a bug in writing the mail")

    monkeypatch.setattr("reviewqueue.sources.conflicts._conflict_mail", broken)
    publish("pricing", facts=[fact("shape", "round")])
    with caplog.at_level(logging.ERROR, logger="reviewqueue.sources.conflicts"):
        response = publish("trial-promo", owner="oscar", facts=[fact("shape", "square")])
    assert response.status_code == 201
    assert Conflict.objects.get().status == "open"
    assert mail.outbox == []
    [record] = [r for r in caplog.records if r.name == "reviewqueue.sources.conflicts"]
    assert record.getMessage() == "conflict notification failed"
    assert record.exc_info is not None and "a bug in writing the mail" in caplog.text
