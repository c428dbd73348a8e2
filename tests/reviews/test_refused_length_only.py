"""A field refused for its length is refused for that alone: the reviewer did write it, so the
page must not also ask for it (“Say why…”, “Enter a key.”), as the owner's dismissal form
already knows (DismissForm.clean)."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.reviews.models import Answer
from tests.reviews.test_decisions import claims_form, page_post

pytestmark = pytest.mark.django_db

SUPPORTED_TEXT = "Support is available 24/7 [d1]."


@pytest.mark.parametrize(("language", "too_long", "asked_for"), [
    ("en", "At most 5,000 characters: this text has 5,001.", "Say why the answer is rejected."),
    ("ja", "5,000 文字までです。この文章は 5,001 文字あります。", "却下する理由を書いてください。"),
])
def test_a_too_long_rejection_comment_is_not_also_said_to_be_missing(
    hold: Any, reviewer: Any, login: Any, language: str, too_long: str, asked_for: str
) -> None:
    trace = hold()
    client = login(reviewer, HTTP_ACCEPT_LANGUAGE=language)
    client.post(f"/answers/{trace}/claim")
    comment = "x" * 5001
    response = page_post(client, trace, "reject", reason="other", comment=comment)
    assert response.status_code == 400
    html = response.content.decode()
    assert too_long in html
    assert f">\n{comment}</textarea>" in html  # kept whole
    assert asked_for not in html  # the comment is there: it is too long, not missing
    assert Answer.objects.get(trace_id=trace).status == "held"


def test_a_too_long_claim_key_is_not_also_said_to_be_missing(
    hold: Any, reviewer: Any, login: Any
) -> None:
    trace = hold()
    long_key = {"key": "k" * 201, "value": "24/7", "value_type": "text", "cite": "d1"}
    response = page_post(login(reviewer), trace, "edit", answer=SUPPORTED_TEXT,
                         **claims_form(long_key))
    assert response.status_code == 400
    html = response.content.decode()
    row = html.split('name="claims-0-key"', 1)[1].split('name="claims-0-value"', 1)[0]
    assert "At most 200 characters: this text has 201." in row
    assert "Enter a key." not in html  # a key was typed: it is too long, not missing
    assert Answer.objects.get(trace_id=trace).current_version.number == 1
