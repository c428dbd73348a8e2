"""An owner who corrects a fact's value on the document page, while the passage the fact quotes
still says the old value, is stopped before publishing: answers quoting that passage would show
readers the old value beside the new fact. Correcting the passage too, or ticking "The passages
are right as they are", publishes."""

from __future__ import annotations

import datetime as dt
import html
import re
from typing import Any

import pytest
from django.utils import timezone

from reviewqueue.sources.models import Document
from tests.sources.test_owner_fixes import posted_back

pytestmark = pytest.mark.django_db

PAGE = "/owner/documents/pricing/"
PUBLISH = "/owner/documents/pricing/publish"


def current_values() -> list[Any]:
    revision = Document.objects.get(key="pricing").current_revision
    return [f.value for f in revision.facts.order_by("position")]


@pytest.fixture
def pricing(publish: Any, owner: Any, client: Any) -> Any:
    from tests.reviews.conftest import fact

    publish("pricing", facts=[fact("trial_days", 14), fact("plan", "Basic", span="p2")],
            passages=[{"span": "p1", "text": "The free trial lasts 14 days."},
                      {"span": "p2", "text": "Everyone starts on the Basic plan."}])
    client.force_login(owner)
    return client


def send(client: Any, **typed: str) -> Any:
    page = client.get(PAGE).content.decode()
    return client.post(PUBLISH, posted_back(page, PUBLISH, note="Longer trial", **typed))


def test_a_value_corrected_beside_a_passage_that_still_says_the_old_one_is_stopped(
    pricing: Any,
) -> None:
    refused = send(pricing, **{"facts-0-value": "30", "facts-1-value": '"Pro"'})
    assert refused.status_code == 400
    page = html.unescape(refused.content.decode())
    assert "Nothing was published: a passage still says the value you corrected." in page
    box = re.search(r"<div data-passages-left-behind>.*?</div>", page, re.S)
    assert box is not None
    assert re.findall(r"<li>(.*?)</li>", box.group(0)) == [
        "Passage p1 still says 14, not 30 (trial_days).",
        'Passage p2 still says "Basic", not "Pro" (plan).']
    assert 'name="passages_checked"' in box.group(0)
    # What the owner typed is kept.
    assert re.search(r'name="facts-0-value"[^>]*value="30"', page)
    assert "Longer trial" in page
    assert current_values() == [14, "Basic"]


def test_correcting_the_passage_too_or_ticking_the_box_publishes(pricing: Any) -> None:
    fixed = send(pricing, **{"facts-0-value": "30",
                             "passage:p1": "The free trial lasts 30 days."})
    assert fixed.status_code == 302 and current_values() == [30, "Basic"]
    ticked = send(pricing, **{"facts-0-value": "45", "passages_checked": "1"})
    assert ticked.status_code == 302 and current_values() == [45, "Basic"]


def test_a_passage_that_says_the_new_value_already_or_never_said_the_old_one_passes(
    pricing: Any, publish: Any,
) -> None:
    from tests.reviews.conftest import fact

    publish("pricing", revision="r2", facts=[fact("trial_days", 14)],
            passages=[{"span": "p1", "text": "14 days here, 30 days in the EU."}])
    assert send(pricing, **{"facts-0-value": "30"}).status_code == 302  # says 30 already
    # Newer than the correction just made on the page, so that it is current.
    publish("pricing", revision="r3", facts=[fact("trial_days", 14)],
            passages=[{"span": "p1", "text": "Two weeks of trial."}],
            updated_at=(timezone.now() + dt.timedelta(minutes=1)).isoformat())
    assert send(pricing, **{"facts-0-value": "21"}).status_code == 302  # never said 14


def test_a_true_or_false_corrected_beside_an_unchanged_passage_asks_for_a_look(
    publish: Any, owner: Any, client: Any,
) -> None:
    from tests.reviews.conftest import fact

    # No text writes "false": the passage says it in words, which no match can find.
    publish("pricing", facts=[fact("weekend_support", False)],
            passages=[{"span": "p1", "text": "There is no weekend support."}])
    client.force_login(owner)
    refused = send(client, **{"facts-0-value": "true"})
    assert refused.status_code == 400
    page = html.unescape(refused.content.decode())
    assert ("Nothing was published: check that the passages no longer say the values you "
            "corrected.") in page
    box = re.search(r"<div data-passages-left-behind>.*?</div>", page, re.S)
    assert box is not None
    assert re.findall(r"<li>(.*?)</li>", box.group(0)) == [
        "Passage p1 is unchanged, while weekend_support goes from false to true: check that "
        "it does not still say the old value in words."]
    assert current_values() == [False]
    # Rewriting the passage, or ticking the box, publishes.
    assert send(client, **{"facts-0-value": "true",
                           "passage:p1": "Support is open at weekends."}).status_code == 302
    assert current_values() == [True]
    assert send(client, **{"facts-0-value": "false", "passages_checked": "1"}).status_code == 302
    assert current_values() == [False]
