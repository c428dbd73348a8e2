"""What people read beside the data: the day count next to a date, and the audit log's labels
for what an event records, in English and Japanese."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest
from django.utils import timezone

from tests.reviews.conftest import fact

pytestmark = pytest.mark.django_db


def _late_evening_two_days_ago() -> dt.datetime:
    """23:59 local time on the day before yesterday: two calendar days ago, though fewer than
    48 hours have passed (unless the test runs in the last minute of the day)."""
    start_of_today = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    return start_of_today - dt.timedelta(days=1, minutes=1)


def test_the_updated_day_and_its_days_ago_agree_at_a_day_boundary(
    publish: Any, hold: Any, reviewer: Any, login: Any
) -> None:
    updated = _late_evening_two_days_ago()
    day = f"{updated:%Y-%m-%d}"
    publish("pricing", revision="r2", updated_at=updated.astimezone(dt.UTC).strftime(
        "%Y-%m-%dT%H:%M:%SZ"),
        facts=[fact("trial_days", 14), fact("support_hours", "24/7", span="p2")],
        passages=[{"span": "p1", "text": "The free trial lasts 14 days."},
                  {"span": "p2", "text": "Support is available 24/7."}])
    trace = hold(retrieved=[
        {"cite": "d1", "document_id": "pricing", "revision": "r2", "span": "p1"},
        {"cite": "d2", "document_id": "pricing-eu", "revision": "r1", "span": "p1"}])
    page = login(reviewer).get(f"/answers/{trace}/").content.decode()
    # The citation card: "updated <day> (<n> days ago)". The day is two calendar days back, as
    # a fact that ended that day is "expired 2 days ago" on the same page.
    shown = re.search(rf"updated {day} \(([^)]*)\)", page)
    assert shown is not None, page
    assert shown.group(1) == "2\xa0days ago"


def test_a_hand_off_event_labels_the_note_digest_like_every_other_digest(
    hold: Any, reviewer: Any, owner: Any, admin_client: Any, login: Any
) -> None:
    trace = hold()
    login(reviewer).post(f"/answers/{trace}/send-to-owner", {"note": "Which value applies?"})
    page = admin_client.get(f"/audit/answers/{trace}/").content.decode()
    assert "review_item.sent_to_owner" in page
    # Labelled as the reply's digest is ("reply (SHA-256)"), not by its raw key.
    assert "note_sha256" not in page
    assert "note (SHA-256)" in page


def test_a_conflict_event_says_what_changed_it_in_japanese(
    sources: None, admin_user: Any, login: Any
) -> None:
    page = login(admin_user, HTTP_ACCEPT_LANGUAGE="ja").get(
        "/audit/?action=conflict.opened").content.decode()
    assert "conflict.opened" in page
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page))
    # It was "実行者: revision": a code shown raw, labelled as if it were a person.
    assert not re.search(r": revision\b", text), re.search(r".{40}: revision.{20}", text)
    assert "変更のきっかけ: リビジョン公開" in text
