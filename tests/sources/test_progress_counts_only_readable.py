"""An owner's progress page counts, and says where they stand, only the answers they may read
that their change reached. A job also reaches the answers that merely claim one of the
document's keys: before, answers citing only a restricted document were counted, by status
and reason too."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.accounts.principals import user_principals
from reviewqueue.jobs.models import Job
from reviewqueue.reviews.models import Answer
from reviewqueue.reviews.selectors.answers import user_may_read_answer
from tests.reviews.conftest import fact
from tests.sources.test_progress_page import publish_in_the_page
from tests.sources.test_progress_standing import standing_rows

pytestmark = pytest.mark.django_db


def test_progress_standing_counts_only_answers_the_owner_may_read(
    client: Any, owner: Any, make_user: Any, publish: Any, submit: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    make_user("hugo", "owner", groups=("hr",))
    # olivia's public document states trial_days; hugo's HR-only document states it too.
    publish("pricing", facts=[fact("trial_days", 14, start=-300, end=None)])
    publish("hr-trial", owner="hugo", principals=["group:hr"],
            facts=[fact("trial_days", 14, start=-300, end=None)],
            passages=[{"span": "p1", "text": "Staff trial lasts 14 days."}])
    # Three HR answers cite ONLY the HR document and claim trial_days.
    for trace in ("hr-1", "hr-2", "hr-3"):
        response = submit(trace, as_of=None, asked_by=["group:hr"], retrieved=[
            {"cite": "d1", "document_id": "hr-trial", "revision": "r1", "span": "p1"}])
        assert response.status_code == 201, response.content
    # olivia may not read any of them.
    assert not Answer.objects.filter(retrieved__document_key="pricing").exists()

    client.force_login(owner)
    page = publish_in_the_page(client, "30", django_capture_on_commit_callbacks)
    # Her change reached the HR answers (they claim one of her keys): a job of the worker's
    # re-evaluated them, beside hers, which counts only answers she may read.
    job = Job.objects.get(document_key="pricing", requested_by=owner)
    assert (job.total, job.state) == (0, "finished")
    theirs = Job.objects.get(document_key="pricing", requested_by=None)
    assert (theirs.total, theirs.done, theirs.cause_event) == (3, 3, job.cause_event)
    assert theirs.actor == job.actor == "worker"
    assert "3 of 3" not in page
    # ... and her page does not tell her where answers she may not read stand.
    rows = standing_rows(page) if "data-standing" in page else []
    assert rows == [], rows
    assert "Conflicting sources" not in page


def test_an_answer_that_retrieved_nothing_is_counted_for_no_one(
    client: Any, owner: Any, publish: Any, submit: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """Nobody may read an answer that retrieved no document, as everywhere else."""
    publish("pricing", facts=[fact("trial_days", 14, start=-300, end=None)])
    response = submit("nothing-retrieved", as_of=None, retrieved=[],
                      answer="The trial lasts 14 days.",
                      claims=[{"key": "trial_days", "value": 14, "cite": "d1"}])
    assert response.status_code == 201, response.content
    answer = Answer.objects.get(trace_id="nothing-retrieved")
    assert not user_may_read_answer(answer, user_principals(owner))

    client.force_login(owner)
    page = publish_in_the_page(client, "30", django_capture_on_commit_callbacks)
    assert Job.objects.get(document_key="pricing", requested_by=owner).total == 0
    assert Job.objects.get(document_key="pricing", requested_by=None).total == 1
    rows = standing_rows(page) if "data-standing" in page else []
    assert rows == [], rows
