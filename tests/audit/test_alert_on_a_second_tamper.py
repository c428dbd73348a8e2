"""README: a verification "raises an alert whenever the problems found differ from the last
run's, so a new tamper after an acknowledged alert raises a new one"; the chain's findings
carry the recomputed hash as evidence for exactly that (a second write to an event already
known to be bad changes the set of problems). The records and sources findings carry no such
evidence, and a revision's check stops at its first difference: a second change to a row or
revision already reported, made after the admin acknowledged the first alert, raises nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from reviewqueue.audit.models import AuditAlert
from reviewqueue.audit.services import SYSTEM, audit_alert_acknowledge
from tests.audit.conftest import verify
from tests.reviews.conftest import fact

pytestmark = pytest.mark.django_db


def _acknowledge_all(admin: Any) -> None:
    for alert in AuditAlert.objects.filter(acknowledged_at__isnull=True):
        audit_alert_acknowledge(alert_id=alert.pk, user=admin, actor=SYSTEM)


def test_a_decision_changed_again_after_the_alert_raises_a_new_one(
    answer_story: Callable[..., Any], tamper: Any, admin_user: Any
) -> None:
    decision = answer_story("t-story", comment="Checked against the price list.").decisions.get()
    with tamper() as cursor:
        cursor.execute("UPDATE reviews_decision SET comment = 'Looks fine.' WHERE id = %s",
                       [decision.pk])
    assert not verify().records_ok
    assert AuditAlert.objects.filter(problem="records_changed").count() == 1
    _acknowledge_all(admin_user)

    # Later, the same comment is rewritten again: a new tamper.
    with tamper() as cursor:
        cursor.execute("UPDATE reviews_decision SET comment = 'Approved on the manager''s "
                       "say-so.' WHERE id = %s", [decision.pk])
    verify()

    assert AuditAlert.objects.filter(problem="records_changed").count() == 2


def test_a_revision_changed_again_after_the_alert_raises_a_new_one_naming_it(
    publish: Callable[..., Any], tamper: Any, admin_user: Any
) -> None:
    publish("hr-leave", "r1", principals=["group:hr"], facts=[fact("leave_days", 25)],
            passages=[{"span": "p1", "text": "Staff get 25 days of leave."}])
    with tamper() as cursor:
        cursor.execute("UPDATE sources_revision SET allowed_principals = '{*}' "
                       "WHERE revision = 'r1'")
        cursor.execute("UPDATE sources_document SET allowed_principals = '{*}'")
    assert [p["code"] for p in verify().sources_problems] == ["access_list"]
    _acknowledge_all(admin_user)

    # Later, its passage and its fact are rewritten too.
    with tamper() as cursor:
        cursor.execute("UPDATE sources_passage SET text = 'Staff get 40 days of leave.'")
        cursor.execute("UPDATE sources_fact SET value = '40'")
    run = verify()

    assert AuditAlert.objects.filter(problem="sources_changed").count() == 2
    assert "body" in [p["code"] for p in run.sources_problems]
