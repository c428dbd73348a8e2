"""A conflict only opens over periods that overlap. A value that holds during part of the
other's period (a promotion over the standard rule) is an exception the dates cannot say, and
a dismissal says so; the form sends an owner whose dates are simply wrong to the documents."""

from __future__ import annotations

from typing import Any

from reviewqueue.sources.models import Conflict


def test_the_form_offers_the_exception_and_says_when_to_correct_dates_instead(
    client: Any, owner: Any, two_owners_disagree: Conflict
) -> None:
    client.force_login(owner)
    page = client.get(f"/owner/conflicts/{two_owners_disagree.pk}/").content.decode()
    assert "They apply to different periods" not in page
    assert "One is an exception for part of the other&#x27;s period" in page
    assert ("If instead the stored dates are wrong and the periods do not overlap, correct the "
            "dates on the documents: the conflict then closes by itself.") in page


def test_an_exception_is_recorded_and_reads_as_one(
    client: Any, owner: Any, promotion: Conflict
) -> None:
    client.force_login(owner)
    response = client.post(f"/owner/conflicts/{promotion.pk}/dismiss", {
        "reason": "different periods", "detail": "The promotion runs in the autumn only.",
        "signature": promotion.signature})
    assert response.status_code == 302
    assert Conflict.objects.get().status == Conflict.Status.DISMISSED
    page = client.get(f"/owner/conflicts/{promotion.pk}/").content.decode()
    assert ("One is an exception for part of the other&#x27;s period: The promotion runs in "
            "the autumn only") in page


def test_the_audit_log_names_the_reason_chosen_and_the_key_never_the_justification(
    client: Any, owner: Any, make_user: Any, two_owners_disagree: Conflict
) -> None:
    from reviewqueue.audit.models import AuditEvent

    client.force_login(owner)
    client.post(f"/owner/conflicts/{two_owners_disagree.pk}/dismiss", {
        "reason": "both valid", "detail": "Staff keep 14 days.",
        "signature": two_owners_disagree.signature})
    client.post(f"/owner/conflicts/{two_owners_disagree.pk}/reopen")
    dismissed = AuditEvent.objects.get(action="conflict.dismissed")
    reopened = AuditEvent.objects.get(action="conflict.reopened")
    assert dismissed.after["dismissal_reason"] == "both valid"
    assert dismissed.after["key"] == reopened.after["key"] == "trial_days"
    assert "Staff keep 14 days." not in str(dismissed.after)

    client.force_login(make_user("ada", "admin"))
    page = client.get("/audit/", {"action": "conflict.dismissed"}).content.decode()
    assert "reason:</span> Both values are valid" in page
    assert "key:</span> trial_days" in page


def test_a_reason_without_a_known_code_records_none(
    owner: Any, two_owners_disagree: Conflict
) -> None:
    from reviewqueue.audit.models import AuditEvent
    from reviewqueue.audit.services import Actor
    from reviewqueue.sources.conflicts import conflict_dismiss

    conflict_dismiss(conflict_id=two_owners_disagree.pk, reason="Staff keep 14 days",
                     user=owner, actor=Actor.of_user(owner))
    assert "dismissal_reason" not in AuditEvent.objects.get(action="conflict.dismissed").after
