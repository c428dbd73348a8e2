"""A decision's event records the version the answer rests on after it (`version`, and the
number people see, `version_number`); the timeline shows each decision's "on verdict #V ·
version N · created version M" beside "✓ Matches what its audit event recorded", and the
records check of a verification claims every decision matches its event. Neither compares the
decision's own `version` or `new_version` with that event: an edit re-pointed in the table at
the text the reviewer replaced still reads as the one the log vouches for."""

from __future__ import annotations

import re
from typing import Any

import pytest

from reviewqueue.audit.models import AuditEvent
from tests.audit.conftest import verify

pytestmark = pytest.mark.django_db


@pytest.fixture
def edited(edited_answer: Any) -> Any:
    """A held answer a reviewer edited: version 1 as submitted, version 2 the reviewer's."""
    result = edited_answer
    decision = result.decision
    assert decision.new_version.number == 2 and decision.version.number == 1
    event = AuditEvent.objects.get(action="decision.edit")
    assert event.after["version"] == decision.new_version_id
    assert event.after["version_number"] == 2
    return decision


def _checks(admin_client: Any) -> list[str]:
    page = admin_client.get("/audit/answers/t-1/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    return re.findall(r'data-against-log="(\w+)"', page)


@pytest.mark.parametrize("column", ["new_version_id", "version_id"])
def test_a_decision_re_pointed_at_another_version_fails_the_verification(
    edited: Any, tamper: Any, admin_client: Any, column: str
) -> None:
    assert verify().records_ok
    assert _checks(admin_client) == ["same", "same", "same"]
    # The edit now "created version 1" (the text it replaced), or was made "on version 2".
    other = edited.version_id if column == "new_version_id" else edited.new_version_id
    with tamper() as cursor:
        cursor.execute(f"UPDATE reviews_decision SET {column} = %s WHERE id = %s",
                       [other, edited.pk])

    run = verify()

    assert not run.records_ok, "the decision's version differs from its event, yet Records OK"
    assert [p["kind"] for p in run.records_problems] == ["decision"]
    assert "changed" in _checks(admin_client)
