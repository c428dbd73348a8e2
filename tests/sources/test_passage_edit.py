"""A corrected revision can say the corrected value in its passages too."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest

from reviewqueue.sources.models import Document
from tests.reviews.conftest import fact
from tests.sources.test_owner_fixes import PASSAGES_CHECKED, posted_back

pytestmark = pytest.mark.django_db

PAGE = "/owner/documents/pricing/"
PUBLISH = "/owner/documents/pricing/publish"
PASSAGES = [{"span": "p1", "text": "The free trial lasts 14 days."},
            {"span": "p2", "text": "Support answers\non weekdays."},
            {"span": "p3", "text": "Nothing here is a fact."}]
FACTS = [fact("trial_days", 14), fact("support_days", 5, span="p2")]


@pytest.fixture
def pricing(publish: Any, owner: Any, client: Any) -> None:
    publish("pricing", facts=FACTS, passages=PASSAGES)
    client.force_login(owner)


def texts() -> dict[str, str]:
    revision = Document.objects.get(key="pricing").current_revision
    return {p.span: p.text for p in revision.passages.all()}


def post(client: Any, **typed: str) -> Any:
    page = client.get(PAGE).content.decode()
    return client.post(PUBLISH, posted_back(page, PUBLISH, **typed))


def test_the_value_and_its_passage_are_corrected_together(client: Any, pricing: None) -> None:
    response = post(client, **{"facts-0-value": "30",
                               "passage:p1": "The free trial lasts 30 days."})
    assert response.status_code == 302, response.content.decode()
    revision = Document.objects.get(key="pricing").current_revision
    assert revision.revision != "r1"
    assert texts() == {"p1": "The free trial lasts 30 days.", "p2": PASSAGES[1]["text"],
                       "p3": PASSAGES[2]["text"]}
    assert [f.value for f in revision.facts.order_by("position")] == [30, 5]


def test_the_passages_the_facts_quote_come_first_and_the_others_are_folded(
    client: Any, pricing: None
) -> None:
    page = client.get(PAGE).content.decode()
    assert re.findall(r'<textarea[^>]*name="passage:(\w+)"', page) == ["p1", "p2", "p3"]
    folded = page[page.index("<details class=\"other-passages\" data-other-passages>"):]
    assert "<summary>1 passage no fact quotes</summary>" in folded
    assert re.findall(r'<textarea[^>]*name="passage:(\w+)"', folded) == ["p3"]
    # Each box has its own label.
    ids = re.findall(r'<textarea id="([\w-]+)"', page)
    assert len(set(ids)) == 3 and all(f'<label for="{i}">' in page for i in ids)


def test_a_passage_no_fact_quotes_is_corrected_on_its_own(client: Any, pricing: None) -> None:
    response = post(client, **{"passage:p3": "Prices exclude VAT."})
    assert response.status_code == 302, response.content.decode()
    assert texts() == {"p1": PASSAGES[0]["text"], "p2": PASSAGES[1]["text"],
                       "p3": "Prices exclude VAT."}
    assert Document.objects.get(key="pricing").current_revision.revision != "r1"


def test_a_refused_passage_no_fact_quotes_comes_back_unfolded_with_its_error(
    client: Any, pricing: None
) -> None:
    response = post(client, **{"facts-0-value": "30", "passage:p3": " "})
    assert response.status_code == 400
    page = response.content.decode()
    folded = page[page.index("<details class=\"other-passages\" data-other-passages open>"):]
    assert re.search(r'name="passage:p3"[^>]*aria-invalid="true"[^>]*>\n </textarea>\s*'
                     r'<ul class="errorlist"[^>]*><li>A passage cannot be empty.</li>', folded)
    assert Document.objects.get(key="pricing").current_revision.revision == "r1"


def test_a_passage_sent_back_with_the_browsers_line_breaks_is_no_change(
    client: Any, pricing: None
) -> None:
    # A browser sends a textarea's line breaks as CR LF.
    response = post(client, **{"passage:p2": "Support answers\r\non weekdays."})
    assert response.status_code == 302
    assert Document.objects.get(key="pricing").current_revision.revision == "r1"
    assert "Nothing changed" in client.get(PAGE).content.decode()


def test_a_passage_changed_only_by_white_space_around_it_is_no_change(
    client: Any, pricing: None
) -> None:
    response = post(client, **{"passage:p1": "  The free trial lasts 14 days. \n"})
    assert response.status_code == 302
    assert Document.objects.get(key="pricing").current_revision.revision == "r1"
    assert "Nothing changed" in client.get(PAGE).content.decode()


def test_an_empty_passage_is_refused_at_its_field_keeping_what_was_typed(
    client: Any, pricing: None
) -> None:
    response = post(client, **{"facts-0-value": "30", "passage:p1": "   ",
                               "passage:p2": "Support answers every day."})
    assert response.status_code == 400
    page = response.content.decode()
    # Said under the passage's own box, which keeps what was typed, as do the others.
    assert re.search(r'name="passage:p1"[^>]*aria-invalid="true"[^>]*>\n   </textarea>\s*'
                     r'<ul class="errorlist"[^>]*><li>A passage cannot be empty.</li>', page)
    assert ">\nSupport answers every day.</textarea>" in page
    assert 'name="facts-0-value" value="30"' in page
    assert Document.objects.get(key="pricing").current_revision.revision == "r1"


def test_a_span_that_is_not_a_passage_of_the_revision_publishes_nothing(
    client: Any, pricing: None
) -> None:
    response = post(client, **{"passage:p9": "Made up."})
    assert response.status_code == 400
    assert "passages[p9]" in html.unescape(response.content.decode())
    assert Document.objects.get(key="pricing").current_revision.revision == "r1"


def test_text_typed_on_an_older_revision_is_kept_on_the_new_one(
    client: Any, pricing: None, publish: Any
) -> None:
    page = client.get(PAGE).content.decode()
    # Meanwhile the document system publishes r2, which has no passage p2.
    publish("pricing", revision="r2", facts=FACTS[:1], passages=PASSAGES[:1])
    response = client.post(PUBLISH, posted_back(page, PUBLISH, **{
        "passage:p1": "The free trial lasts 30 days.",
        "passage:p2": "Support answers every day."}))
    assert response.status_code == 409
    shown = html.unescape(response.content.decode())
    assert "The free trial lasts 30 days.</textarea>" in shown
    assert "Text you typed for passages that are no longer in this revision:" in shown
    assert "<code>p2</code>: <q>Support answers every day.</q>" in shown
    assert texts() == {"p1": "The free trial lasts 14 days."}


def test_text_typed_over_a_passage_the_new_revision_moved_follows_it(
    client: Any, pricing: None, publish: Any
) -> None:
    page = client.get(PAGE).content.decode()
    # Meanwhile r2 swaps p1 and p2: the support passage is now p1.
    publish("pricing", revision="r2", facts=[fact("trial_days", 14, span="p2"),
                                             fact("support_days", 5, span="p1")],
            passages=[{"span": "p1", "text": PASSAGES[1]["text"]},
                      {"span": "p2", "text": PASSAGES[0]["text"]}, PASSAGES[2]])
    response = client.post(PUBLISH, posted_back(page, PUBLISH, **{
        "passage:p2": "Support answers every day."}))
    assert response.status_code == 409
    shown = html.unescape(response.content.decode())
    boxes = dict(re.findall(r'<textarea[^>]*name="passage:(\w+)"[^>]*>(.*?)</textarea>', shown,
                            re.S))
    assert boxes["p1"].strip() == "Support answers every day."
    assert boxes["p2"].strip() == "The free trial lasts 14 days."
    # The passage edited did not change, it moved: nothing was published over it meanwhile.
    assert "Published meanwhile" not in shown


def test_a_form_without_passages_changes_none(client: Any, pricing: None) -> None:
    """As posted by a page opened before passages could be edited."""
    typed = {name: value for name, value in posted_back(
        client.get(PAGE).content.decode(), PUBLISH, **{"facts-0-value": "30"},
        **PASSAGES_CHECKED).items()
        if not name.startswith("passage:")}
    assert client.post(PUBLISH, typed).status_code == 302
    assert texts() == {p["span"]: p["text"] for p in PASSAGES}


def test_a_passage_stored_with_cr_lf_or_blank_does_not_block_or_change(
    client: Any, publish: Any, owner: Any
) -> None:
    """The API keeps passages as sent: line breaks as CR LF, or only spaces."""
    publish("pricing", facts=[fact("trial_days", 14), fact("support_days", 5, span="p2")],
            passages=[{"span": "p1", "text": "The free trial\r\nlasts 14 days."},
                      {"span": "p2", "text": " "}])
    client.force_login(owner)
    assert post(client).status_code == 302  # nothing typed: nothing published
    assert Document.objects.get(key="pricing").current_revision.revision == "r1"
    assert post(client, **{"facts-0-value": "30"}, **PASSAGES_CHECKED).status_code == 302
    assert texts() == {"p1": "The free trial\r\nlasts 14 days.", "p2": " "}


def test_the_form_of_a_revision_with_a_thousand_facts_can_be_sent(
    client: Any, publish: Any, owner: Any
) -> None:
    """As many facts as the API takes, each quoting its own passage: some 6,000 fields."""
    publish("pricing", facts=[fact(f"k{n}", n, span=f"p{n}") for n in range(1000)],
            passages=[{"span": f"p{n}", "text": f"Key {n} is {n}."} for n in range(1000)])
    client.force_login(owner)
    response = post(client, **{"facts-999-value": "1", "passage:p999": "Key 999 is 1."})
    assert response.status_code == 302, response.content.decode()[:500]
    revision = Document.objects.get(key="pricing").current_revision
    assert revision.passages.get(span="p999").text == "Key 999 is 1."
