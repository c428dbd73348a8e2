"""Jobs: chunked fan-out, counts, progress, dead letters, the command and the API."""

from __future__ import annotations

import datetime as dt
import re
from datetime import timedelta
from typing import Any
from unittest import mock

import pytest
from django.core.management import CommandError, call_command
from django.db import OperationalError
from django.utils import timezone

from reviewqueue.audit.models import AuditEvent
from reviewqueue.audit.services import SYSTEM
from reviewqueue.jobs.models import DeadLetter, Job, JobChunk
from reviewqueue.jobs.services import (
    chunk_finish,
    dead_letter_retry,
    job_start_for_answers,
    job_start_for_document,
)
from reviewqueue.reviews.models import Answer, Verdict
from tests.reevaluation.conftest import fact

pytestmark = pytest.mark.django_db


def last_job() -> Job:
    job = Job.objects.order_by("-created_at").first()
    assert job is not None
    return job


@pytest.fixture
def five_answers(publish_doc: Any, ingest: Any, settings: Any) -> list[Answer]:
    settings.REEVALUATION_CHUNK_SIZE = 2
    publish_doc("pricing", "r1")
    return [ingest(f"t-{i}") for i in range(5)]


def test_a_revision_fans_out_in_chunks_and_the_job_counts_them(
    five_answers: list[Answer], publish: Any, on_commit: Any
) -> None:
    with mock.patch("reviewqueue.reviews.tasks.reevaluate_answers.delay",
                    wraps=__import__("reviewqueue.reviews.tasks",
                                     fromlist=["x"]).reevaluate_answers.delay) as sent, \
            on_commit():
        publish("pricing", "r2", facts=[fact()])

    assert [len(call.args[0]) for call in sent.call_args_list] == [2, 2, 1]
    job = last_job()
    assert (job.scope, job.document_key, job.trigger) == ("document", "pricing", "revision")
    assert (job.state, job.total, job.done, job.failed, job.changed) == ("finished", 5, 5, 0, 5)


def test_a_chunk_delivered_twice_is_counted_once(five_answers: list[Answer], publish: Any,
                                                 on_commit: Any) -> None:
    with on_commit():
        publish("pricing", "r2", facts=[fact()])
    chunk = JobChunk.objects.order_by("number").first()

    assert chunk_finish(chunk_id=chunk.pk, done=2, failed=0, changed_ids=chunk.answer_ids,
                        done_ids=chunk.answer_ids) is False

    job = last_job()
    assert (job.done, job.failed) == (5, 0)


def test_re_evaluate_now_returns_a_job_the_requester_can_follow(
    five_answers: list[Answer], reviewer: Any, client: Any, on_commit: Any
) -> None:
    with on_commit():
        job = job_start_for_answers([a.pk for a in five_answers[:3]], "manual", reviewer)

    client.force_login(reviewer)
    body = client.get(job.progress_url).json()
    assert (body["state"], body["total"], body["done"], body["failed"]) == ("finished", 3, 3, 0)
    assert body["finished"] is True and body["percent"] == 100
    assert (body["text"], body["state_label"]) == (
        "3 of 3 re-evaluated, 0 with a new verdict, 0 failed", "Finished")
    japanese = client.get(job.progress_url, HTTP_ACCEPT_LANGUAGE="ja").json()
    assert japanese["state"] == "finished" and japanese["state_label"] != "Finished"
    page = client.get(job.get_absolute_url())
    assert page.status_code == 200
    assert b'data-job-progress' in page.content and b"js/progress.js" in page.content
    assert b"data-back-to-jobs" not in page.content  # the list of every job is the admins'


