"""A reviewer approves while the re-evaluation a publication started has not run yet (the
worker is down, or still busy with the answers before this one). The stored verdict is still
the one the page showed, but the sources have moved under it: the reviewer is told the sources
changed and shown the fresh verdict, exactly as when the worker had been quicker, and is not
asked to tick "Approve it all the same" about a claim the page they approved never showed."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.jobs.models import Job
from reviewqueue.reviews.models import Answer, Decision
from tests.reviews.conftest import current_verdict_id, fact

pytestmark = pytest.mark.django_db


def test_an_approval_made_before_the_worker_reevaluated_is_refused_as_stale(
    hold: Any, publish: Any, reviewer: Any, login: Any
) -> None:
    trace = hold()
    client = login(reviewer)
    client.post(f"/answers/{trace}/claim")
    page = client.get(f"/answers/{trace}/").content.decode()
    assert "does not hold against its source" not in page  # claim 1 holds as drawn
    seen = current_verdict_id(trace)
    # The owner publishes 21 days; its on-commit fan-out never runs here, as with the worker
    # down: the job waits and the stored verdict is still the one the page showed.
    publish("pricing", revision="r2", facts=[fact("trial_days", 21)])
    assert Job.objects.filter(state=Job.State.PENDING).exists()
    assert current_verdict_id(trace) == seen

    response = client.post(f"/answers/{trace}/decide", {
        "action": "approve", "approve-verdict": seen, "approve-comment": "looks fine"})

    html = response.content.decode()
    assert "Tick the box to approve" not in html
    assert "The sources changed while you were reviewing." in html
    assert response.status_code == 409
    assert current_verdict_id(trace) != seen  # the fresh verdict, stored and shown
    assert f'name="approve-verdict" value="{current_verdict_id(trace)}"' in html
    assert "looks fine" in html
    assert Answer.objects.get(trace_id=trace).status == "held"
    assert not Decision.objects.exists()


def test_the_api_refuses_it_as_stale_too_rather_than_ask_for_despite(
    hold: Any, publish: Any, reviewer: Any, token_client: Any
) -> None:
    trace = hold()
    api = token_client(reviewer)
    seen = current_verdict_id(trace)
    publish("pricing", revision="r2", facts=[fact("trial_days", 21)])  # its job waits
    assert current_verdict_id(trace) == seen

    response = api.post(f"/api/v1/answers/{trace}/decisions",
                        {"action": "approve", "verdict": seen}, format="json")

    # "If it is no longer fresh, nothing is applied: the answer is re-evaluated and the 409
    # carries the current verdict" (the operation's description).
    assert response.status_code == 409, response.json()
    assert response.json()["verdict"]["id"] == current_verdict_id(trace) != seen
    assert not Decision.objects.exists()
