"""Re-evaluation in process: triggers, status moves, idempotency and the validity sweep."""

from __future__ import annotations

import datetime as dt
from typing import Any
from unittest import mock

import pytest
from celery.exceptions import WorkerLostError
from django.db import connection

from reviewqueue.audit.models import AuditEvent
from reviewqueue.audit.services import WORKER
from reviewqueue.jobs.models import DeadLetter, Job, JobChunk
from reviewqueue.jobs.selectors import answer_ids_due_for_validity
from reviewqueue.jobs.services import job_fan_out, job_start_validity_sweep
from reviewqueue.reviews import tasks
from reviewqueue.reviews.models import Answer, ReviewItem, Verdict
from reviewqueue.reviews.services import reevaluation
from reviewqueue.reviews.services.reevaluation import answer_reevaluate
from tests.reevaluation.conftest import fact, today
from tests.reevaluation.test_chunk_runs import ProcessDied

pytestmark = pytest.mark.django_db


def verdicts_of(answer: Answer) -> list[Verdict]:
    return list(Verdict.objects.filter(answer=answer).order_by("id"))


def test_publishing_a_revision_reevaluates_every_citing_answer_and_only_those(
    publish_doc: Any, ingest: Any
) -> None:
    publish_doc("pricing", "r1")
    publish_doc("billing", "r1", facts=[fact(30, key="grace_days")])
    citing = [ingest(f"cites-{i}") for i in range(3)]
    other = ingest("other", cites=[("d1", "billing", "r1")],
                   claims=[{"key": "grace_days", "value": 30, "cite": "d1"}])

    publish_doc("pricing", "r2")

    for answer in citing:
        answer.refresh_from_db()
        assert [v.trigger for v in verdicts_of(answer)] == ["ingest", "revision"]
        assert answer.current_verdict.reason == "superseded_revision"
        assert answer.status == Answer.Status.HELD
    assert [v.trigger for v in verdicts_of(other)] == ["ingest"]


def test_publishing_the_same_revision_again_creates_no_verdict(
    publish_doc: Any, ingest: Any
) -> None:
    publish_doc("pricing", "r1")
    ingest("t-1")
    publish_doc("pricing", "r2")
    count = Verdict.objects.count()

    publish_doc("pricing", "r2")

    assert Verdict.objects.count() == count


def test_reevaluating_an_unchanged_answer_changes_nothing(publish_doc: Any, ingest: Any) -> None:
    publish_doc("pricing", "r1")
    answer = ingest("t-1")
    events = AuditEvent.objects.count()

    assert answer_reevaluate(answer_id=answer.pk, trigger="manual") is None
    assert len(verdicts_of(answer)) == 1
    assert AuditEvent.objects.count() == events


def test_an_answer_about_a_named_day_is_checked_on_that_day_on_every_path(
    publish_doc: Any, service_api: Any, reviewer: Any
) -> None:
    """Re-evaluating with no new source gives the verdict ingest gave: the gate reads the day
    the answer names, not today, and the validity sweep has nothing to wait for."""
    from reviewqueue.audit.services import Actor
    from reviewqueue.reviews.services.decisions import DecisionInput, answer_decide
    from tests.conftest import answer_body

    publish_doc("pricing", "r1", facts=[fact(14, valid_from="2025-01-01",
                                             valid_until="2025-06-30")])
    response = service_api.post("/api/v1/answers",
                                answer_body("t-day", as_of="2025-03-01"), format="json")
    assert response.json()["status"] == "candidate", response.json()
    answer = Answer.objects.get(trace_id="t-day")
    assert answer.current_verdict.next_boundary is None  # time passing changes nothing
    assert answer_reevaluate(answer_id=answer.pk, trigger="manual") is None
    assert len(verdicts_of(answer)) == 1
    # Held for another reason, it is decided on its own day too: not refused as stale.
    publish_doc("pricing", "r2", facts=[fact(14, valid_from="2025-01-01",
                                             valid_until="2025-06-30")])
    answer.refresh_from_db()
    assert answer.status == "held" and answer.current_verdict.reason == "superseded_revision"
    assert answer.current_verdict.as_of == dt.date(2025, 3, 1)
    result = answer_decide(trace_id="t-day", user=reviewer, actor=Actor.of_user(reviewer),
                           data=DecisionInput(action="approve",
                                              verdict_id=answer.current_verdict_id))
    assert result.answer.status == "approved"


