"""An answer at the API's limits, as the reviewer's page shows it: a page whose size follows the
answer's, not the answer's size times its sources'."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import answer_body
from tests.reviews.conftest import fact

pytestmark = pytest.mark.django_db

# A long passage (a handbook's whole section), which the API takes up to 100,000 characters.
LONG = "The free trial lasts 14 days. " + "Terms apply to every plan and every seat. " * 1200


def _held(service_api: Any, trace: str, sentences: int) -> str:
    text = " ".join(f"Point {n}: the free trial lasts 14 days [d1]." for n in range(sentences))
    body = answer_body(trace, answer=text, as_of=None, retrieved=[
        {"cite": "d1", "document_id": "handbook", "revision": "r1", "span": "p1"},
        {"cite": "d2", "document_id": "pricing-eu", "revision": "r1", "span": "p1"}])
    response = service_api.post("/api/v1/answers", body, format="json")
    assert response.status_code == 201 and response.json()["status"] == "held", response.content
    return trace


def test_a_long_passage_every_sentence_cites_is_written_once_on_the_page(
    publish: Any, service_api: Any, reviewer: Any, login: Any
) -> None:
    """Each marker drew the whole cited passage again: 300 sentences citing a 50 KB section
    made a 15 MB page (a 200 KB answer of markers, gigabytes). The first chip of a source
    holds its passage; the others open on it (item.js), or lead to it."""
    publish("handbook", title="Handbook", facts=[fact("trial_days", 14)],
            passages=[{"span": "p1", "text": LONG}])
    publish("pricing-eu", title="Pricing in the EU", facts=[fact("trial_days", 30)],
            passages=[{"span": "p1", "text": "In the EU the free trial lasts 30 days."}])
    client = login(reviewer)
    pages = {n: client.get(f"/answers/{_held(service_api, f't-{n}', n)}/").content.decode()
             for n in (2, 300)}

    assert pages[300].count('data-cite="d1"') == pages[2].count('data-cite="d1"') + 298
    assert pages[300].count(LONG) == pages[2].count(LONG)
    assert len(pages[300]) < len(pages[2]) + 300 * 1000