def test_a_job_with_nothing_to_do_says_so_without_an_empty_bar(
    publish_doc: Any, admin_user: Any, client: Any, on_commit: Any
) -> None:
    """A document no answer cites: its publish still leaves a job, which says why it did
    nothing rather than "0 of 0 re-evaluated" beside an empty bar."""
    with on_commit():
        publish_doc("pricing", "r1")
    job = last_job()
    assert (job.state, job.total) == ("finished", 0)

    client.force_login(admin_user)
    assert client.get(job.progress_url).json()["text"] == (
        "No answer was affected: nothing to re-evaluate")
    row = re.search(r"<tr[^>]*>(?:(?!</tr>).)*pricing(?:(?!</tr>).)*</tr>",
                    client.get("/jobs/").content.decode(), re.S)
    assert row and "No answer was affected: nothing to re-evaluate" in row.group(0)
    assert "<progress" not in row.group(0) and "0 of 0" not in row.group(0)
    # Opened from that list, the job's page leads back to it.
    assert 'href="/jobs/" data-back-to-jobs>' in client.get(job.get_absolute_url()).content.decode()


def test_another_reviewer_cannot_see_someone_elses_job(
    five_answers: list[Answer], reviewer: Any, make_user: Any, client: Any, on_commit: Any
) -> None:
    with on_commit():
        job = job_start_for_answers([five_answers[0].pk], "manual", reviewer)

    client.force_login(make_user("bob", "reviewer"))
    assert client.get(job.progress_url).status_code == 404


def test_every_answer_is_re_evaluated_only_once_confirmed_and_as_requested_by_hand(
    five_answers: list[Answer], admin_user: Any, client: Any, on_commit: Any
) -> None:
    client.force_login(admin_user)
    refused = client.post("/jobs/start", {"scope": "all"})
    assert refused.status_code == 400
    assert "Tick the box to confirm" in refused.content.decode()
    assert not Job.objects.filter(scope="all").exists()
    with on_commit():
        started = client.post("/jobs/start", {"scope": "all", "confirm": "all"})
    job = Job.objects.get(scope="all")
    assert started["Location"] == job.get_absolute_url()
    assert (job.scope, job.trigger) == ("all", "manual")


def test_a_job_for_a_document_that_does_not_exist_is_refused_on_the_page(
    admin_user: Any, client: Any
) -> None:
    client.force_login(admin_user)
    response = client.post("/jobs/start", {"document_id": "no-<such>-doc"})
    assert response.status_code == 400
    assert "There is no document no-&lt;such&gt;-doc." in response.content.decode()
    assert not Job.objects.exists()


def test_admins_see_the_list_of_jobs(five_answers: list[Answer], reviewer: Any,
                                     admin_user: Any, client: Any, on_commit: Any) -> None:
    with on_commit():
        job_start_for_answers([five_answers[0].pk], "manual", reviewer)

    client.force_login(admin_user)
    page = client.get("/jobs/")
    assert page.status_code == 200
    assert b"Chosen answers" in page.content
    # The figures and the state read apart: "0 failed · Finished", not "0 failed Finished".
    text = re.sub(r"<[^>]+>|\s+", " ", page.content.decode())
    assert re.search(r"1 of 1 re-evaluated, 0 with a new verdict, 0 failed · Finished",
                     re.sub(r" +", " ", text))
    client.force_login(reviewer)
    assert client.get("/jobs/").status_code == 403


def test_a_manual_request_is_audited_and_names_the_person_on_new_verdicts(
    publish: Any, ingest: Any, reviewer: Any, on_commit: Any, owner: Any
) -> None:
    publish("pricing", "r1", facts=[fact()])
    answer = ingest("t-1")
    publish("pricing", "r2", facts=[fact()])  # nothing queued: no on-commit run

    with on_commit():
        job_start_for_answers([answer.pk], "manual", reviewer)

    requested = AuditEvent.objects.get(action="reevaluation.requested")
    assert requested.actor == "user:alice" and requested.after["answers"] == 1
    created = AuditEvent.objects.filter(action="verdict.created", trace_id="t-1").get()
    assert created.actor == "user:alice" and created.after["cause"] == "manual"


