"""A verification checks every verdict and decision against the audit event that recorded it:
a row changed in the table, or inserted with no event (an approval nobody made), fails it,
on the command, on the audit page and as an alert, even while the chain itself is intact."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from reviewqueue.audit.models import AuditAlert
from reviewqueue.reviews.models import Decision
from tests.audit.conftest import verify

pytestmark = pytest.mark.django_db

# The chain itself is intact; the rows differ from it.
CHAIN_INTACT = ("Audit check FAILED: the chain is intact, but stored sources or records differ "
                "from it. All ")
FORGE = ("INSERT INTO reviews_decision (action, comment, reject_reason, revisions_used, "
         "read_passages, created_at, answer_id, reviewer_id, version_id, verdict_id) "
         "SELECT 'approve', '', '', '[]', true, now(), answer_id, reviewer_id, version_id, "
         "verdict_id FROM reviews_decision WHERE id = %s RETURNING id")


def test_an_untouched_store_has_every_verdict_and_decision_recorded(
    answer_story: Callable[..., Any], admin_client: Any
) -> None:
    answer = answer_story("t-story")
    out = StringIO()
    call_command("verify_audit", stdout=out)
    verdicts = answer.verdicts.count()
    assert (f"Records OK: 1 answer stands where its last audit event left it; {verdicts} "
            "verdicts and 1 decision match the audit events that recorded them; 1 API token "
            "matches the audit events that issued and revoked it.") \
        in out.getvalue()
    page = admin_client.get("/audit/").content.decode()
    assert "Answers, verdicts and decisions unchanged." in page
    assert "1 answer stands where its last audit event left it;" in page
    assert f"{verdicts} verdicts match the audit events that recorded them;" in page


def test_a_forged_approval_and_a_rewritten_verdict_fail_the_verification(
    answer_story: Callable[..., Any], tamper: Any, admin_client: Any
) -> None:
    answer = answer_story("t-story")
    real = answer.decisions.get()
    with tamper() as cursor:
        cursor.execute(FORGE, [real.pk])
        [forged] = cursor.fetchone()
        cursor.execute("UPDATE reviews_verdict SET reason = 'supported' WHERE id = %s",
                       [real.verdict_id])
    with pytest.raises(CommandError) as refused:
        call_command("verify_audit")
    said = str(refused.value)
    assert said.startswith(CHAIN_INTACT)
    assert "Records CHANGED: 2 problems" in said
    assert f"decision #{forged} of answer t-story: no audit event recorded it (not made" in said
    assert (f"verdict #{real.verdict_id} of answer t-story: changed after its audit event "
            "recorded it (reason)") in said
    assert refused.value.returncode == 1

    page = admin_client.get("/audit/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Answers, verdicts, decisions or API tokens changed." in page
    listed = [re.sub(r"<[^>]+>", "", item) for item in re.findall(
        r"<li>(.*?)</li>", page[page.index('data-testid="records-problems"'):], re.S)][:2]
    assert listed == [
        f"Verdict #{real.verdict_id} of t-story: changed after its audit event recorded it "
        "(reason)",
        f"Decision #{forged} of t-story: no audit event recorded it: it was not made through "
        "ReviewQueue, or its event was taken out of the log"]
    assert 'href="/audit/answers/t-story/"' in page
    alert = AuditAlert.objects.get(problem="records_changed")
    assert alert.message.startswith("Answers, verdicts, decisions or API tokens differ from the "
                                    "audit events that recorded them (2 difference(s)): ")
    assert 'data-alert="records"' in page
    # Found again, the same rows raise no second alert.
    verify()
    assert AuditAlert.objects.filter(problem="records_changed").count() == 1


def test_a_row_saved_while_the_check_reads_is_left_to_the_next_check(
    answer_story: Callable[..., Any], submit: Callable[..., Any]
) -> None:
    """An answer ingested after the check read the events but before it read the verdicts:
    its verdict and event were saved together, so it is not reported as unrecorded."""
    from unittest import mock

    from reviewqueue.reviews import integrity

    answer_story("t-story")
    read_events = integrity._recorded

    def then_an_answer_comes(*args: Any) -> Any:
        seen = read_events(*args)
        assert submit("t-meanwhile", as_of=None).status_code == 201
        return seen

    with mock.patch.object(integrity, "_recorded", then_an_answer_comes):
        run = verify()
    assert run.records_ok, run.records_problems


def test_a_check_keeps_its_first_hundred_problems_and_counts_them_all(
    answer_story: Callable[..., Any], tamper: Any
) -> None:
    from reviewqueue.audit.models import VerificationRun

    real = answer_story("t-story").decisions.get()
    with tamper() as cursor:
        for _ in range(105):
            cursor.execute(FORGE, [real.pk])
    verify()
    run = VerificationRun.objects.latest("pk")
    assert run.records_problem_count == 105
    assert len(run.records_problems) == 100


@pytest.mark.django_db(transaction=True)
def test_the_checks_stream_their_rows_with_no_cursor_kept_past_a_commit(
    answer_story: Callable[..., Any]
) -> None:
    """A cursor declared outside a transaction is kept past its commit (WITH HOLD), and
    PostgreSQL stores its whole result before the first row: every verdict, decision and
    revision of the store at once. The checks read in a transaction instead."""
    from unittest import mock

    from django.db import connection

    from reviewqueue.reviews import integrity as records
    from reviewqueue.sources import integrity as sources

    answer_story("t-story")
    kept: list[tuple[str, bool]] = []

    def open_cursors(read: Callable[..., Any]) -> Callable[..., Any]:
        def reading(*args: Any) -> Any:
            with connection.cursor() as cursor:
                cursor.execute("SELECT statement, is_holdable FROM pg_cursors")
                kept.extend(cursor.fetchall())
            return read(*args)
        return reading

    with (mock.patch.object(records, "verdict_as_logged", open_cursors(records.verdict_as_logged)),
          mock.patch.object(records, "decision_as_logged",
                            open_cursors(records.decision_as_logged)),
          mock.patch.object(sources, "_revision_problems",
                            open_cursors(sources._revision_problems))):
        run = verify()

    assert run.records_ok and run.sources_ok
    assert len(kept) >= 3, kept  # the three cursors of the records check, and the sources'
    assert not [statement for statement, holdable in kept if holdable], kept


def _refused() -> str:
    """What verify_audit says of a store it finds changed."""
    with pytest.raises(CommandError) as refused:
        call_command("verify_audit", stdout=StringIO())
    return str(refused.value)


def test_an_approval_or_a_verdict_moved_to_another_answer_fails_the_verification(
    answer_story: Callable[..., Any], tamper: Any, admin_client: Any
) -> None:
    """alice approved t-story: her decision row moved onto t-other shows an approval of t-other
    nobody made. The event named the row by its id, and the answer by its trace id."""
    story = answer_story("t-story")
    other = answer_story("t-other")
    decision = story.decisions.get()
    verdict = story.verdicts.order_by("pk").first()
    with tamper() as cursor:
        for table, pk in (("reviews_decision", decision.pk), ("reviews_verdict", verdict.pk)):
            cursor.execute(f"UPDATE {table} SET answer_id = %s, version_id = %s WHERE id = %s",
                           [other.pk, other.current_version_id, pk])

    said = _refused()

    assert said.startswith(CHAIN_INTACT)
    assert "Records CHANGED: 2 problems" in said
    for kind, pk in (("verdict", verdict.pk), ("decision", decision.pk)):
        assert (f"{kind} #{pk} of answer t-other: changed after its audit event recorded it "
                "(answer: recorded for t-story") in said
    page = admin_client.get("/audit/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    # The decision names its versions too: they were moved with it.
    assert ("changed after its audit event recorded it (the answer it belongs to, version, "
            "version decided on)") in page


def test_a_deleted_approval_fails_the_verification(
    answer_story: Callable[..., Any], tamper: Any, admin_client: Any
) -> None:
    """The answer stays approved with no decision behind it: the event that recorded the
    decision is still in the chain, and its row is gone."""
    decision = answer_story("t-story").decisions.get()
    with tamper() as cursor:
        cursor.execute("UPDATE reviews_reviewitem SET earlier_approval_id = NULL "
                       "WHERE earlier_approval_id = %s", [decision.pk])
        cursor.execute("DELETE FROM reviews_decision WHERE id = %s", [decision.pk])

    said = _refused()

    assert "Records CHANGED: 1 problem in " in said
    assert re.search(rf"decision #{decision.pk} of answer t-story: audit event #\d+ recorded "
                     r"it, and it is no longer in its table \(deleted\)", said), said
    page = admin_client.get("/audit/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "an audit event recorded it, and it is no longer in its table (deleted)" in page


def test_an_edited_event_is_not_blamed_on_the_row_it_recorded(
    answer_story: Callable[..., Any], tamper: Any
) -> None:
    """Only the event changed (its reviewer rewritten): the chain check says so, and the
    records check does not say the untouched decision row changed."""
    decision = answer_story("t-story").decisions.get()
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET after = jsonb_set(after, '{reviewer}', "
                       "'\"mallory\"') WHERE action = 'decision.approve'")

    said = _refused()

    assert "no longer matches its hash" in said or "the event was edited" in said, said
    assert f"decision #{decision.pk}" not in said, said
    assert "Records OK:" in said


def test_an_event_edited_to_name_another_decision_is_not_blamed_on_either(
    answer_story: Callable[..., Any], tamper: Any
) -> None:
    """Only the event changed (the decision it names): the untouched decision is not said to
    be made outside ReviewQueue, nor one that never existed to be deleted."""
    answer_story("t-story")
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET after = jsonb_set(after, '{decision}', "
                       "'999999') WHERE action = 'decision.approve'")

    run = verify()

    assert not run.ok and run.problem == "changed"
    assert run.records_ok, [p["detail"] for p in run.records_problems]


def test_an_event_edited_to_name_no_answer_leaves_the_audit_page_readable(
    answer_story: Callable[..., Any], tamper: Any, admin_client: Any
) -> None:
    """An empty trace id, which no route takes: the page "Verify now" returns to opens,
    and says the chain is broken."""
    answer_story("t-story")
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET trace_id = '', "
                       "after = jsonb_set(after, '{decision}', '999999') "
                       "WHERE action = 'decision.approve'")
    assert not verify().ok

    page = admin_client.get("/audit/", HTTP_ACCEPT_LANGUAGE="en")

    assert page.status_code == 200
    assert "Broken." in page.content.decode()


def test_an_event_edited_to_name_a_conflict_by_no_number_leaves_the_audit_page_readable(
    answer_story: Callable[..., Any], tamper: Any, admin_client: Any
) -> None:
    """A superscript two is a digit to str.isdigit, but no conflict's URL takes it."""
    answer_story("t-story")
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET object_type = 'conflict', "
                       "object_id = '\u00b2' WHERE action = 'decision.approve'")

    page = admin_client.get("/audit/", HTTP_ACCEPT_LANGUAGE="en")

    assert page.status_code == 200
    assert "decision.approve" in page.content.decode()


