"""A conflict is only opened over validity periods that overlap: a dismissal saying the values
apply to different periods is not offered, and the owner is sent to the facts' dates instead."""

from __future__ import annotations

from typing import Any

from reviewqueue.sources.models import Conflict

PERIODS_REFUSED = "The validity periods stored for these values overlap"


def test_the_dismissal_form_offers_no_different_periods_and_says_where_dates_go(
    client: Any, owner: Any, two_owners_disagree: Conflict
) -> None:
    client.force_login(owner)
    page = client.get(f"/owner/conflicts/{two_owners_disagree.pk}/").content.decode()
    assert 'value="different periods"' not in page
    assert 'value="different plans"' in page
    assert "Values for different periods? Give each fact its dates on its document" in page


def test_a_page_shown_before_is_refused_naming_the_reason_and_keeping_the_text(
    client: Any, owner: Any, two_owners_disagree: Conflict
) -> None:
    client.force_login(owner)
    response = client.post(f"/owner/conflicts/{two_owners_disagree.pk}/dismiss", {
        "reason": "different periods", "detail": "The promo ends in May.",
        "signature": two_owners_disagree.signature})
    assert response.status_code == 400
    page = response.content.decode()
    assert PERIODS_REFUSED in page
    assert "The promo ends in May." in page
    assert Conflict.objects.get().status == Conflict.Status.OPEN


def test_a_dismissal_stored_with_different_periods_still_reads_in_words(
    client: Any, owner: Any, two_owners_disagree: Conflict
) -> None:
    Conflict.objects.filter(pk=two_owners_disagree.pk).update(
        status=Conflict.Status.DISMISSED, dismissed_by=owner,
        dismissal_reason="different periods: the promo ends in May",
        dismissed_signature=two_owners_disagree.signature)
    client.force_login(owner)
    page = client.get(f"/owner/conflicts/{two_owners_disagree.pk}/").content.decode()
    assert "They apply to different periods: the promo ends in May" in page