def test_a_task_that_keeps_failing_ends_in_a_dead_letter(
    five_answers: list[Answer], publish: Any, on_commit: Any, settings: Any
) -> None:
    broken = OperationalError("server closed the connection unexpectedly\nDETAIL: secret")
    with mock.patch("reviewqueue.reviews.services.reevaluation.answer_reevaluate",
                    side_effect=broken), on_commit():
        publish("pricing", "r2", facts=[fact()])

    assert DeadLetter.objects.count() == 3  # one per chunk of 2, 2 and 1 answers
    letter = DeadLetter.objects.order_by("id").first()
    assert letter.task_name == "reviews.reevaluate_answers"
    assert letter.error_type == "django.db.utils.OperationalError"
    assert letter.error_message == "server closed the connection unexpectedly"
    assert letter.attempts == settings.CELERY_TASK_MAX_RETRIES + 1
    assert letter.kwargs["chunk_id"] == JobChunk.objects.get(job=last_job(), number=0).pk
    job = last_job()
    assert JobChunk.objects.get(job=job, number=0).state == JobChunk.State.DEAD
    assert (job.state, job.done, job.failed) == ("finished", 0, 5)


def test_an_admin_retry_of_a_dead_letter_finishes_the_job(
    five_answers: list[Answer], publish: Any, on_commit: Any, admin_user: Any
) -> None:
    real = __import__("reviewqueue.reviews.services.reevaluation",
                      fromlist=["x"]).answer_reevaluate
    def fail_on_first_chunk(**kwargs: Any) -> Any:
        if kwargs["answer_id"] in (five_answers[0].pk, five_answers[1].pk):
            raise OperationalError("connection refused")
        return real(**kwargs)

    with mock.patch("reviewqueue.reviews.services.reevaluation.answer_reevaluate",
                    side_effect=fail_on_first_chunk), on_commit():
        publish("pricing", "r2", facts=[fact()])
    job = last_job()
    letter = DeadLetter.objects.get()
    assert (job.state, job.done, job.failed) == ("finished", 3, 2)

    with on_commit():
        dead_letter_retry(dead_letter_id=letter.pk, user=admin_user, actor=SYSTEM)

    job.refresh_from_db()
    letter.refresh_from_db()
    assert letter.retry_count == 1 and letter.retried_by == admin_user
    assert JobChunk.objects.get(job=job, number=0).state == JobChunk.State.FINISHED
    assert (job.state, job.total, job.done, job.failed) == ("finished", 5, 5, 0)
    assert AuditEvent.objects.filter(action="dead_letter.retried").count() == 1


def test_an_answer_sent_again_from_the_dead_letters_keeps_its_cause(
    five_answers: list[Answer], publish: Any, on_commit: Any, admin_user: Any
) -> None:
    real = __import__("reviewqueue.reviews.services.reevaluation",
                      fromlist=["x"]).answer_reevaluate
    def fail_on_the_first_answer(**kwargs: Any) -> Any:
        if kwargs["answer_id"] == five_answers[0].pk:
            raise ValueError("not retried")
        return real(**kwargs)

    # Another document now disagrees on the key the answers claim; they do not cite it.
    with mock.patch("reviewqueue.reviews.services.reevaluation.answer_reevaluate",
                    side_effect=fail_on_the_first_answer), on_commit():
        publish("pricing-pro", "r1", facts=[fact(30)])
    # One from each job: pricing-pro's, and that of pricing, the other document of the
    # conflict pricing-pro opened.
    letters = list(DeadLetter.objects.order_by("pk").values_list("args", "kwargs"))
    assert letters == [([[five_answers[0].pk], "revision"], {"cause": "pricing-pro"})] * 2
    letter = DeadLetter.objects.order_by("pk").first()

    with on_commit():
        dead_letter_retry(dead_letter_id=letter.pk, user=admin_user, actor=SYSTEM)
    answers = Answer.objects.select_related("current_verdict").order_by("pk")
    assert {a.current_verdict.trigger for a in answers} == {"other_document"}


def test_the_admin_action_sends_a_dead_letter_again(admin_user: Any, client: Any,
                                                    five_answers: list[Answer],
                                                    on_commit: Any) -> None:
    letter = DeadLetter.objects.create(
        task_name="reviews.reevaluate_answers", args=[[five_answers[0].pk], "manual"],
        kwargs={}, error_type="ValueError", attempts=1,
        failed_at=five_answers[0].created_at,
    )
    client.force_login(admin_user)
    with on_commit():
        response = client.post("/admin/jobs/deadletter/", {
            "action": "retry_selected", "_selected_action": [letter.pk],
        })
    assert response.status_code == 302
    letter.refresh_from_db()
    assert letter.retry_count == 1