def test_reevaluating_twice_stores_one_verdict(publish: Any, ingest: Any, owner: Any) -> None:
    publish("pricing", "r1", facts=[fact()])
    answer = ingest("t-1")
    publish("pricing", "r2", facts=[fact()])  # no on-commit work: nothing ran yet

    first = answer_reevaluate(answer_id=answer.pk, trigger="revision")
    second = answer_reevaluate(answer_id=answer.pk, trigger="revision")

    assert first is not None and second is None
    assert len(verdicts_of(answer)) == 2


def test_a_candidate_whose_source_changed_enters_the_queue(publish_doc: Any,
                                                           ingest: Any) -> None:
    publish_doc("pricing", "r1")
    answer = ingest("t-1")
    assert answer.status == Answer.Status.CANDIDATE

    publish_doc("pricing", "r2")

    item = ReviewItem.objects.get(answer=answer)
    assert item.primary_reason == "superseded_revision"


def test_an_approved_answer_whose_source_changed_goes_back_with_the_earlier_approval(
    publish_doc: Any, ingest: Any, reviewer: Any
) -> None:
    from reviewqueue.audit.services import Actor
    from reviewqueue.reviews.services.decisions import DecisionInput, answer_decide

    publish_doc("pricing", "r1")
    publish_doc("pricing-eu", "r1", facts=[fact(30)])
    answer = ingest("t-1", cites=[("d1", "pricing", "r1"), ("d2", "pricing-eu", "r1")],
                    text="The free trial lasts 14 days [d1][d2].")
    assert answer.status == Answer.Status.HELD
    result = answer_decide(trace_id="t-1", user=reviewer, actor=Actor.of_user(reviewer),
                           data=DecisionInput(action="approve",
                                              verdict_id=answer.current_verdict_id))
    assert result.status == Answer.Status.APPROVED

    publish_doc("pricing", "r2")

    answer.refresh_from_db()
    assert answer.status == Answer.Status.HELD
    assert ReviewItem.objects.get(answer=answer).earlier_approval == result.decision


