"""A change's progress page counts the answers its own jobs moved, not those an earlier
change's jobs moved while they ran: a job still waiting for a worker when the next change
starts its own runs inside the later change's time."""

from __future__ import annotations

import re
from typing import Any

import pytest

from reviewqueue.jobs.models import Job
from reviewqueue.reviews.models import Answer, ReviewItem
from reviewqueue.sources.models import Conflict
from tests.sources.test_owner_fixes import PASSAGES_CHECKED, posted_back
from tests.sources.test_progress_page import PUBLISH
from tests.sources.test_progress_standing import standing_rows

pytestmark = pytest.mark.django_db


def publish_held_back(client: Any, value: str, on_commit: Any) -> tuple[str, list[Any]]:
    """olivia changes pricing's trial_days to `value`; the address of the change's progress
    page, and its on-commit work (its jobs' fan-out), held back as though no worker were free
    yet."""
    page = client.get("/owner/documents/pricing/").content.decode()
    with on_commit() as work:
        response = client.post(PUBLISH, posted_back(page, PUBLISH, **{
            "facts-0-value": value, **PASSAGES_CHECKED}))
    assert response.status_code == 302, response.content.decode()
    return response["Location"], list(work)


def run(work: list[Any], on_commit: Any) -> None:
    """A worker takes up the held-back work, and all it queues in turn, to the end."""
    with on_commit(execute=True):
        for callback in work:
            callback()


def moved_total(page: str) -> str:
    found = re.search(r"Answers your change moved: <strong data-moved-total>(\d+)</strong>", page)
    assert found is not None, page
    return found.group(1)


def test_a_reason_an_earlier_changes_job_changed_is_not_counted_as_the_later_ones(
    client: Any, owner: Any, two_owners_disagree: Conflict, submit: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    submit("t-1", as_of=None)  # held for the conflict alone
    assert ReviewItem.objects.get().primary_reason == "conflicting_sources"
    client.force_login(owner)
    # Two corrections in a row; the first one's jobs still wait when she makes the second.
    first, first_work = publish_held_back(client, "30", django_capture_on_commit_callbacks)
    second, second_work = publish_held_back(client, "45", django_capture_on_commit_callbacks)
    assert Job.objects.filter(requested_by=owner, state=Job.State.PENDING).count() == 4
    run(first_work, django_capture_on_commit_callbacks)
    # The first change's jobs reached the answer first: held now for the revision it cites
    # being replaced. The second's then found nothing more to change.
    assert ReviewItem.objects.get().primary_reason == "superseded_revision"
    run(second_work, django_capture_on_commit_callbacks)
    assert not Job.objects.filter(requested_by=owner).exclude(state=Job.State.FINISHED).exists()

    page = client.get(second).content.decode()
    assert standing_rows(page) == ["Held for review Source revised 1 0"]
    assert moved_total(page) == "0"
    page = client.get(first).content.decode()
    assert standing_rows(page) == ["Held for review Source revised 1 1"]
    assert moved_total(page) == "1"


def test_a_status_an_earlier_changes_job_changed_is_not_counted_as_the_later_ones(
    client: Any, owner: Any, two_owners_disagree: Conflict, submit: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    # Cites the promotion and claims its 30 days: held over pricing's 14 alone.
    submit("t-1", as_of=None, answer="The free trial lasts 30 days [d1].",
           retrieved=[{"cite": "d1", "document_id": "trial-promo", "revision": "r1",
                       "span": "p1"}],
           claims=[{"key": "trial_days", "value": 30, "cite": "d1"}])
    assert ReviewItem.objects.get().primary_reason == "conflicting_sources"
    client.force_login(owner)
    # She dismisses the conflict, then, its jobs still waiting, corrects pricing to 30 too.
    with django_capture_on_commit_callbacks() as dismissal_work:
        response = client.post(f"/owner/conflicts/{two_owners_disagree.pk}/dismiss", {
            "reason": "both valid", "signature": two_owners_disagree.signature})
    assert response.status_code == 302, response.content.decode()
    dismissal = response["Location"]
    correction, correction_work = publish_held_back(client, "30",
                                                    django_capture_on_commit_callbacks)
    run(list(dismissal_work), django_capture_on_commit_callbacks)
    # The dismissal's jobs released the answer; the correction's found it released.
    assert Answer.objects.get().status == Answer.Status.CANDIDATE
    run(correction_work, django_capture_on_commit_callbacks)
    assert not Job.objects.filter(requested_by=owner).exclude(state=Job.State.FINISHED).exists()

    page = client.get(correction).content.decode()
    assert standing_rows(page) == ["Candidate — 1 0"]
    assert moved_total(page) == "0"
    page = client.get(dismissal).content.decode()
    assert standing_rows(page) == ["Candidate — 1 1"]
    assert moved_total(page) == "1"