def test_a_stored_records_problem_naming_no_answer_is_listed_without_a_link(
    answer_story: Callable[..., Any], tamper: Any, admin_client: Any
) -> None:
    """As a run stored before such rows were left to the chain check recorded it."""
    answer_story("t-story")
    run = verify()
    problem = {"kind": "decision", "id": 999999, "trace_id": "", "code": "missing",
               "detail": "decision #999999 of answer : audit event #9 recorded it, and it is "
                         "no longer in its table (deleted)", "fields": [], "evidence": ""}
    with tamper() as cursor:
        cursor.execute("UPDATE audit_verificationrun SET records_problem_count = 1, "
                       "records_problems = %s WHERE id = %s", [json.dumps([problem]), run.pk])

    page = admin_client.get("/audit/", HTTP_ACCEPT_LANGUAGE="en")

    assert page.status_code == 200
    listed = re.search(r'data-testid="records-problems">(.*?)</ol>', page.content.decode(),
                       re.S)
    assert listed is not None
    assert re.sub(r"\s+", " ", listed.group(1)).strip() == (
        "<li>Decision #999999 of : an audit event recorded it, and it is no longer in its "
        "table (deleted)</li>")


def test_an_edited_event_past_the_chain_check_s_list_is_not_blamed_on_its_row(
    chain: Callable[..., Any], answer_story: Callable[..., Any], tamper: Any
) -> None:
    """The chain check lists its first hundred problems: an edited event past them is not
    among those the records check is told of, and it checks the event's own hash before
    blaming the row."""
    chain(100)
    decision = answer_story("t-story").decisions.get()
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET after = after || '{\"x\": 1}' "
                       "WHERE seq <= 100")
        cursor.execute("UPDATE audit_auditevent SET after = jsonb_set(after, '{reviewer}', "
                       "'\"mallory\"') WHERE action = 'decision.approve'")

    run = verify()

    assert run.problem_count == 101 and len(run.problems) == 100
    assert run.records_ok, run.records_problems  # not "decision #N ... changed (reviewer)"
    assert Decision.objects.get(pk=decision.pk).reviewer.username == "alice"