def test_an_answer_that_errors_is_counted_failed_and_the_rest_go_on(
    five_answers: list[Answer], publish: Any, on_commit: Any
) -> None:
    real = __import__("reviewqueue.reviews.services.reevaluation",
                      fromlist=["x"]).answer_reevaluate
    bad = five_answers[2].pk

    def one_bad(**kwargs: Any) -> Any:
        if kwargs["answer_id"] == bad:
            raise ValueError("cannot gate this one")
        return real(**kwargs)

    with mock.patch("reviewqueue.reviews.services.reevaluation.answer_reevaluate",
                    side_effect=one_bad), on_commit():
        publish("pricing", "r2", facts=[fact()])

    job = last_job()
    assert (job.state, job.done, job.failed, job.changed) == ("finished", 4, 1, 4)
    letter = DeadLetter.objects.get()
    assert letter.args == [[bad], "revision"] and letter.error_type == "builtins.ValueError"


@pytest.mark.django_db(transaction=True)
def test_the_command_reevaluates_every_answer_after_a_gate_change(
    five_answers: list[Answer], capsys: Any
) -> None:
    with mock.patch("gating.engine.GATE_VERSION", "test-next"):
        call_command("reevaluate", "--all", "--wait", "--timeout", "30")

    assert Verdict.objects.filter(trigger="gate_version").count() == 5
    job = last_job()
    assert (job.scope, job.state, job.done) == ("all", "finished", 5)
    assert "5/5 re-evaluated, 5 changed, 0 failed" in capsys.readouterr().out


@pytest.mark.django_db(transaction=True)
def test_the_command_reevaluates_one_document(five_answers: list[Answer], publish_doc: Any,
                                              ingest: Any) -> None:
    publish_doc("billing", "r1", facts=[fact(30, key="grace_days")])
    ingest("other", cites=[("d1", "billing", "r1")],
           claims=[{"key": "grace_days", "value": 30, "cite": "d1"}])
    with mock.patch("gating.engine.GATE_VERSION", "test-next"):
        call_command("reevaluate", "--document", "billing")

    assert list(Verdict.objects.filter(trigger="manual")
                .values_list("answer__trace_id", flat=True)) == ["other"]


def test_the_command_names_an_unknown_answer(five_answers: list[Answer]) -> None:
    with pytest.raises(CommandError, match="no such answer: nope"):
        call_command("reevaluate", "--answer", "t-1", "--answer", "nope")


def test_the_command_names_an_unknown_document_and_starts_nothing(
    five_answers: list[Answer]
) -> None:
    before = Job.objects.count()
    with pytest.raises(CommandError, match="no such document: nope"):
        call_command("reevaluate", "--document", "pricing", "--document", "nope")
    assert Job.objects.count() == before


@pytest.mark.parametrize("timeout", ["-5", "nan"])
def test_the_command_refuses_a_negative_timeout_and_starts_nothing(
    five_answers: list[Answer], timeout: str
) -> None:
    before = Job.objects.count()
    with pytest.raises(CommandError) as raised:
        call_command("reevaluate", "--all", "--wait", "--timeout", timeout)
    assert str(raised.value) == f"Error: argument --timeout: must be 0 or more, not {timeout}"
    assert Job.objects.count() == before


def test_a_reviewer_re_evaluates_an_answer_through_the_api(
    five_answers: list[Answer], token_client: Any, reviewer: Any
) -> None:
    api = token_client(reviewer)
    response = api.post("/api/v1/jobs", {"trace_ids": ["t-1", "t-2"]}, format="json")
    assert response.status_code == 202, response.content
    assert response.json()["total"] == 2
    # Followed where the body says, with the same token.
    url = response.json()["url"]
    assert url == f"/api/v1/jobs/{response.json()['id']}"
    follow = api.get(url)
    assert follow.status_code == 200 and follow.json()["id"] == response.json()["id"]


