"""An edit gates the new version on the knowledge base as it reads it, then commits. A publish
started meanwhile cannot commit in between: a decision holds the audit chain's lock from its
freshness check to its commit, and a publish needs it for its own event. It commits after
the edit, and its fan-out finds the edited version current: an approval never stays on a
verdict its sources have moved past. (Before the decision took the lock, the publish could
commit in between, fan out before the edited version was current, and the edit had to look
again once it committed, as ingest does.)"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from django.db import connection

from reviewqueue.audit.services import Actor
from reviewqueue.reviews.models import Answer
from reviewqueue.reviews.services import decisions
from reviewqueue.reviews.services.decisions import DecisionInput, answer_decide
from reviewqueue.reviews.services.evaluation import verdict_is_fresh
from reviewqueue.reviews.services.leases import lease_claim
from tests.conftest import answer_body, revision_body
from tests.reevaluation.conftest import fact

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_edit_racing_a_publish_on_its_new_claimed_key_is_re_evaluated(
    publish: Any, service_api: Any, reviewer: Any, monkeypatch: Any
) -> None:
    pro_seats = {**fact(5, key="seats"), "subject": "pro"}
    publish("pricing", "r1", facts=[fact(14), pro_seats])
    publish("kb-a", "r1", facts=[fact(30)])  # disagrees on trial_days: the answer is held
    response = service_api.post("/api/v1/answers", answer_body("t-edit-race", as_of=None),
                                format="json")
    assert response.status_code == 201, response.content
    answer = Answer.objects.select_related("current_verdict").get(trace_id="t-edit-race")
    assert answer.status == "held"

    # The reviewer opened the item (and holds its lease) before deciding.
    lease_claim(answer=answer, user=reviewer, actor=Actor.of_user(reviewer))

    original = decisions.run_gate
    publishing: list[threading.Thread] = []

    def gate_then_publish(**kwargs: Any) -> Any:
        run = original(**kwargs)
        if kwargs["version"].pk is None and not publishing:  # the edit's new version
            # Another document starts to carry `seats` (for another plan: no conflict record,
            # but the edited claim names no plan, so the gate compares it), while the edit
            # has yet to commit: the publish waits for it.
            publishing.append(threading.Thread(target=_publish, args=(service_api,)))
            publishing[0].start()
            _until_waiting_for_a_lock(publishing[0])
        return run

    monkeypatch.setattr(decisions, "run_gate", gate_then_publish)
    result = answer_decide(
        trace_id="t-edit-race", user=reviewer, actor=Actor.of_user(reviewer),
        data=DecisionInput(action="edit", verdict_id=answer.current_verdict_id,
                           text="Every workspace gets 5 seats [d1].",
                           claims=[{"key": "seats", "value": 5, "cite": "d1"}]))
    assert result.status == "approved"  # the edit's verdict was candidate on what it read
    [thread] = publishing
    thread.join(timeout=60)
    assert not thread.is_alive()

    answer = Answer.objects.select_related("current_verdict", "current_version").get(
        trace_id="t-edit-race")
    assert verdict_is_fresh(answer, answer.current_verdict)
    # Back in the queue, on the fresh verdict, with the approval kept as history.
    assert (answer.status, answer.current_verdict.decision, answer.current_verdict.reason) == (
        "held", "review", "conflicting_sources")


def _publish(service_api: Any) -> None:
    try:
        response = service_api.put("/api/v1/documents/kb-seats/revisions/r1", revision_body(
            facts=[{**fact(6, key="seats"), "subject": "basic"}]), format="json")
        assert response.status_code == 201, response.content
    finally:
        connection.close()


def _until_waiting_for_a_lock(thread: threading.Thread) -> None:
    """Until another session waits for a lock (the publish, for the chain's), or `thread`
    ended (it did not have to wait)."""
    deadline = time.monotonic() + 30
    while thread.is_alive():
        with connection.cursor() as cursor:
            # Read afresh: in a transaction, the activity is read once and kept.
            cursor.execute("SELECT pg_stat_clear_snapshot()")
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = "
                           "current_database() AND wait_event_type = 'Lock' "
                           "AND pid <> pg_backend_pid()")
            if cursor.fetchone()[0]:
                return
        assert time.monotonic() < deadline
        time.sleep(0.02)
