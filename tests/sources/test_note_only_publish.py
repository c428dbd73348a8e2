"""An owner's correction that changes no value, period or passage publishes nothing, even with
a note: a new revision would send every answer quoting the document back to reviewers as
"Source revised", for a document that says the same. Nor does a value typed again as it was:
with a space around it, or in the full-width digits of a Japanese input method."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.reviews.models import Answer
from reviewqueue.sources.models import Conflict, Document
from tests.reviews.conftest import fact
from tests.sources.test_owner_fixes import conflict_dismiss_directly, posted_back

pytestmark = pytest.mark.django_db

PAGE = "/owner/documents/pricing/"
PUBLISH = "/owner/documents/pricing/publish"
NOTHING_PUBLISHED = (
    "Nothing was published: the values and passages are as they were. A revision with only a "
    "note would send every answer quoting this document back to reviewers, for a document "
    "that says the same. Change a value or a passage, or leave the note out.")


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
    assert NOTHING_PUBLISHED in page
    assert "Reviewed today, still correct</textarea>" in page
    assert list(document.revisions.values_list("revision", flat=True)) == ["r1"]
    assert Answer.objects.get().status == "candidate"


# 14 typed again: a trailing or leading space, or full-width digits (U+FF11 U+FF14).
@pytest.mark.parametrize("retyped", ["14 ", " 14", "\uff11\uff14"])
def test_the_same_value_typed_again_with_a_note_publishes_nothing(
    client: Any, owner: Any, publish: Any, submit: Any, retyped: str,
) -> None:
    publish("pricing", facts=[fact("trial_days", 14)])
    assert submit("t-1", as_of=None).json()["status"] == "candidate"
    client.force_login(owner)
    page = client.get(PAGE).content.decode()
    response = client.post(PUBLISH, posted_back(page, PUBLISH, **{
        "facts-0-value": retyped, "note": "Reviewed today, still correct"}))
    assert response.status_code == 400
    page = response.content.decode()
    assert NOTHING_PUBLISHED in page
    assert "Reviewed today, still correct</textarea>" in page
    document = Document.objects.get(key="pricing")
    assert list(document.revisions.values_list("revision", flat=True)) == ["r1"]
    assert Answer.objects.get().status == "candidate"


def test_the_same_value_typed_again_does_not_reopen_a_dismissed_conflict(
    client: Any, owner: Any, two_owners_disagree: Conflict,
) -> None:
    conflict_dismiss_directly(two_owners_disagree)
    client.force_login(owner)
    page = client.get(PAGE).content.decode()
    # olivia re-reads her value, and the field keeps a trailing space she typed by habit.
    client.post(PUBLISH, posted_back(page, PUBLISH, **{
        "facts-0-value": "14 ", "note": "Checked: still 14 days"}))
    # Her document says exactly what it said: the dismissal her colleague made still holds.
    assert Conflict.objects.get().status == Conflict.Status.DISMISSED
    assert Document.objects.get(key="pricing").revisions.count() == 1


def test_the_same_digits_quoted_over_a_number_are_a_change_of_type(
    client: Any, owner: Any, publish: Any,
) -> None:
    """14 and "14" differ, as they do to the gate: quoted, the value is published as text."""
    publish("pricing", facts=[fact("trial_days", 14)])
    client.force_login(owner)
    page = client.get(PAGE).content.decode()
    response = client.post(PUBLISH, posted_back(page, PUBLISH, **{"facts-0-value": '"14"'}))
    assert response.status_code == 302
    assert Document.objects.get(key="pricing").current_revision.facts.get().value == "14"
