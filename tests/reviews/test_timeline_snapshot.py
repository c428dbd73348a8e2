"""The audit timeline reads one snapshot: a decision committing while it reads is an everyday
flow, not a row changed by hand."""

from __future__ import annotations

import threading
from typing import Any

from django.db import connection

from reviewqueue.reviews.models import Answer


def test_a_decision_committing_while_the_timeline_reads_is_no_tampering(
    transactional_db: Any, hold: Any, reviewer: Any, admin_client: Any
) -> None:
    """The timeline reads the answer, then its verdicts, decisions and versions, then its
    events, each statement in a snapshot of its own. A reviewer's approval (or a
    re-evaluation) committing in between is a normal flow: the page must not say the answer
    was changed after its last audit event."""
    from reviewqueue.audit.services import Actor
    from reviewqueue.reviews.services.decisions import DecisionInput, answer_decide

    trace = hold("t-1")
    answer = Answer.objects.get(trace_id=trace)

    def approve() -> None:
        try:
            answer_decide(trace_id=trace, user=reviewer, actor=Actor.of_user(reviewer),
                          data=DecisionInput(action="approve",
                                             verdict_id=answer.current_verdict_id))
        finally:
            connection.close()

    done: list[bool] = []

    def meanwhile(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        # After the answer row was read, before its events are: the versions' query.
        if not done and sql.split(" FROM ", 1)[-1].startswith('"reviews_answerversion"'):
            done.append(True)
            worker = threading.Thread(target=approve)
            worker.start()
            worker.join(30)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(meanwhile):
        page = admin_client.get(f"/audit/answers/{trace}/",
                                HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert done
    answer.refresh_from_db()
    assert answer.status == "approved"
    assert "Changed after its last audit event" not in page
