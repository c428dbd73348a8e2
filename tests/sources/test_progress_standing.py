"""After a change, the progress page says where the answers it reached stand now: held (and
why), abstained, candidate..., and how many moved there since the change."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from reviewqueue.accounts.principals import user_principals
from reviewqueue.jobs.models import Job
from reviewqueue.jobs.selectors import where_answers_stand
from reviewqueue.reviews.models import ReviewItem
from reviewqueue.sources.models import Conflict, Revision
from tests.reviews.conftest import days, fact
from tests.sources.test_owner_fixes import PASSAGES_CHECKED, posted_back
from tests.sources.test_progress_page import publish_from_the_page, publish_in_the_page, text_of

pytestmark = pytest.mark.django_db


def standing_rows(page: str) -> list[str]:
    section = re.search(r"<section[^>]*data-standing.*?</section>", page, re.S)
    assert section is not None, page
    return [text_of(row).strip()
            for row in re.findall(r"<tr data-status.*?</tr>", section.group(0), re.S)]


def test_a_correction_says_the_answers_it_reached_are_still_held_and_why(
    client: Any, owner: Any, two_owners_disagree: Conflict, submit: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    submit("t-1")  # cites pricing r1 and claims 14: held for the conflict
    client.force_login(owner)
    page = publish_in_the_page(client, "30", django_capture_on_commit_callbacks)
    assert "Where these answers stand now" in page
    # Still held, now for what the gate finds first in the new revision (the cited fact's
    # period, before the revision it was written from being superseded); it was held before
    # the change, so it did not move.
    assert standing_rows(page) == ["Held for review Source not in force 1 0"]


def test_answers_released_by_a_dismissal_count_as_moved(
    client: Any, owner: Any, two_owners_disagree: Conflict, submit: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    # Asked as of today, when both facts are in force: held for the conflict alone.
    submit("t-1", as_of=None)
    submit("t-2", as_of=None)
    assert set(ReviewItem.objects.values_list("primary_reason", flat=True)) == {
        "conflicting_sources"}
    client.force_login(owner)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/owner/conflicts/{two_owners_disagree.pk}/dismiss", {
            "reason": "both valid", "signature": two_owners_disagree.signature})
    assert response.status_code == 302, response.content.decode()
    page = client.get(response["Location"]).content.decode()
    rows = standing_rows(page)
    # Both were held for the conflict alone: the dismissal released them.
    assert rows == ["Candidate — 2 2"]


def test_nothing_is_said_while_a_job_still_runs(
    client: Any, owner: Any, two_owners_disagree: Conflict, submit: Any,
) -> None:
    submit("t-1")
    client.force_login(owner)
    page = client.get("/owner/documents/pricing/").content.decode()
    response = client.post("/owner/documents/pricing/publish", posted_back(
        page, "/owner/documents/pricing/publish", **{"facts-0-value": "30", **PASSAGES_CHECKED}))
    assert Job.objects.filter(requested_by=owner, state=Job.State.PENDING).exists()
    page = client.get(response["Location"]).content.decode()
    assert "data-standing" not in page
    assert "data-reload-on-finish" in page


def test_the_standing_costs_one_query_however_many_jobs(
    client: Any, owner: Any, two_owners_disagree: Conflict, submit: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    for i in range(5):
        submit(f"t-{i}")
    client.force_login(owner)
    publish_in_the_page(client, "30", django_capture_on_commit_callbacks)
    jobs = list(Job.objects.filter(requested_by=owner))
    assert len(jobs) == 2
    user_principals(owner)  # read once a request, by the page's first permission check
    with CaptureQueriesContext(connection) as ctx:
        rows, capped, _ = where_answers_stand(jobs, owner)
    assert len(ctx.captured_queries) == 1
    # Both jobs reached the five answers; each counts once.
    assert [(row["status"], row["count"]) for row in rows] == [("held", 5)] and not capped
    # Past its cap it counts that many and says there were more.
    rows, capped, _ = where_answers_stand(jobs, owner, cap=3)
    assert [(row["status"], row["count"]) for row in rows] == [("held", 3)] and capped
    assert where_answers_stand(jobs, owner, cap=5)[1] is False


def test_the_page_says_what_the_owner_changed_whenever_it_is_opened(
    client: Any, owner: Any, two_owners_disagree: Conflict, submit: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    submit("t-1")
    client.force_login(owner)
    location = publish_from_the_page(client, "30", django_capture_on_commit_callbacks,
                                     {"note": "The trial is 30 days from now on."})
    for _ in range(2):  # at once, and opened again later: read from what was stored
        page = client.get(location).content.decode()
        section = re.search(r"<section[^>]*data-changes-made.*?</section>", page, re.S)
        assert section is not None, page
        shown = text_of(section.group(0)).split()
        revision = Revision.objects.filter(document__key="pricing").latest("seq")
        assert " ".join(shown).startswith(
            f"What you changed Published revision {revision.revision} of Pricing")
        assert "The trial is 30 days from now on." in section.group(0)
        period = f"({days(-30)} → {days(60)})"
        assert f"trial_days : 14 {period} → 30 {period}" in " ".join(shown)
        assert 'href="/owner/documents/pricing/"' in section.group(0)


def test_another_persons_opening_the_link_sees_none_of_the_changes_and_is_told_so(
    client: Any, owner: Any, two_owners_disagree: Conflict, make_user: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    client.force_login(owner)
    location = publish_from_the_page(client, "30", django_capture_on_commit_callbacks)
    assert "data-none-of-yours" not in client.get(location).content.decode()
    client.force_login(make_user("otto", "owner"))
    page = client.get(location).content.decode()
    assert "data-changes-made" not in page
    assert "None of your changes to these documents are in this link" in page
    assert "No re-evaluation was needed" not in page


def test_an_answer_still_held_for_another_reason_counts_as_moved(
    client: Any, owner: Any, two_owners_disagree: Conflict, submit: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    # Asked as of today: held for the conflict alone.
    submit("t-1", as_of=None)
    assert ReviewItem.objects.get().primary_reason == "conflicting_sources"
    client.force_login(owner)
    page = publish_in_the_page(client, "30", django_capture_on_commit_callbacks)
    reason = ReviewItem.objects.get().primary_reason
    assert reason != "conflicting_sources"
    # Held before and after, but now for the revision it cites being replaced: it moved.
    assert standing_rows(page) == ["Held for review Source revised 1 1"]


def test_the_total_counts_verdicts_a_job_on_a_document_the_owner_may_not_read_gave(
    client: Any, owner: Any, publish: Any, make_user: Any, submit: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    # The HR document sorts first: a reopening re-evaluates its answers before pricing's.
    hugo = make_user("hugo", "owner", groups=("hr",))
    publish("a-hr-trial", owner="hugo", principals=["group:hr"], facts=[fact("trial_days", 60)])
    publish("pricing", facts=[fact("trial_days", 14)])
    conflict = Conflict.objects.get()
    for trace in ("t-1", "t-2"):  # asked by someone in HR: both values are theirs to read
        submit(trace, as_of=None, asked_by=["user:hr-7", "group:hr"])
    assert ReviewItem.objects.count() == 2
    # hugo, who may read both, dismisses it; olivia, who may not read his, reopens it.
    client.force_login(hugo)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/owner/conflicts/{conflict.pk}/dismiss", {
            "reason": "both valid", "signature": conflict.signature})
    assert response.status_code == 302, response.content.decode()
    assert not ReviewItem.objects.exists()
    client.force_login(owner)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/owner/conflicts/{conflict.pk}/reopen")
    assert response.status_code == 302, response.content.decode()
    page = client.get(response["Location"]).content.decode()
    # Only her document's job is listed, and it found the verdicts already given.
    assert re.findall(r'<div class="card">\s*<p><code>([^<]+)</code>', page) == ["pricing"]
    assert "a-hr-trial" not in page
    assert "2 of 2 re-evaluated, 0 with a new verdict" in text_of(page)
    assert re.search(r"Answers your change moved: "
                     r"<strong data-moved-total>2</strong>", page), page
    assert standing_rows(page) == ["Held for review Conflicting sources 2 2"]


def test_a_later_change_is_not_counted_as_this_ones_and_is_said(
    client: Any, owner: Any, two_owners_disagree: Conflict, submit: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    submit("t-1", as_of=None)  # held for the conflict alone
    client.force_login(owner)
    first = publish_from_the_page(client, "30", django_capture_on_commit_callbacks)
    page = client.get(first).content.decode()
    assert standing_rows(page) == ["Held for review Source revised 1 1"]
    assert "data-changed-later" not in page
    # She then withdraws the document: the answer abstains. The first change's page shows
    # it where it stands now, but did not move it there, and says a later change did.
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/owner/documents/pricing/withdraw", {"confirm": "pricing"})
    page = client.get(first).content.decode()
    assert standing_rows(page) == ["Abstained — 1 0"]
    # It did move it, to Source revised, where it no longer is.
    assert re.search(r"Answers your change moved: <strong data-moved-total>1</strong>", page)
    assert "data-changed-later" in page


def test_a_decided_answer_whose_verdict_changed_did_not_move(
    client: Any, owner: Any, reviewer: Any, two_owners_disagree: Conflict, submit: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    from reviewqueue.audit.services import Actor
    from reviewqueue.reviews.models import Answer
    from reviewqueue.reviews.services.decisions import DecisionInput, answer_decide

    submit("t-1", as_of=None)  # held for the conflict alone
    submit("t-2", as_of=None)
    rejected = Answer.objects.get(trace_id="t-2")
    answer_decide(trace_id="t-2", user=reviewer, actor=Actor.of_user(reviewer),
                  data=DecisionInput(action="reject", verdict_id=rejected.current_verdict_id,
                                     reject_reason="conflict", comment="no"))
    client.force_login(owner)
    page = publish_in_the_page(client, "30", django_capture_on_commit_callbacks)
    # Both got a verdict held for another reason; only the one still waiting moved.
    assert Answer.objects.get(trace_id="t-2").status == "rejected"
    assert standing_rows(page) == ["Held for review Source revised 1 1", "Rejected — 1 0"]
    assert re.search(r"Answers your change moved: <strong data-moved-total>1</strong>", page)
