"""An admin manages every document but reads only the revisions their principals allow. A
correction form posted on an older revision they may not read must not tell them whether a
fact value or validity date they typed is the one that revision holds: the page that comes
back (the current revision, with what was typed kept) is the same for a right guess as for a
wrong one, and shows nothing of that revision."""

from __future__ import annotations

import re
from typing import Any

import pytest

from reviewqueue.sources.models import Document
from tests.reviews.conftest import days, fact

pytestmark = pytest.mark.django_db


def _values(value: str, start: int, end: int) -> dict[str, str]:
    return {"value": value, "valid_from": days(start), "valid_until": days(end)}


def _hidden() -> dict[str, str]:
    """What the HR-only revision r1 holds."""
    return _values("4711", -45, 95)


def _shown() -> dict[str, str]:
    """What the public revision r2, current, holds."""
    return _values("60", -30, 60)


def _wrong() -> dict[str, str]:
    """A wrong guess of each of r1's fields."""
    return _values("4712", -44, 94)


@pytest.fixture
def restricted_then_public(publish: Any) -> None:
    """`policy` r1 was for HR only; r2, current, is public, with other values and dates."""
    publish("policy", revision="r1", principals=["group:hr"], title="HR policy",
            facts=[fact("probation_days", 4711, start=-45, end=95)],
            passages=[{"span": "p1", "text": "x"}], updated_at="2026-09-01T09:00:00Z")
    publish("policy", revision="r2", principals=["*"], title="Public policy",
            facts=[fact("probation_days", 60, start=-30, end=60)],
            passages=[{"span": "p1", "text": "x"}], updated_at="2026-10-01T09:00:00Z")


def _post_on_r1(client: Any, field: str, guess: str) -> Any:
    """The current fact's values, but `field` typed as `guess`, on a form based on r1."""
    current = Document.objects.get(key="policy").current_revision.facts.get()
    typed = {**_shown(), field: guess}
    return client.post("/owner/documents/policy/publish", {
        "revision": "r1", "note": "",
        "facts-TOTAL_FORMS": "1", "facts-INITIAL_FORMS": "1",
        "facts-MIN_NUM_FORMS": "0", "facts-MAX_NUM_FORMS": "1000",
        "facts-0-fact_id": str(current.pk),
        **{f"facts-0-{name}": value for name, value in typed.items()},
    })


def _page(response: Any, typed: str) -> str:
    """The page, with what was typed and the form's CSRF token (new on every page) put aside."""
    page = response.content.decode().replace(typed, "TYPED")
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", page)


@pytest.mark.parametrize("field", ["value", "valid_from", "valid_until"])
def test_a_correction_posted_on_a_restricted_revision_does_not_confirm_a_guessed_fact(
    restricted_then_public: None, admin_client: Any, field: str,
) -> None:
    hidden, guess = _hidden()[field], _wrong()[field]
    wrong, right = _post_on_r1(admin_client, field, guess), _post_on_r1(admin_client, field, hidden)
    assert wrong.status_code == right.status_code == 409
    assert hidden not in wrong.content.decode()
    # What was typed comes back either way: the page does not tell a right guess from a wrong.
    assert f'value="{guess}"' in wrong.content.decode()
    assert _page(wrong, guess) == _page(right, hidden)
