"""A conflict dismissed as "one is an exception for part of the other's period": the exception
prevails on its days. An answer stating the standard value on one of them stays held; one
stating it on another day, or stating the exception's value on its days, is released."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.audit.models import AuditEvent
from reviewqueue.audit.services import SYSTEM
from reviewqueue.sources.conflicts import (
    NotAnException,
    conflict_dismiss,
    conflict_reopen,
    exception_facts,
)
from reviewqueue.sources.models import Conflict
from tests.reviews.conftest import days, fact

pytestmark = pytest.mark.django_db


def side(fact_id: int, value: Any, start: str, end: str | None) -> dict[str, Any]:
    return {"fact": fact_id, "value": value, "valid_from": start, "valid_until": end}


def test_the_exception_is_the_value_whose_period_lies_within_another_values() -> None:
    standard = side(1, 14, "2026-01-01", None)
    promo = side(2, 30, "2026-11-01", "2026-12-31")
    assert exception_facts([standard, promo]) == [2]
    # Within a closed period too, and sharing one of its ends.
    assert exception_facts([side(1, 14, "2026-01-01", "2026-12-31"),
                            side(2, 30, "2026-01-01", "2026-03-31")]) == [2]
    # The same period, or periods that only overlap: neither is an exception.
    assert exception_facts([standard, side(2, 30, "2026-01-01", None)]) == []
    assert exception_facts([side(1, 14, "2026-01-01", "2026-06-30"),
                            side(2, 30, "2026-03-01", "2026-12-31")]) == []
    # A fact agreeing with the one around it is no exception to it, but a value beside the
    # promotion over the very same days contradicts it: no exception explains that.
    assert exception_facts([standard, side(3, 14, "2026-11-01", "2026-12-31"), promo]) == []
    # Two promotions in different months are both exceptions...
    autumn = side(2, 30, "2026-10-01", "2026-10-31")
    assert exception_facts([standard, autumn, side(3, 21, "2026-04-01", "2026-04-30")]) == [2, 3]
    # ...but not two standard values over the same period with a promotion inside both, nor
    # one promotion inside another (which prevails?).
    assert exception_facts([standard, side(4, 20, "2026-01-01", None), promo]) == []
    assert exception_facts([standard, side(4, 45, "2026-11-10", "2026-11-20"), promo]) == []


def cites(document: str, value: int, day: int) -> dict[str, Any]:
    return {"retrieved": [{"cite": "d1", "document_id": document, "revision": "r1", "span": "p1"}],
            "claims": [{"key": "trial_days", "value": value, "cite": "d1"}],
            "answer": f"The free trial lasts {value} days [d1].", "as_of": days(day)}


def dismiss(client: Any, conflict: Conflict, reason: str) -> Any:
    return client.post(f"/owner/conflicts/{conflict.pk}/dismiss", {
        "reason": reason, "detail": "The autumn promotion.", "signature": conflict.signature})


def statuses(service_api: Any) -> dict[str, str]:
    return {trace: service_api.get(f"/api/v1/answers/{trace}").json()["status"]
            for trace in ("standard-today", "standard-later", "promo-today")}


def test_an_exception_holds_the_standard_value_on_its_days_only(
    client: Any, owner: Any, promotion: Conflict, submit: Any, service_api: Any, make_user: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    submit("standard-today", **cites("pricing", 14, 0))
    submit("standard-later", **cites("pricing", 14, 60))  # after the promotion ends
    submit("promo-today", **cites("trial-promo", 30, 0))
    assert statuses(service_api) == {
        "standard-today": "held", "standard-later": "candidate", "promo-today": "held"}

    client.force_login(owner)
    with django_capture_on_commit_callbacks(execute=True):
        response = dismiss(client, promotion, "different periods")
    assert response.status_code == 302
    landed = client.get(response["Location"]).content.decode()
    assert ("As an exception, its value prevails during its period: an answer stating another "
            "value on one of its days stays held.") in landed

    promotion.refresh_from_db()
    promo_fact = next(p["fact"] for p in promotion.participants
                      if p["document"] == "trial-promo")
    assert promotion.exceptions == [promo_fact]
    # 14 days is wrong while the promotion runs: a reviewer still sees that answer.
    assert statuses(service_api) == {
        "standard-today": "held", "standard-later": "candidate", "promo-today": "candidate"}
    held = service_api.get("/api/v1/answers/standard-today").json()["verdict"]
    assert held["reason"] == "conflicting_sources"
    assert "trial-promo" in str(held["findings"])
    event = AuditEvent.objects.get(action="conflict.dismissed")
    assert event.after["dismissal_reason"] == "different periods"
    assert event.after["exceptions"] == [promo_fact]

    # The reviewer reads why the answer stating 14 today is still held.
    reviewer = make_user("rita", "reviewer")
    client.force_login(reviewer)
    item = client.get("/answers/standard-today/").content.decode()
    assert ("Dismissed as an exception: on the exception's days its value prevails, so an "
            "answer stating another value for one of them is wrong, and stays held.") in item
    client.force_login(owner)
    page = client.get(f"/owner/conflicts/{promotion.pk}/").content.decode()
    assert page.count("data-exception") == 1
    exception_card = page[page.index("trial-promo@r1"):]
    assert "data-exception" in exception_card[:exception_card.index("</article>")]
    assert ("Dismissed as an exception: this value prevails during its period, and an answer "
            "stating another value on one of its days stays held.") in page


def test_other_reasons_still_release_every_answer_the_knowledge_base_held(
    client: Any, owner: Any, promotion: Conflict, submit: Any, service_api: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    submit("standard-today", **cites("pricing", 14, 0))
    client.force_login(owner)
    with django_capture_on_commit_callbacks(execute=True):
        dismiss(client, promotion, "different plans")
    assert service_api.get("/api/v1/answers/standard-today").json()["status"] == "candidate"
    promotion.refresh_from_db()
    assert promotion.exceptions == []
    assert "data-exception" not in client.get(f"/owner/conflicts/{promotion.pk}/").content.decode()


def test_reopening_forgets_the_exception(owner: Any, promotion: Conflict) -> None:
    conflict_dismiss(conflict_id=promotion.pk, reason="different periods", user=owner,
                     actor=SYSTEM)
    assert conflict_reopen(conflict_id=promotion.pk, actor=SYSTEM).exceptions == []
    assert Conflict.objects.get().exceptions == []


def test_values_over_the_same_period_are_no_exception_and_the_form_keeps_what_was_typed(
    client: Any, owner: Any, two_owners_disagree: Conflict,
) -> None:
    client.force_login(owner)
    response = dismiss(client, two_owners_disagree, "different periods")
    assert response.status_code == 400
    page = response.content.decode()
    assert ("Neither value holds during only part of the other&#x27;s period, so neither is an "
            "exception to the other. Choose another reason, or, if the dates are wrong, correct "
            "them on the documents.") in page
    assert "The autumn promotion.</textarea>" in page
    assert Conflict.objects.get().status == Conflict.Status.OPEN
    assert not AuditEvent.objects.filter(action="conflict.dismissed").exists()
    with pytest.raises(NotAnException) as refused:
        conflict_dismiss(conflict_id=two_owners_disagree.pk, reason="different periods: x",
                         user=owner, actor=SYSTEM)
    assert refused.value.field == "reason"


def test_a_promotion_does_not_excuse_two_standard_values_that_disagree(
    client: Any, owner: Any, make_user: Any, publish: Any,
) -> None:
    make_user("oscar", "owner")
    publish("pricing", facts=[fact("trial_days", 14, start=-300, end=None)])
    publish("staff-trial", facts=[fact("trial_days", 20, start=-300, end=None)])
    publish("trial-promo", owner="oscar", facts=[fact("trial_days", 30, start=-5, end=30)])
    conflict = Conflict.objects.get()
    client.force_login(owner)
    response = dismiss(client, conflict, "different periods")
    assert response.status_code == 400
    assert ("These values are not a rule and its exceptions: two of them disagree over the "
            "same days without one holding during only part of the other&#x27;s period, or "
            "two exceptions disagree.") in response.content.decode()
    assert Conflict.objects.get().status == "open"


def test_a_dismissal_as_an_exception_made_before_exceptions_were_kept_gets_them(
    client: Any, owner: Any, promotion: Conflict, django_capture_on_commit_callbacks: Any,
) -> None:
    """Until sources 0006 a dismissal as an exception kept no exception facts: the migration
    that follows finds them, and leaves other dismissals alone."""
    from importlib import import_module

    from django.apps import apps

    client.force_login(owner)
    with django_capture_on_commit_callbacks(execute=True):
        assert dismiss(client, promotion, "different periods").status_code == 302
    promotion.refresh_from_db()
    kept = promotion.exceptions
    assert kept
    Conflict.objects.filter(pk=promotion.pk).update(exceptions=[])  # as dismissed before 0006

    migration = import_module("reviewqueue.sources.migrations.0007_earlier_exception_dismissals")
    migration.exceptions_of_earlier_dismissals(apps, None)
    promotion.refresh_from_db()
    assert promotion.exceptions == kept

    Conflict.objects.filter(pk=promotion.pk).update(
        exceptions=[], dismissal_reason="both valid: two audiences")
    migration.exceptions_of_earlier_dismissals(apps, None)
    promotion.refresh_from_db()
    assert promotion.exceptions == []