def test_a_read_only_token_may_not_start_a_re_evaluation(
    five_answers: list[Answer], token_client: Any, reviewer: Any
) -> None:
    jobs = Job.objects.count()
    response = token_client(reviewer, scopes=["read"]).post(
        "/api/v1/jobs", {"trace_ids": ["t-1"]}, format="json")
    assert response.status_code == 403
    assert Job.objects.count() == jobs


def test_only_admins_re_evaluate_a_whole_document_through_the_api(
    five_answers: list[Answer], token_client: Any, reviewer: Any, admin_user: Any
) -> None:
    body = {"document_id": "pricing"}
    assert token_client(reviewer).post("/api/v1/jobs", body, format="json").status_code == 403
    assert token_client(admin_user).post("/api/v1/jobs", body, format="json").status_code == 202


def test_an_unreadable_answer_is_not_found_through_the_api(
    publish_doc: Any, ingest: Any, token_client: Any, reviewer: Any
) -> None:
    publish_doc("hr-handbook", "r1", principals=["group:hr"])
    ingest("hr-1", cites=[("d1", "hr-handbook", "r1")], asked_by=("group:hr",))
    response = token_client(reviewer).post("/api/v1/jobs", {"trace_ids": ["hr-1"]},
                                           format="json")
    assert response.status_code == 404


def test_a_document_job_with_no_citing_answer_finishes_empty(on_commit: Any) -> None:
    with on_commit():
        job = job_start_for_document(document_key="nobody-cites-this", trigger="revision")
    job.refresh_from_db()
    assert (job.state, job.total) == ("finished", 0)


@pytest.mark.django_db(transaction=True)
def test_a_broker_that_is_down_leaves_the_job_pending_for_the_resumer(
    publish: Any, ingest: Any
) -> None:
    import kombu.exceptions

    from reviewqueue.jobs.services import jobs_resume_stalled

    publish("pricing", "r1", facts=[fact()])
    ingest("t-1")
    with mock.patch("reviewqueue.jobs.tasks.fan_out_job.delay",
                    side_effect=kombu.exceptions.OperationalError("refused")):
        publish("pricing", "r2", facts=[fact()])  # the publish itself succeeds
    job = last_job()
    assert job.state == Job.State.PENDING

    assert jobs_resume_stalled(now=timezone.now() + timedelta(hours=1)) == 1
    job.refresh_from_db()
    assert (job.state, job.done) == ("finished", 1)


@pytest.mark.parametrize(("language", "says"), [
    ("en", "A document id has at most 200 characters."),
    ("ja", "文書 ID は 200 文字までです。"),
])
def test_a_document_id_too_long_to_be_one_is_refused_and_kept(
    admin_user: Any, client: Any, language: str, says: str
) -> None:
    client.force_login(admin_user)
    typed = "x" * 300
    response = client.post("/jobs/start", {"document_id": typed},
                           HTTP_ACCEPT_LANGUAGE=language)
    assert response.status_code == 400
    page = response.content.decode()
    assert says in page
    assert f'value="{typed}"' in page
    assert not Job.objects.exists()


def test_the_job_page_speaks_the_reviewers_language(five_answers: list[Answer], reviewer: Any,
                                                    client: Any, on_commit: Any) -> None:
    with on_commit():
        job = job_start_for_answers([five_answers[0].pk], "manual", reviewer)
    client.force_login(reviewer)
    def shown(**headers: str) -> str:
        page = client.get(job.get_absolute_url(), **headers).content.decode()
        return " ".join(page.split())

    assert "Chosen answers · Re-evaluated on request" in shown()
    # Its start carries the zone, as every other time on the pages does.
    started = job.created_at.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
    assert f"started {started} UTC" in shown()
    japanese = shown(HTTP_ACCEPT_LANGUAGE="ja")
    assert "選んだ回答 · 依頼による再評価" in japanese
    assert "manual" not in japanese
