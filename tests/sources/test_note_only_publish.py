"""An owner's correction that changes no value, period or passage publishes nothing, even with
a note: a new revision would send every answer quoting the document back to reviewers as
"Source revised", for a document that says the same."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.reviews.models import Answer
from reviewqueue.sources.models import Document
from tests.reviews.conftest import fact

pytestmark = pytest.mark.django_db


def test_a_note_alone_publishes_nothing_and_keeps_the_note(
    client: Any, owner: Any, publish: Any, submit: Any,
) -> None:
    publish("pricing", facts=[fact("trial_days", 14)])
    assert submit("t-1", as_of=None).json()["status"] == "candidate"
    document = Document.objects.get(key="pricing")
    trial = document.current_revision.facts.get()
    client.force_login(owner)
    response = client.post("/owner/documents/pricing/publish", {
        "revision": "r1", "facts-TOTAL_FORMS": "1", "facts-INITIAL_FORMS": "1",
        "facts-0-fact_id": str(trial.pk), "facts-0-value": "14",
        "facts-0-valid_from": trial.valid_from.isoformat(),
        "facts-0-valid_until": trial.valid_until.isoformat(),
        "note": "Reviewed today, still correct"})
    assert response.status_code == 400
    page = response.content.decode()
    assert ("Nothing was published: the values and passages are as they were. A revision with "
            "only a note would send every answer quoting this document back to reviewers, for "
            "a document that says the same. Change a value or a passage, or leave the note "
            "out.") in page
    assert "Reviewed today, still correct</textarea>" in page
    assert list(document.revisions.values_list("revision", flat=True)) == ["r1"]
    assert Answer.objects.get().status == "candidate"
