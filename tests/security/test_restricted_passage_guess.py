"""An admin manages every document but reads only the revisions their principals allow. A
correction form posted on an older revision they may not read must not tell them whether a
passage text they typed is the one that revision holds: the page that comes back (the current
revision, with what was typed kept) must not depend on it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.reviews.conftest import fact

pytestmark = pytest.mark.django_db

SECRET = "Probation lasts 90 days."


@pytest.fixture
def restricted_then_public(publish: Any) -> None:
    """`policy` r1 was for HR only; r2, current, is public."""
    publish("policy", revision="r1", principals=["group:hr"], title="HR policy",
            facts=[fact("k", 1)], passages=[{"span": "p1", "text": SECRET}],
            updated_at="2026-09-01T09:00:00Z")
    publish("policy", revision="r2", principals=["*"], title="Public policy",
            facts=[fact("k", 1)], passages=[{"span": "p1", "text": "Probation lasts 60 days."}],
            updated_at="2026-10-01T09:00:00Z")


def _post_on_r1(client: Any, passage: str) -> Any:
    return client.post("/owner/documents/policy/publish", {
        "revision": "r1", "passage:p1": passage, "note": "",
        "facts-TOTAL_FORMS": "0", "facts-INITIAL_FORMS": "0",
        "facts-MIN_NUM_FORMS": "0", "facts-MAX_NUM_FORMS": "1000"})


def test_a_correction_posted_on_a_restricted_revision_does_not_confirm_a_guessed_passage(
    restricted_then_public: None, admin_client: Any,
) -> None:
    assert SECRET not in admin_client.get("/owner/documents/policy/").content.decode()
    wrong = _post_on_r1(admin_client, "Probation lasts 91 days.")
    right = _post_on_r1(admin_client, SECRET)
    assert wrong.status_code == right.status_code
    # Whatever was typed comes back to copy, or nothing does: never only when it is wrong.
    wrong_echoed = "Probation lasts 91 days." in wrong.content.decode()
    right_echoed = SECRET in right.content.decode()
    assert wrong_echoed == right_echoed, (
        f"a wrong guess is echoed: {wrong_echoed}, the right one: {right_echoed}")
