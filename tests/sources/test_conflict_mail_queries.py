"""The mails a publication sends its owners about the conflicts it opened cost the same queries
for two conflicts as for twelve: each conflict is still one mail to each owner, but the sides
shown in them are read together, not conflict by conflict.

The mails go out once the publication commits, inside the request that published (and with
eager tasks, or a broker, alike): a revision stating a dozen keys another document states
otherwise would otherwise spend a dozen rounds of queries there, per owner."""

from __future__ import annotations

from typing import Any

import pytest
from django.core import mail
from django.db import connection
from django.test.utils import CaptureQueriesContext

from reviewqueue.sources.models import Conflict
from tests.reviews.conftest import fact

pytestmark = pytest.mark.django_db


def test_the_conflict_mails_cost_the_same_queries_for_2_or_12_conflicts(
    publish: Any, owners_with_mail: None, django_capture_on_commit_callbacks: Any,
) -> None:
    def after_commit(conflicts: int) -> int:
        """Queries run once the publication that opens `conflicts` conflicts commits."""
        keys = [f"plan_{conflicts}_{n}" for n in range(conflicts)]
        with django_capture_on_commit_callbacks(execute=True):
            publish(f"terms-{conflicts}", owner="oscar", facts=[fact(k, 30) for k in keys])
        sent = len(mail.outbox)
        with django_capture_on_commit_callbacks() as callbacks:
            publish(f"pricing-{conflicts}", facts=[fact(k, 14) for k in keys])
        with CaptureQueriesContext(connection) as queries:
            for callback in callbacks:
                callback()
        assert Conflict.objects.filter(key__in=keys, status="open").count() == conflicts
        # Still one mail per conflict to each of the two owners.
        assert len(mail.outbox) - sent == 2 * conflicts
        return len(queries)

    two, twelve = after_commit(2), after_commit(12)
    assert twelve == two, f"{two} queries for 2 conflicts, {twelve} for 12"
