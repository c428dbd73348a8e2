"""Integration: real `celery -A reviewqueue worker` processes on Redis and the test database.

Every test starts its own worker (two pool processes) on Redis db 15 and publishes, ingests
and decides in this process, as the web tier would. Redis must be reachable: these tests
fail, not skip, without it.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from typing import Any

import pytest

from reviewqueue.audit.services import Actor
from reviewqueue.jobs.models import Job, JobChunk
from reviewqueue.jobs.services import job_fan_out, job_start_for_document
from reviewqueue.reviews.models import Answer, Decision, ReviewItem, Verdict
from reviewqueue.reviews.services import evaluation
from reviewqueue.webhooks import signing
from reviewqueue.webhooks.models import WebhookDelivery
from reviewqueue.webhooks.services import webhook_endpoint_register
from tests.reevaluation.builders import copy_answers
from tests.reevaluation.builders import ingest as ingest_answer
from tests.reevaluation.conftest import (
    Receiver,
    fact,
    redis_client,
    today,
    wait_until,
)

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

# A worker that also runs beat, with stalled jobs looked at every two seconds and a chunk taken
# for lost as soon as the visibility timeout and the time limit have passed (14 s here).
RESUMING: dict[str, Any] = {"beat": True, "JOBS_RESUME_EVERY_SECONDS": "2",
                            "REEVALUATION_CHUNK_LOST_SECONDS": "1"}


def jobs_done(**filters: Any) -> list[Job] | None:
    jobs = list(Job.objects.filter(**filters))
    if jobs and all(j.state in (Job.State.FINISHED, Job.State.FAILED) for j in jobs):
        return jobs
    return None


def settle(timeout: float = 60) -> list[Job]:
    """Wait until every job so far has finished."""
    return wait_until(lambda: jobs_done() or not Job.objects.exists(), timeout=timeout,
                      message="jobs did not finish")


def answers_with_prefix(prefix: str) -> list[Answer]:
    return list(Answer.objects.filter(trace_id__startswith=prefix)
                .select_related("current_verdict", "current_version"))


def many_answers(prefix: str, count: int, **kwargs: Any) -> list[Answer]:
    template = ingest_answer(f"{prefix}0", **kwargs)
    copy_answers(template, count - 1, prefix)
    return answers_with_prefix(prefix)


def is_fresh(answer: Answer) -> bool:
    run = evaluation.run_gate(answer=answer, version=answer.current_version,
                              retrieved=list(answer.retrieved.all()), as_of=today())
    return run.verdict.fingerprint == answer.current_verdict.fingerprint


def test_publishing_a_revision_reevaluates_every_affected_answer_and_only_those(
    start_worker: Any, publish: Any
) -> None:
    start_worker()
    publish("pricing", "r1", facts=[fact()])
    publish("billing", "r1", facts=[fact(30, key="grace_days")])
    settle()
    affected = many_answers("pricing-", 60)
    others = many_answers("billing-", 20, cites=[("d1", "billing", "r1")],
                          claims=[{"key": "grace_days", "value": 30, "cite": "d1"}])

    publish("pricing", "r2", facts=[fact()])

    [job] = wait_until(lambda: jobs_done(document_key="pricing", total__gt=0), timeout=60,
                       message="the revision's job did not finish")
    assert (job.total, job.done, job.failed, job.changed) == (60, 60, 0, 60)
    for answer in answers_with_prefix("pricing-"):
        assert answer.current_verdict.trigger == "revision"
        assert answer.current_verdict.revisions_used[0]["current"] == "r2"
        assert answer.status == Answer.Status.HELD
    assert Verdict.objects.filter(answer__in=affected).count() == 120
    assert Verdict.objects.filter(answer__in=others).count() == 20


def test_publishing_the_same_revision_again_creates_no_verdict(
    start_worker: Any, publish: Any
) -> None:
    start_worker()
    publish("pricing", "r1", facts=[fact()])
    settle()
    many_answers("pricing-", 30)
    publish("pricing", "r2", facts=[fact()])
    wait_until(lambda: jobs_done(document_key="pricing", total__gt=0), timeout=60,
               message="the first re-evaluation did not finish")
    verdicts = Verdict.objects.count()

    publish("pricing", "r2", facts=[fact()])  # a replay of the same body
    again = job_start_for_document(document_key="pricing", trigger="revision")
    wait_until(lambda: jobs_done(pk=again.pk), timeout=60, message="the re-run did not finish")

    again.refresh_from_db()
    assert (again.total, again.done, again.changed) == (30, 30, 0)
    assert Verdict.objects.count() == verdicts


def test_a_worker_killed_in_the_middle_of_a_fan_out_leaves_every_answer_fresh_once(
    start_worker: Any, publish: Any
) -> None:
    first = start_worker()
    publish("pricing", "r1", facts=[fact()])
    settle()
    answers = many_answers("pricing-", 600)

    publish("pricing", "r2", facts=[fact()])
    job = wait_until(
        lambda: Job.objects.filter(document_key="pricing", total=600, done__gte=40).first(),
        timeout=60, interval=0.05, message="the fan-out never got going")
    first.kill()
    job.refresh_from_db()
    assert job.state == Job.State.RUNNING and job.done < 600, "killed too late to prove much"

    # Redis hands back the messages the killed worker had taken; beat sends again the one it
    # may have taken from Redis without recording it (see the test below).
    start_worker(**RESUMING)
    [job] = wait_until(lambda: jobs_done(pk=job.pk), timeout=90,
                       message="the job did not finish after the restart")

    # `changed` may be lower: answers the killed worker had committed are no-ops on redelivery.
    assert (job.total, job.done, job.failed) == (600, 600, 0)
    assert Verdict.objects.filter(answer__in=answers).count() == 1200  # ingest + one fresh each
    for answer in answers_with_prefix("pricing-"):
        assert answer.current_verdict.trigger == "revision"
        assert answer.current_verdict.revisions_used[0]["current"] == "r2"
    assert all(is_fresh(a) for a in answers_with_prefix("pricing-")[:50])


def queued_tasks() -> list[tuple[bytes, str, dict[str, Any]]]:
    """The messages waiting in Redis: (raw message, task name, keyword arguments)."""
    found = []
    for raw in redis_client().lrange("celery", 0, -1):
        message = json.loads(raw)
        _args, kwargs, _embed = json.loads(base64.b64decode(message["body"]))
        found.append((raw, message["headers"]["task"], kwargs))
    return found


def test_a_chunk_whose_message_the_broker_lost_is_sent_again_and_its_job_finishes(
    start_worker: Any, publish: Any, settings: Any
) -> None:
    settings.REEVALUATION_CHUNK_SIZE = 20  # as in the worker
    def publish_and_fan_out(revision: str) -> Job:
        publish("pricing", revision, facts=[fact()])
        job = Job.objects.filter(document_key="pricing").latest("created_at")
        job_fan_out(job_id=str(job.pk))  # here, so that the worker never fans out itself
        return job

    publish_and_fan_out("r1")
    many_answers("pricing-", 100)
    job = publish_and_fan_out("r2")
    # Lose the fan-out messages and one chunk's, as Redis does when a worker dies between
    # taking a message and recording it.
    lost = JobChunk.objects.get(job=job, number=2)
    for raw, task, kwargs in queued_tasks():
        if task == "jobs.fan_out_job" or kwargs.get("chunk_id") == lost.pk:
            redis_client().lrem("celery", 1, raw)
    assert sorted(kw.get("chunk_id") for _, task, kw in queued_tasks()
                  if task == "reviews.reevaluate_answers") == sorted(
        JobChunk.objects.filter(job=job).exclude(pk=lost.pk).values_list("pk", flat=True))

    start_worker(**RESUMING)
    [job] = wait_until(lambda: jobs_done(pk=job.pk), timeout=90,
                       message="the lost chunk was never sent again")

    assert (job.total, job.done, job.failed, job.changed) == (100, 100, 0, 100)
    resent = JobChunk.objects.get(pk=lost.pk)
    assert resent.state == JobChunk.State.FINISHED and resent.enqueued_at > lost.enqueued_at
    for answer in Answer.objects.filter(pk__in=lost.answer_ids).select_related(
            "current_verdict"):
        assert answer.current_verdict.revisions_used[0]["current"] == "r2"


def test_a_date_boundary_moves_answers_in_and_out_of_the_queue(
    start_worker: Any, publish: Any
) -> None:
    t = today()
    first = start_worker()
    publish("calendar", "r1", facts=[fact(14, valid_from=str(t - dt.timedelta(days=30)),
                                          valid_until=str(t + dt.timedelta(days=9)))])
    publish("calendar-next", "r1", facts=[fact(21, valid_from=str(t + dt.timedelta(days=10)))])
    leaving = ingest_answer("leaving", cites=[("d1", "calendar", "r1")])
    arriving = ingest_answer("arriving", cites=[("d1", "calendar-next", "r1")],
                             claims=[{"key": "trial_days", "value": 21, "cite": "d1"}],
                             text="The free trial lasts 21 days [d1].")
    assert (leaving.status, arriving.status) == (Answer.Status.CANDIDATE, Answer.Status.HELD)
    settle()
    first.stop()

    # Ten days later, as far as this worker knows; its start-up catch-up runs the sweep.
    start_worker(REEVALUATION_TODAY=str(t + dt.timedelta(days=10)))

    [job] = wait_until(lambda: jobs_done(scope="validity"), timeout=60,
                       message="the catch-up sweep did not run")
    assert (job.total, job.done, job.changed) == (2, 2, 2)
    leaving.refresh_from_db()
    arriving.refresh_from_db()
    assert leaving.status == Answer.Status.HELD
    assert leaving.current_verdict.trigger == "validity"
    assert ReviewItem.objects.filter(answer=leaving).exists()
    assert arriving.status == Answer.Status.CANDIDATE
    assert not ReviewItem.objects.filter(answer=arriving).exists()


@pytest.fixture
def held_answer(start_worker: Any, publish: Any) -> Answer:
    """A worker, and an answer held because its two sources disagree."""
    start_worker()
    publish("pricing", "r1", facts=[fact()])
    publish("pricing-eu", "r1", facts=[fact(30)])
    settle()
    answer = ingest_answer("t-1", cites=[("d1", "pricing", "r1"), ("d2", "pricing-eu", "r1")],
                           text="The free trial lasts 14 days [d1][d2].")
    assert answer.status == Answer.Status.HELD
    return answer


def race(answer: Answer, publish: Any, approve: Any, tries: int) -> list[Any]:
    """Each try: publish a new revision of a cited document (its re-evaluation goes to the
    worker) and at once approve on the verdict seen before. Returns what each approval got."""
    outcomes = []
    for number in range(2, tries + 2):
        seen = Answer.objects.get(pk=answer.pk).current_verdict_id
        publish("pricing", f"r{number}", facts=[fact()])
        outcomes.append(approve(seen))
    settle()
    return outcomes


def assert_settled_fresh(answer: Answer, tries: int) -> None:
    answer.refresh_from_db()
    assert not Decision.objects.exists()
    assert answer.status == Answer.Status.HELD
    assert answer.current_verdict.revisions_used[0]["current"] == f"r{tries + 1}"
    assert is_fresh(answer)
    # Each revision gave at most one verdict, whoever computed it first.
    assert Verdict.objects.filter(answer=answer).count() <= tries + 1


def test_a_stale_approval_through_the_decision_service_is_refused_every_time(
    held_answer: Answer, publish: Any, reviewer: Any
) -> None:
    from reviewqueue.reviews.services.decisions import DecisionInput, answer_decide

    actor = Actor.of_user(reviewer)

    def approve(seen: int) -> str:
        try:
            answer_decide(trace_id="t-1", user=reviewer, actor=actor,
                          data=DecisionInput(action="approve", verdict_id=seen))
        except Exception as exc:
            return type(exc).__name__
        return "approved"

    tries = 25
    outcomes = race(held_answer, publish, approve, tries)

    # StaleVerdict, or NotHeld had the worker moved the answer out of the queue first.
    assert set(outcomes) <= {"StaleVerdict", "NotHeld"}, outcomes
    assert_settled_fresh(held_answer, tries)


def test_a_webhook_receiver_gets_every_event_once_with_a_valid_signature(
    start_worker: Any, publish: Any, receiver: Receiver
) -> None:
    receiver.fail_first = 2
    secret = "worker-test-secret-0123456789"
    webhook_endpoint_register(url=receiver.url, secret=secret, user=None,
                              actor=Actor("system", "test"))
    start_worker()
    publish("pricing", "r1", facts=[fact()])
    settle()
    for number in range(3):
        ingest_answer(f"t-{number}")  # three events: new answers, candidate

    publish("pricing", "r2", facts=[fact()])  # three more, sent by the worker: held
    settle()
    wait_until(lambda: len(receiver.delivered()) >= 6, timeout=60,
               message="not every event was delivered")

    delivered = receiver.delivered()
    event_ids = [r.json["event_id"] for r in delivered]
    assert len(event_ids) == len(set(event_ids)) == 6
    assert sorted((r.json["trace_id"], r.json["status"]) for r in delivered) == sorted(
        [(f"t-{n}", "candidate") for n in range(3)] + [(f"t-{n}", "held") for n in range(3)])
    for request in delivered:
        assert signing.verify(secret, request.body, request.headers["X-ReviewQueue-Timestamp"],
                              request.headers["X-ReviewQueue-Signature"])
    assert len(receiver.requests) == 18  # two refusals before each success
    # The worker records a delivery after the receiver's 200 reaches it: allow it that moment.
    wait_until(lambda: set(WebhookDelivery.objects.values_list("state", flat=True))
               == {"delivered"}, timeout=30, message="a delivery was not recorded as delivered")
