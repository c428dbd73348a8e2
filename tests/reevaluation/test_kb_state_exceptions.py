"""What ingest compares once it has committed, to see whether the knowledge base changed under
it, tells a dismissal as an exception from its reopening, though both leave one revision's
facts on the key: the dismissal hides only some of them."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.audit.services import SYSTEM
from reviewqueue.reviews.services.evaluation import load_sources
from reviewqueue.reviews.services.reevaluation import _kb_state, _sources_now
from reviewqueue.sources.conflicts import conflict_dismiss, conflict_reopen
from reviewqueue.sources.models import Conflict
from tests.reviews.conftest import fact

pytestmark = pytest.mark.django_db


def test_reopening_an_exception_within_one_revision_changes_the_state(
    publish: Any, owner: Any
) -> None:
    # One revision states the standard 14 and, this month, 30.
    publish("pricing", facts=[fact("trial_days", 14, start=-300, end=None),
                              fact("trial_days", 30, start=-5, end=20, span="p1")])
    conflict = Conflict.objects.get()
    conflict_dismiss(conflict_id=conflict.pk, reason="different periods", user=owner,
                     actor=SYSTEM)
    dismissed = _kb_state(load_sources([], ["trial_days"]).kb.get("trial_days", ()))
    assert _sources_now([], ["trial_days"])[1]["trial_days"] == dismissed
    assert [row.fact.value for row in load_sources([], ["trial_days"]).kb["trial_days"]] == [30]

    conflict_reopen(conflict_id=conflict.pk, actor=SYSTEM)
    assert _sources_now([], ["trial_days"])[1]["trial_days"] != dismissed