def test_a_rewritten_answer_text_or_finding_fails_the_verification(
    answer_story: Callable[..., Any], tamper: Any, admin_client: Any
) -> None:
    """The log keeps no answer text and no findings, only their digests: the text a reviewer
    approved, rewritten in the table afterwards, and a finding taken out of a verdict, are
    both found, and said in words."""
    story = answer_story("t-story")
    first, second = story.verdicts.order_by("pk")
    assert first.version_id == second.version_id == story.current_version_id
    with tamper() as cursor:
        cursor.execute("UPDATE reviews_answerversion SET text = 'The trial lasts 90 days [d1].' "
                       "WHERE id = %s", [story.current_version_id])
        cursor.execute("UPDATE reviews_verdict SET findings = '[]' WHERE id = %s", [second.pk])

    said = _refused()

    assert said.startswith(CHAIN_INTACT)
    assert "Records CHANGED: 3 problems" in said
    # The first version's text is part of the body submitted, which the ingest event vouches
    # for as well.
    assert "answer t-story: its body (question, askers, as_of, index release, citations, or " \
        "first text and claims) changed after audit event #" in said
    # The version is vouched for by the event of the first verdict made on it.
    assert (f"verdict #{first.pk} of answer t-story: changed after its audit event recorded "
            "it (text or claims of the version judged)") in said
    assert (f"verdict #{second.pk} of answer t-story: changed after its audit event recorded "
            "it (findings, warnings, fingerprint or revisions used)") in said
    timeline = admin_client.get("/audit/answers/t-story/",
                                HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert ("Changed after its audit event recorded it: text or claims of the version "
            "judged.") in timeline
    version = timeline[timeline.index("<h3>Version 1</h3>"):]
    assert ("Its text or claims were changed after the audit event of its first verdict "
            "recorded them.") in version[:version.index("</li>")]
    assert ("Changed after its audit event recorded it: findings, warnings, fingerprint or "
            "revisions used.") in timeline
    in_japanese = admin_client.get("/audit/answers/t-story/",
                                   HTTP_ACCEPT_LANGUAGE="ja").content.decode()
    assert ("監査イベントに記録された後に変更されています：所見、警告、フィンガープリント、"  # noqa: RUF001
            "または使用したリビジョン。") in in_japanese


def test_an_edited_version_rewritten_afterwards_fails_the_verification(
    edited_answer: Any, tamper: Any
) -> None:
    """A version a reviewer wrote is vouched for by the event of their edit."""
    result = edited_answer
    verify()
    assert AuditAlert.objects.count() == 0
    with tamper() as cursor:
        cursor.execute("UPDATE reviews_answerversion SET claims = "
                       "'[{\"key\": \"trial_days\", \"value\": 30, \"cite\": \"d1\"}]' "
                       "WHERE id = %s", [result.verdict.version_id])

    said = _refused()

    assert "Records CHANGED: 1 problem" in said
    assert (f"verdict #{result.verdict.pk} of answer t-1: changed after its audit event "
            "recorded it (text or claims of the version judged)") in said


@pytest.mark.parametrize("value", [
    [1e20, -0.0, 1e-7, 14.0, 0.5], {"b": [1.5e300], "a": "e+ in a string"}, ["plain", 3, None],
])
def test_a_digest_is_the_same_before_and_after_a_trip_through_jsonb(value: Any) -> None:
    """jsonb writes numbers its own way (1e+20 as 100000000000000000000, -0.0 as 0): a row's
    digest taken before it is stored is the digest of it read back."""
    from django.db import connection
    from psycopg.types.json import Jsonb

    from reviewqueue.audit.hashing import content_sha256

    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::jsonb", [Jsonb(value)])
        [text] = cursor.fetchone()  # Django reads jsonb as text; a JSONField parses it
    back = json.loads(text)
    assert content_sha256(back) == content_sha256(value)


def test_a_rejection_turned_into_an_approval_in_the_table_fails_the_verification(
    answer_story: Callable[..., Any], tamper: Any, admin_client: Any
) -> None:
    """The answer's status is what the service is told: one changed in the table (the status
    of an answer is a column PostgreSQL lets ReviewQueue update), or pointed at another of
    its verdicts, differs from the last event that set it."""
    story = answer_story("t-story")
    first = story.verdicts.order_by("pk").first()
    other = answer_story("t-other")
    with tamper() as cursor:
        cursor.execute("UPDATE reviews_answer SET status = 'rejected' WHERE id = %s", [story.pk])
        cursor.execute("UPDATE reviews_answer SET current_verdict_id = %s WHERE id = %s",
                       [story.current_verdict_id, other.pk])  # another answer's verdict
        cursor.execute("UPDATE reviews_answer SET current_verdict_id = %s WHERE id = %s",
                       [first.pk, story.pk])

    said = _refused()

    assert said.startswith(CHAIN_INTACT)
    assert "Records CHANGED: 2 problems in 2 answers," in said
    assert re.search(r"answer t-story: changed after its last audit event \(status: rejected, "
                     rf"where audit event #\d+ left it approved, current verdict: #{first.pk}, "
                     rf"where audit event #\d+ left it #{story.current_verdict_id}\)", said), said
    assert "answer t-other: changed after its last audit event (current verdict: #" in said
    page = admin_client.get("/audit/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Answers, verdicts, decisions or API tokens changed." in page
    listed = [re.sub(r"<[^>]+>", "", item) for item in re.findall(
        r"<li>(.*?)</li>", page[page.index('data-testid="records-problems"'):], re.S)][:2]
    assert listed == [
        "Answer t-story: changed after its last audit event (status, current verdict)",
        # another answer's verdict judged another answer's version
        "Answer t-other: changed after its last audit event (current verdict, current version, "
        "not the one its verdict judged)"]
    assert AuditAlert.objects.filter(problem="records_changed").count() == 1
    timeline = admin_client.get("/audit/answers/t-story/",
                                HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert re.search(r"Changed after its last audit event: event #\d+ left it Approved, on "
                     rf"verdict #{story.current_verdict_id}\.", timeline), timeline


def test_an_answer_inserted_by_hand_is_vouched_for_by_nothing(
    answer_story: Callable[..., Any], tamper: Any
) -> None:
    """An approved answer no event ever recorded (its rows copied in by hand)."""
    story = answer_story("t-story")
    with tamper() as cursor:
        cursor.execute(
            "INSERT INTO reviews_answer (trace_id, question, asked_by, index_release, status, "
            "status_changed_at, body_digest, created_at, current_verdict_id, "
            "current_version_id) SELECT 't-forged', question, asked_by, index_release, "
            "'approved', now(), body_digest, now(), current_verdict_id, current_version_id "
            "FROM reviews_answer WHERE id = %s", [story.pk])

    said = _refused()

    assert ("answer t-forged: no audit event recorded its status (not made through "
            "ReviewQueue, or its events were taken out of the log)") in said


def test_the_timeline_of_an_untouched_answer_says_nothing_of_its_status(
    answer_story: Callable[..., Any], admin_client: Any
) -> None:
    answer_story("t-story")
    page = admin_client.get("/audit/answers/t-story/").content.decode()
    assert "Changed after its last audit event" not in page
    assert "No audit event recorded its status" not in page
    assert "Its text or claims were changed" not in page
    assert 'data-against-log="body"' not in page
    assert page.count("✓ Matches what its audit event recorded.") == 3  # 2 verdicts, 1 decision


def test_an_approved_answer_pointed_at_a_version_nobody_judged_fails_the_verification(
    answer_story: Callable[..., Any], tamper: Any, admin_client: Any, service_api: Any
) -> None:
    """The text the service is told was approved is the answer's current version: a version
    added by hand and made current, status and verdict left as they were, is found (neither
    needs the triggers switched off: versions take INSERTs, answers UPDATEs)."""
    story = answer_story("t-story")
    with tamper() as cursor:
        cursor.execute(
            "INSERT INTO reviews_answerversion (number, text, claims, created_at, answer_id) "
            "SELECT number + 1, 'Every plan is free forever [d1].', claims, now(), answer_id "
            "FROM reviews_answerversion WHERE id = %s RETURNING id", [story.current_version_id])
        [forged] = cursor.fetchone()
        cursor.execute("UPDATE reviews_answer SET current_version_id = %s WHERE id = %s",
                       [forged, story.pk])
    served = service_api.get("/api/v1/answers/t-story").json()
    assert (served["status"], served["answer"]) == ("approved", "Every plan is free forever [d1].")

    said = _refused()

    assert "Records CHANGED: 1 problem" in said
    assert (f"answer t-story: changed after its last audit event (current version: #{forged}, "
            f"where its current verdict judged #{story.current_version_id})") in said
    page = admin_client.get("/audit/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert ("Answer t-story: changed after its last audit event (current version, not the one "
            "its verdict judged)") in re.sub(r"<[^>]+>", "", page)
    timeline = admin_client.get("/audit/answers/t-story/",
                                HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert (f"Its current version (id {forged}) is not the one its verdict judged (id "
            f"{story.current_version_id}): no gate and no reviewer saw the text it serves.") \
        in timeline


def test_a_batch_committing_while_the_check_reads_with_ids_taken_earlier_is_no_tampering(
    transactional_db: Any, publish: Callable[..., Any], submit: Callable[..., Any]
) -> None:
    """Ids come from sequences when a transaction takes them, not when it commits: a batch
    takes its verdict ids, gates its answers, and commits after a quick ingest (or
    re-evaluation) that took later ids. The check's bound (the highest verdict id it sees)
    then covers the batch's ids although the batch has not committed. The batch committing
    after the check read the events and before it read the verdicts is a normal night: its
    verdicts must not be reported as recorded by no event."""
    import threading
    from unittest import mock

    from django.db import connection

    from reviewqueue.audit.services import SYSTEM
    from reviewqueue.reviews import integrity
    from reviewqueue.reviews.services import ingest

    publish()
    taken, go = threading.Event(), threading.Event()
    new_ids = ingest._new_ids

    def ids_then_wait(count: int) -> Any:
        ids = new_ids(count)
        if threading.current_thread().name == "batch":
            taken.set()
            assert go.wait(30)  # gating 500 answers takes a while
        return ids

    def batch() -> None:
        try:
            ingest.answer_ingest(data=ingest.AnswerInput(
                trace_id="t-batch", question="How long is the free trial?",
                answer="The free trial lasts 14 days [d1].", asked_by=("*",),
                index_release="2026.10", claims=({"key": "trial_days", "value": 14,
                                                  "cite": "d1"},),
                retrieved=(ingest.RetrievedInput("d1", "pricing", "r1", "p1"),)), actor=SYSTEM)
        finally:
            connection.close()

    read_events = integrity._recorded

    def then_the_batch_commits(*args: Any) -> Any:
        seen = read_events(*args)
        go.set()
        thread.join(30)
        return seen

    with mock.patch.object(ingest, "_new_ids", ids_then_wait):
        thread = threading.Thread(target=batch, name="batch")
        thread.start()
        assert taken.wait(30)
        assert submit("t-quick").status_code == 201  # later ids, committed first
        with mock.patch.object(integrity, "_recorded", then_the_batch_commits):
            run = verify()
    assert not thread.is_alive()
    assert run.records_ok, run.records_problems


def test_the_answers_are_checked_a_page_at_a_time_to_the_last(
    answer_story: Callable[..., Any], tamper: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from reviewqueue.reviews import integrity

    monkeypatch.setattr(integrity, "CHUNK", 2)  # five answers: three pages
    stories = [answer_story(f"t-{n}") for n in range(5)]
    with tamper() as cursor:
        cursor.execute("UPDATE reviews_answer SET status = 'rejected' WHERE id IN (%s, %s)",
                       [stories[0].pk, stories[4].pk])

    said = _refused()

    assert "Records CHANGED: 2 problems in 5 answers," in said
    assert "answer t-0: changed after its last audit event (status: rejected" in said
    assert "answer t-4: changed after its last audit event (status: rejected" in said


def test_acknowledging_a_records_alert_says_what_it_was_about(
    answer_story: Callable[..., Any], tamper: Any, admin_client: Any
) -> None:
    """It said "Alert about event #None acknowledged.": the chain was intact, so the alert
    names no event."""
    answer = answer_story("t-story")
    with tamper() as cursor:
        cursor.execute("UPDATE reviews_verdict SET reason = 'supported' WHERE id = %s",
                       [answer.decisions.get().verdict_id])
    _refused()
    alert = AuditAlert.objects.get(problem="records_changed")
    said = {}
    for language in ("en", "ja"):
        AuditAlert.objects.filter(pk=alert.pk).update(acknowledged_at=None)
        response = admin_client.post(f"/audit/alerts/{alert.pk}/acknowledge",
                                     {"back": "/audit/"}, follow=True,
                                     HTTP_ACCEPT_LANGUAGE=language)
        assert response.status_code == 200
        said[language] = [str(m) for m in response.context["messages"]]
    assert said["en"] == ["Alert about changed answers, verdicts, decisions or API tokens "
                          "acknowledged."]
    assert len(said["ja"]) == 1 and "None" not in said["ja"][0] and "Alert" not in said["ja"][0]


@pytest.mark.parametrize("change", [
    # A reviewer of the HR group may read what was held from an asker who may not.
    "UPDATE reviews_answer SET asked_by = array_append(asked_by, 'group:hr') WHERE id = %s",
    "UPDATE reviews_answer SET question = 'Something nobody asked?' WHERE id = %s",
    "UPDATE reviews_answer SET as_of = '2020-01-01' WHERE id = %s",
    "UPDATE reviews_retrieveditem SET revision = 'r9' WHERE answer_id = %s AND cite = 'd2'",
    "DELETE FROM reviews_retrieveditem WHERE answer_id = %s AND cite = 'd2'",
    "UPDATE reviews_answer SET body_digest = repeat('0', 64) WHERE id = %s",
])
def test_an_answer_s_body_changed_in_the_table_fails_the_verification(
    change: str, answer_story: Callable[..., Any], tamper: Any, admin_client: Any
) -> None:
    """Who asked, the question, the day and the citations are what every later verdict is
    computed from (askers widened in the table turn an abstention into a candidate at the
    next re-evaluation): the ingest event records the digest of the body submitted."""
    story = answer_story("t-story")
    answer_story("t-other")
    with tamper() as cursor:
        cursor.execute(change, [story.pk])

    said = _refused()

    assert "Records CHANGED: 1 problem in 2 answers," in said
    assert re.search(r"answer t-story: its body \(question, askers, as_of, index release, "
                     r"citations, or first text and claims\) changed after audit event #\d+ "
                     r"recorded it", said), said
    page = admin_client.get("/audit/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    listed = [re.sub(r"<[^>]+>", "", item) for item in re.findall(
        r"<li>(.*?)</li>", page[page.index('data-testid="records-problems"'):], re.S)][:1]
    assert listed == [
        "Answer t-story: changed after its audit event recorded it (the body submitted: "
        "question, who asked, day, index release, citations, or first text and claims)"]
    timeline = admin_client.get("/audit/answers/t-story/",
                                HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert re.search(r'data-against-log="body">Changed after audit event #\d+ recorded it: its '
                     "question, who asked, its day, index release, citations, or first text "
                     "and claims are not what was submitted.", timeline), timeline
    other = admin_client.get("/audit/answers/t-other/").content.decode()
    assert 'data-against-log="body"' not in other


def test_the_ingest_event_records_the_digest_of_the_body_submitted(
    answer_story: Callable[..., Any], admin_client: Any
) -> None:
    from reviewqueue.audit.models import AuditEvent

    story = answer_story("t-story")
    event = AuditEvent.objects.get(action="answer.ingested", trace_id="t-story")
    assert event.after["body_sha256"] == story.body_digest
    page = admin_client.get("/audit/answers/t-story/", HTTP_ACCEPT_LANGUAGE="en")
    assert "body submitted (SHA-256)" in page.content.decode()


def test_an_answer_ingested_before_its_body_was_recorded_is_not_blamed(
    answer_story: Callable[..., Any], tamper: Any
) -> None:
    """Events from before the digest was recorded hold none: nothing to compare with. The
    chain is rehashed here as if that event had been written so."""
    from reviewqueue.audit.hashing import event_hash, hashed_fields_of
    from reviewqueue.audit.models import AuditEvent

    answer_story("t-story")
    ingested = AuditEvent.objects.get(action="answer.ingested", trace_id="t-story")
    with tamper() as cursor:
        cursor.execute("UPDATE audit_auditevent SET after = after - 'body_sha256' "
                       "WHERE seq = %s", [ingested.seq])
        prev = AuditEvent.objects.get(seq=ingested.seq - 1).hash
        for row in AuditEvent.objects.filter(seq__gte=ingested.seq).order_by("seq").values():
            digest = event_hash(hashed_fields_of(row), prev)
            cursor.execute("UPDATE audit_auditevent SET prev_hash = %s, hash = %s "
                           "WHERE seq = %s", [prev, digest, row["seq"]])
            prev = digest
    run = verify()
    assert run.ok and run.records_ok, run.records_problems
    with tamper() as cursor:
        cursor.execute("UPDATE reviews_answer SET question = 'Changed?' WHERE trace_id = "
                       "'t-story'")
    run = verify()
    assert run.ok and run.records_ok, run.records_problems
