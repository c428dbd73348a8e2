"""A corrected revision can say the corrected value in its passages too."""

from __future__ import annotations

import html
from typing import Any

import pytest

from reviewqueue.sources.models import Document
from tests.reviews.conftest import fact
from tests.sources.test_owner_fixes import posted_back

pytestmark = pytest.mark.django_db

PAGE = "/owner/documents/pricing/"
PUBLISH = "/owner/documents/pricing/publish"
PASSAGES = [{"span": "p1", "text": "The free trial lasts 14 days."},
            {"span": "p2", "text": "Support answers\non weekdays."}]


@pytest.fixture
def pricing(publish: Any, owner: Any, client: Any) -> None:
    publish("pricing", facts=[fact("trial_days", 14)], passages=PASSAGES)
    client.force_login(owner)


def texts() -> dict[str, str]:
    revision = Document.objects.get(key="pricing").current_revision
    return {p.span: p.text for p in revision.passages.all()}


def post(client: Any, **typed: str) -> Any:
    page = client.get(PAGE).content.decode()
    return client.post(PUBLISH, posted_back(page, PUBLISH, **typed))


def test_the_value_and_its_passage_are_corrected_together(client: Any, pricing: None) -> None:
    response = post(client, **{"facts-0-value": "30",
                               "passages-0-text": "The free trial lasts 30 days."})
    assert response.status_code == 302, response.content.decode()
    revision = Document.objects.get(key="pricing").current_revision
    assert revision.revision != "r1"
    assert texts() == {"p1": "The free trial lasts 30 days.", "p2": PASSAGES[1]["text"]}
    assert [f.value for f in revision.facts.all()] == [30]


def test_a_passage_sent_back_with_the_browsers_line_breaks_is_no_change(
    client: Any, pricing: None
) -> None:
    # A browser sends a textarea's line breaks as CR LF.
    response = post(client, **{"passages-1-text": "Support answers\r\non weekdays."})
    assert response.status_code == 302
    assert Document.objects.get(key="pricing").current_revision.revision == "r1"
    assert "Nothing changed" in client.get(PAGE).content.decode()


def test_an_empty_passage_is_refused_at_its_field_keeping_what_was_typed(
    client: Any, pricing: None
) -> None:
    response = post(client, **{"facts-0-value": "30", "passages-0-text": "   "})
    assert response.status_code == 400
    page = response.content.decode()
    assert "A passage cannot be empty." in page
    assert 'name="facts-0-value" value="30"' in page
    assert Document.objects.get(key="pricing").current_revision.revision == "r1"


def test_a_span_that_is_not_a_passage_of_the_revision_publishes_nothing(
    client: Any, pricing: None
) -> None:
    response = post(client, **{"passages-0-span": "p9", "passages-0-text": "Made up."})
    assert response.status_code == 400
    assert "passages[p9]" in html.unescape(response.content.decode())
    assert Document.objects.get(key="pricing").current_revision.revision == "r1"


def test_text_typed_on_an_older_revision_is_kept_on_the_new_one(
    client: Any, pricing: None, publish: Any
) -> None:
    page = client.get(PAGE).content.decode()
    # Meanwhile the document system publishes r2, which has no passage p2.
    publish("pricing", revision="r2", facts=[fact("trial_days", 14)], passages=PASSAGES[:1])
    response = client.post(PUBLISH, posted_back(page, PUBLISH, **{
        "passages-0-text": "The free trial lasts 30 days.",
        "passages-1-text": "Support answers every day."}))
    assert response.status_code == 409
    shown = html.unescape(response.content.decode())
    assert "The free trial lasts 30 days.</textarea>" in shown
    assert "Text you typed for passages that are no longer in this revision:" in shown
    assert "<code>p2</code>: <q>Support answers every day.</q>" in shown
    assert texts() == {"p1": "The free trial lasts 14 days."}


def test_a_form_without_passages_changes_none(client: Any, pricing: None) -> None:
    """As posted by a page opened before passages could be edited."""
    typed = {name: value for name, value in posted_back(
        client.get(PAGE).content.decode(), PUBLISH, **{"facts-0-value": "30"}).items()
        if not name.startswith("passages-")}
    assert client.post(PUBLISH, typed).status_code == 302
    assert texts() == {"p1": PASSAGES[0]["text"], "p2": PASSAGES[1]["text"]}