def test_an_approved_answer_the_gate_passes_again_shows_its_approval_as_history(
    publish_doc: Any, ingest: Any, reviewer: Any, owner: Any, client: Any,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """Held for the knowledge base's disagreement, approved, sent back by a new revision of
    the other document, then the conflict is dismissed: the gate passes it by itself."""
    from reviewqueue.audit.services import Actor
    from reviewqueue.reviews.services.decisions import DecisionInput, answer_decide
    from reviewqueue.sources.conflicts import conflict_dismiss
    from reviewqueue.sources.models import Conflict

    publish_doc("pricing", "r1")
    publish_doc("pricing-eu", "r1", facts=[fact(30)])
    answer = ingest("t-1", cites=[("d1", "pricing", "r1")])
    assert answer.status == Answer.Status.HELD
    answer_decide(trace_id="t-1", user=reviewer, actor=Actor.of_user(reviewer),
                  data=DecisionInput(action="approve", verdict_id=answer.current_verdict_id))
    publish_doc("pricing-eu", "r2", facts=[fact(31)])
    answer.refresh_from_db()
    assert answer.status == Answer.Status.HELD
    conflict = Conflict.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        conflict_dismiss(conflict_id=conflict.pk, reason="different plans: EU only",
                         user=owner, actor=Actor.of_user(owner))
    answer.refresh_from_db()
    assert answer.status == Answer.Status.CANDIDATE

    client.force_login(reviewer)
    page = client.get("/answers/t-1/").content.decode()

    assert "alice approved an earlier verdict on" in page
    assert "The gate now lets it through by itself." in page


# --- Validity boundaries -------------------------------------------------------------------------

@pytest.fixture
def calendar(publish_doc: Any, ingest: Any) -> dict[str, Answer]:
    """Two answers whose facts change on the same day, ten days from now: `leaving` cites a
    fact that ends the day before, `arriving` one that starts that day."""
    t = today()
    publish_doc("calendar", "r1", facts=[fact(14, valid_from=str(t - dt.timedelta(days=30)),
                                              valid_until=str(t + dt.timedelta(days=9)))])
    publish_doc("calendar-next", "r1", facts=[fact(21, valid_from=str(t + dt.timedelta(days=10)))])
    leaving = ingest("leaving", cites=[("d1", "calendar", "r1")])
    arriving = ingest("arriving", cites=[("d1", "calendar-next", "r1")],
                      claims=[{"key": "trial_days", "value": 21, "cite": "d1"}],
                      text="The free trial lasts 21 days [d1].")
    return {"leaving": leaving, "arriving": arriving}


def _sweep_on(day: dt.date, on_commit: Any) -> Job | None:
    with mock.patch("reviewqueue.reviews.services.evaluation.today", return_value=day), \
            on_commit():
        return job_start_validity_sweep(day=day)


def test_each_verdict_stores_its_next_validity_boundary(calendar: dict[str, Answer]) -> None:
    boundary = today() + dt.timedelta(days=10)
    assert calendar["leaving"].current_verdict.next_boundary == boundary
    assert calendar["arriving"].current_verdict.next_boundary == boundary


def test_a_boundary_that_has_not_come_moves_nothing(calendar: dict[str, Answer],
                                                    on_commit: Any) -> None:
    assert _sweep_on(today() + dt.timedelta(days=9), on_commit) is None
    assert Verdict.objects.count() == 2


def test_a_boundary_that_came_moves_an_answer_into_the_queue(calendar: dict[str, Answer],
                                                             on_commit: Any) -> None:
    leaving = calendar["leaving"]
    assert leaving.status == Answer.Status.CANDIDATE

    _sweep_on(today() + dt.timedelta(days=10), on_commit)

    leaving.refresh_from_db()
    assert leaving.status == Answer.Status.HELD
    assert leaving.current_verdict.reason == "noncurrent_citation"
    assert leaving.current_verdict.trigger == "validity"
    assert ReviewItem.objects.filter(answer=leaving).exists()


def test_a_boundary_that_came_clears_an_answer_from_the_queue_and_audits_it(
    calendar: dict[str, Answer], on_commit: Any
) -> None:
    arriving = calendar["arriving"]
    assert arriving.status == Answer.Status.HELD

    _sweep_on(today() + dt.timedelta(days=10), on_commit)

    arriving.refresh_from_db()
    assert arriving.status == Answer.Status.CANDIDATE
    assert not ReviewItem.objects.filter(answer=arriving).exists()
    cleared = AuditEvent.objects.get(action="review_item.cleared", trace_id="arriving")
    assert cleared.after["by"] == "reevaluation"
    assert cleared.after["trigger"] == "validity"


def test_the_sweep_looks_only_at_current_verdicts(calendar: dict[str, Answer],
                                                  on_commit: Any) -> None:
    day = today() + dt.timedelta(days=10)
    _sweep_on(day, on_commit)
    # The old verdicts still have a boundary on `day`; the new ones do not count.
    assert Verdict.objects.filter(next_boundary__lte=day).count() == 2
    assert list(answer_ids_due_for_validity(day)) == []


def test_a_second_sweep_on_the_same_day_finds_nothing_to_do(calendar: dict[str, Answer],
                                                            on_commit: Any) -> None:
    day = today() + dt.timedelta(days=10)
    first = _sweep_on(day, on_commit)
    assert first is not None
    first.refresh_from_db()
    assert (first.total, first.done, first.state) == (2, 2, Job.State.FINISHED)

    assert _sweep_on(day, on_commit) is None


def test_an_answer_a_sweep_failed_on_is_left_to_its_letter_until_the_next_day(
    calendar: dict[str, Answer], on_commit: Any
) -> None:
    """Every starting worker asks for the day's sweep: an answer that fails each time was
    taken again by each, with a new job and a new dead letter every time."""
    leaving = calendar["leaving"]
    real = reevaluation.answer_reevaluate

    def fails_on_leaving(*, answer_id: int, **kwargs: Any) -> Any:
        if answer_id == leaving.pk:
            raise ValueError("cannot be re-evaluated")
        return real(answer_id=answer_id, **kwargs)

    day = today() + dt.timedelta(days=10)
    with mock.patch.object(reevaluation, "answer_reevaluate", side_effect=fails_on_leaving):
        first = _sweep_on(day, on_commit)
        assert first is not None
        first.refresh_from_db()
        assert (first.total, first.done, first.failed) == (2, 1, 1)
        assert _sweep_on(day, on_commit) is None  # the worker restarted: nothing new to do
        assert DeadLetter.objects.filter(answer_id=leaving.pk).count() == 1
        assert list(answer_ids_due_for_validity(day)) == []
        later = _sweep_on(day + dt.timedelta(days=1), on_commit)  # the next day tries again
    assert later is not None
    later.refresh_from_db()
    assert (later.total, later.failed) == (1, 1)
    assert DeadLetter.objects.filter(answer_id=leaving.pk).count() == 2


def _deliver(chunk: JobChunk) -> None:
    """The sweep chunk's message, as Redis hands it out (again)."""
    tasks.reevaluate_answers(chunk.answer_ids, Verdict.Trigger.VALIDITY,
                             job_id=str(chunk.job_id), chunk_id=chunk.pk)


def _kill_its_worker_at_every_run(chunk: JobChunk, settings: Any) -> None:
    """The worker's main process dies under the chunk's one run; its next delivery is
    dead-lettered instead of run."""
    settings.REEVALUATION_CHUNK_MAX_RUNS = 1
    with mock.patch.object(reevaluation, "answer_reevaluate", side_effect=ProcessDied), \
            pytest.raises(ProcessDied):
        _deliver(chunk)
    _deliver(chunk)


def _use_up_its_retries(chunk: JobChunk, settings: Any) -> None:
    """Its pool process died at every run, which Celery counts as retries: with none left, the
    worker's main process reports the last death as the task's failure."""
    tasks.reevaluate_answers.on_failure(
        WorkerLostError("Worker exited prematurely: signal 9 (SIGKILL)."), "task-1",
        [chunk.answer_ids, Verdict.Trigger.VALIDITY],
        {"job_id": str(chunk.job_id), "chunk_id": chunk.pk}, None)


@pytest.mark.parametrize("kill", [_kill_its_worker_at_every_run, _use_up_its_retries],
                         ids=["never_finished", "retries_used_up"])
def test_a_sweep_chunk_that_died_for_good_leaves_its_answers_to_its_letter_until_the_next_day(
    calendar: dict[str, Answer], settings: Any, on_commit: Any, kill: Any
) -> None:
    """A chunk is dead-lettered whole, in a letter that names no answer: every worker that
    started after it died asked for the day's sweep, took the chunk's answers again and died on
    them again, with a new job and a new letter every hour."""
    day = today() + dt.timedelta(days=10)
    with mock.patch("reviewqueue.reviews.services.evaluation.today", return_value=day):
        first = job_start_validity_sweep(day=day)  # its fan-out message is not sent
        assert first is not None
        job_fan_out(job_id=str(first.pk))  # nor are its chunks' messages
        kill(first.chunks.get(), settings)
    first.refresh_from_db()
    assert (first.state, first.total, first.failed) == (Job.State.FINISHED, 2, 2)

    assert _sweep_on(day, on_commit) is None  # a worker restarted: nothing to do
    assert list(answer_ids_due_for_validity(day)) == []
    assert DeadLetter.objects.count() == 1
    later = _sweep_on(day + dt.timedelta(days=1), on_commit)  # the next day tries again
    assert later is not None
    later.refresh_from_db()
    assert (later.total, later.done) == (2, 2)


def test_when_the_date_goes_back_the_sweep_takes_the_verdicts_computed_ahead(
    calendar: dict[str, Answer], on_commit: Any
) -> None:
    """A drill pinned the date ten days ahead, and the sweep moved both answers; the drill
    over, today's sweep finds their verdicts computed for a later day and checks them again,
    though no boundary of theirs has come."""
    _sweep_on(today() + dt.timedelta(days=10), on_commit)
    assert Answer.objects.get(trace_id="leaving").status == Answer.Status.HELD
    job = _sweep_on(today(), on_commit)
    assert job is not None
    for name, status in (("leaving", Answer.Status.CANDIDATE), ("arriving", Answer.Status.HELD)):
        answer = Answer.objects.select_related("current_verdict").get(trace_id=name)
        assert (answer.status, answer.current_verdict.as_of) == (status, today())
    assert _sweep_on(today(), on_commit) is None  # nothing is ahead any more


def test_a_verdict_computed_ahead_that_holds_today_too_is_taken_once_a_day(
    publish_doc: Any, ingest: Any, on_commit: Any
) -> None:
    """Ingested during a drill ten days ahead, on a fact in force from long before to no end:
    today's gate gives the same verdict, which stays, dated ahead. The day's first sweep takes
    it; the next sweeps of the day do not."""
    publish_doc("pricing", "r1")
    ahead = today() + dt.timedelta(days=10)
    with mock.patch("reviewqueue.reviews.services.evaluation.today", return_value=ahead):
        ingest("during-drill")
    assert _sweep_on(today(), on_commit) is not None
    assert Answer.objects.get(trace_id="during-drill").current_verdict.as_of == ahead
    assert _sweep_on(today(), on_commit) is None


def test_the_sweep_reads_the_boundary_index(calendar: dict[str, Answer]) -> None:
    # Without its ORDER BY (the chunks' order), which on tables this small makes walking the
    # answers' primary key look cheapest. At 100,000 answers the benchmark checks the plan of
    # the query as it is (`python -m benchmarks.reevaluation_bench`).
    query = answer_ids_due_for_validity(today()).order_by()
    sql, params = query.query.sql_with_params()
    with connection.cursor() as cursor:
        # The tables are tiny here, so forbid the sequential scan the planner would prefer and
        # check that the index can answer the query at all, on statistics of these rows (not
        # of a larger table an earlier test analyzed).
        cursor.execute("ANALYZE reviews_answer, reviews_verdict")
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "verdict_next_boundary" in plan, plan


def test_the_sweep_runs_on_the_pinned_date_when_one_is_set(
    calendar: dict[str, Answer], settings: Any, on_commit: Any
) -> None:
    from reviewqueue.jobs.tasks import sweep_validity_boundaries

    settings.REEVALUATION_TODAY = today() + dt.timedelta(days=10)
    with on_commit():
        sweep_validity_boundaries.delay()

    calendar["leaving"].refresh_from_db()
    assert calendar["leaving"].status == Answer.Status.HELD


def test_a_withdrawn_document_abstains_its_answers(publish_doc: Any, ingest: Any,
                                                   service_api: Any, on_commit: Any) -> None:
    publish_doc("pricing", "r1")
    answer = ingest("t-1")

    with on_commit():
        assert service_api.delete("/api/v1/documents/pricing").status_code in (200, 204)

    answer.refresh_from_db()
    assert answer.status == Answer.Status.ABSTAINED
    assert answer.current_verdict.trigger == "withdrawal"
    assert answer.current_verdict.revisions_used[0].get("withdrawn") is True


def test_withdrawing_a_document_the_answer_only_retrieved_leaves_it_a_candidate(
        publish_doc: Any, ingest: Any, service_api: Any, on_commit: Any) -> None:
    publish_doc("pricing", "r1")
    publish_doc("billing", "r1", facts=[fact(30, key="grace_days")])
    answer = ingest("t-1", cites=[("d1", "pricing", "r1"), ("d2", "billing", "r1")])
    assert answer.status == Answer.Status.CANDIDATE

    with on_commit():
        assert service_api.delete("/api/v1/documents/billing").status_code in (200, 204)

    answer.refresh_from_db()
    verdict = answer.current_verdict
    assert (answer.status, verdict.trigger, verdict.reason) == (
        Answer.Status.CANDIDATE, "withdrawal", "supported")
    assert [(w["evidence"], w["message"]) for w in verdict.warnings
            if w["code"] == "uncited_evidence"] == [
        (["d2"], "evidence d2 was retrieved but no claim cites it; its document was withdrawn")]
    assert {u["cite"]: u.get("withdrawn", False) for u in verdict.revisions_used} == {
        "d1": False, "d2": True}


def test_verdicts_of_a_job_are_audited_as_the_worker(publish_doc: Any, ingest: Any) -> None:
    publish_doc("pricing", "r1")
    ingest("t-1")
    publish_doc("pricing", "r2")
    event = AuditEvent.objects.filter(action="verdict.created", trace_id="t-1").get()
    assert (event.actor_type, event.actor) == (WORKER.type, WORKER.name)
    assert event.after["cause"] == "revision"
