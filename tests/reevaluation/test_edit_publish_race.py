"""An edit gates the new version on the knowledge base as it reads it, then commits. A publish
that commits in between fans out at its own commit, looking for the answers whose *current*
version claims one of its keys: the edited version is not current yet, so the answer is not
among them. Like ingest, the edit looks again once it commits, and re-evaluates the answer:
an approval never stays on a verdict its sources have moved past."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.audit.services import Actor
from reviewqueue.reviews.models import Answer
from reviewqueue.reviews.services import decisions
from reviewqueue.reviews.services.decisions import DecisionInput, answer_decide
from reviewqueue.reviews.services.evaluation import verdict_is_fresh
from reviewqueue.reviews.services.leases import lease_claim
from tests.conftest import answer_body
from tests.reevaluation.conftest import fact
from tests.reevaluation.test_ingest_race import publish_elsewhere

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
    fired: list[bool] = []

    def gate_then_publish(**kwargs: Any) -> Any:
        run = original(**kwargs)
        if kwargs["version"].pk is None and not fired:  # the edit's new version
            fired.append(True)
            # Another document starts to carry `seats` (for another plan: no conflict record,
            # but the edited claim names no plan, so the gate compares it); it commits, and
            # fans out, before the edit commits.
            publish_elsewhere(service_api, "kb-seats", "r1",
                              facts=[{**fact(6, key="seats"), "subject": "basic"}])
        return run

    monkeypatch.setattr(decisions, "run_gate", gate_then_publish)
    result = answer_decide(
        trace_id="t-edit-race", user=reviewer, actor=Actor.of_user(reviewer),
        data=DecisionInput(action="edit", verdict_id=answer.current_verdict_id,
                           text="Every workspace gets 5 seats [d1].",
                           claims=[{"key": "seats", "value": 5, "cite": "d1"}]))
    assert fired
    assert result.status == "approved"  # the edit's verdict was candidate on what it read

    answer = Answer.objects.select_related("current_verdict", "current_version").get(
        trace_id="t-edit-race")
    assert verdict_is_fresh(answer, answer.current_verdict)
    # Back in the queue, on the fresh verdict, with the approval kept as history.
    assert (answer.status, answer.current_verdict.decision, answer.current_verdict.reason) == (
        "held", "review", "conflicting_sources")
