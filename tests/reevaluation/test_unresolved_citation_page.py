"""An answer citing a revision the store never received keeps its verdict when its document
gets a new current revision (still not the cited one): the gate read nothing from either
revision, so its fingerprint is the same, and the verdict names neither as read. The item
page still shows the gate's own words: a citation the gate could not resolve is no basis of
them."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.reviews.models import Answer
from tests.reevaluation.conftest import fact

pytestmark = pytest.mark.django_db


def test_the_gates_words_stay_on_the_page_after_the_document_moves_on(
    publish_doc: Any, ingest: Any, reviewer: Any, client: Any
) -> None:
    publish_doc("pricing", "r1", facts=[fact(14)])
    answer = ingest("t-unreceived", cites=[("d1", "pricing", "r9")])  # r9: not received
    assert (answer.status, answer.current_verdict.reason) == ("held", "invalid_metadata")
    first = answer.current_verdict_id
    publish_doc("pricing", "r2", facts=[fact(21)])
    answer = Answer.objects.select_related("current_verdict").get(pk=answer.pk)
    assert answer.current_verdict_id == first  # the same verdict
    # It names no revision as read for the citation, so nothing in it went stale: neither r1,
    # current when it was computed, nor r2 (a decision on it copies this).
    assert answer.current_verdict.revisions_used[0] == {
        "cite": "d1", "document": "pricing", "revision": "r9", "current": None,
        "received": False}

    client.force_login(reviewer)
    page = client.get(f"/answers/{answer.trace_id}/").content.decode()
    words = page.split('<details class="gate-detail">')
    assert len(words) == 3, page  # one per finding: the text's marker and the claim
    assert "claim 1 cites d1: the store never received the revision it was taken from" in page
