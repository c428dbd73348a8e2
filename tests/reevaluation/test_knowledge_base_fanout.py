"""A change to a document re-evaluates the answers that claim one of its keys, not only those
that cite it: the gate compares a claim with the facts on its key in the whole knowledge base."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection

from reviewqueue.audit.services import SYSTEM
from reviewqueue.jobs.selectors import (
    answer_ids_affected_by_document,
    answer_ids_claiming,
    document_fact_keys,
)
from reviewqueue.reviews.models import Answer, AnswerVersion
from reviewqueue.reviews.services.evaluation import verdict_is_fresh
from reviewqueue.sources.services import document_withdraw
from tests.reevaluation.builders import copy_answers
from tests.reevaluation.conftest import fact

pytestmark = pytest.mark.django_db

# Answers the plan test stores that claim a key other than the published document's (copied
# in SQL: a few seconds).
CLAIMING_OTHER_KEYS = 100_000


def about(value: Any, subject: str, *, key: str = "trial_days") -> dict[str, Any]:
    return {**fact(value, key=key), "subject": subject}


def current(answer: Answer) -> Answer:
    return Answer.objects.select_related("current_verdict", "current_version").get(pk=answer.pk)


def test_a_document_the_answer_does_not_cite_that_now_disagrees_holds_it(
    publish_doc: Any, ingest: Any
) -> None:
    # The claim names no subject, so a value for another subject disagrees with it.
    publish_doc("pricing", "r1", facts=[about(14, "basic")])
    answer = ingest("t-kb")
    assert answer.status == "candidate"
    publish_doc("pricing-pro", "r1", facts=[about(30, "pro")])
    answer = current(answer)
    assert (answer.status, answer.current_verdict.reason) == ("held", "conflicting_sources")
    # Its trigger says the change was not to a document it cites.
    assert answer.current_verdict.trigger == "other_document"
    assert verdict_is_fresh(answer, answer.current_verdict)


def test_two_other_documents_starting_to_disagree_hold_an_answer_that_claims_the_key(
    publish_doc: Any, ingest: Any
) -> None:
    publish_doc("pricing", "r1", facts=[fact(5, key="seats")])
    publish_doc("pricing-a", "r1", facts=[fact(14)])
    answer = ingest("t-none")
    assert answer.status == "abstained"
    publish_doc("pricing-b", "r1", facts=[fact(30)])
    answer = current(answer)
    assert (answer.status, answer.current_verdict.reason) == ("held", "conflicting_sources")


def test_withdrawing_the_other_side_of_a_conflict_releases_the_answer(
    publish_doc: Any, ingest: Any, on_commit: Any
) -> None:
    publish_doc("pricing", "r1", facts=[about(14, "basic")])
    publish_doc("pricing-pro", "r1", facts=[about(30, "pro")])
    answer = ingest("t-wd")
    assert answer.status == "held"
    with on_commit():
        document_withdraw(document_key="pricing-pro", actor=SYSTEM)
    answer = current(answer)
    assert (answer.status, answer.current_verdict.decision) == ("candidate", "candidate")


def test_an_agreeing_document_leaves_the_held_verdict_fresh(
    publish_doc: Any, ingest: Any
) -> None:
    publish_doc("pricing", "r1", facts=[fact(14)])
    publish_doc("pricing", "r2", facts=[fact(14)])
    answer = ingest("t-agree")  # cites r1, superseded: held
    assert answer.status == "held"
    publish_doc("pricing-copy", "r1", facts=[fact(14)])
    answer = current(answer)
    assert verdict_is_fresh(answer, answer.current_verdict)


def test_a_key_the_new_revision_dropped_still_reaches_the_answers_that_claim_it(
    publish_doc: Any, ingest: Any
) -> None:
    publish_doc("pricing", "r1", facts=[fact(14)])
    publish_doc("pricing-pro", "r1", facts=[about(30, "pro")])
    answer = ingest("t-dropped")
    assert answer.status == "held"
    publish_doc("pricing-pro", "r2", facts=[fact(5, key="seats")])
    assert document_fact_keys("pricing-pro") == ["seats", "trial_days"]
    answer = current(answer)
    assert answer.status == "candidate"


def test_answers_claiming_other_keys_are_left_alone(publish_doc: Any, ingest: Any) -> None:
    publish_doc("pricing", "r1", facts=[fact(14), fact(5, key="seats")])
    trial = ingest("t-trial")
    seats = ingest("t-seats", claims=[{"key": "seats", "value": 5, "cite": "d1"}],
                   text="Five seats [d1].")
    publish_doc("pricing-pro", "r1", facts=[about(30, "pro")])
    assert set(answer_ids_affected_by_document("pricing-pro")) == {trial.pk}
    assert current(seats).current_verdict.trigger == "ingest"


def test_the_claimed_keys_are_found_through_the_claims_index(
    publish_doc: Any, ingest: Any
) -> None:
    # 100,000 answers claiming another key and one in a hundred as many claiming the published
    # document's key, as in `python -m benchmarks.reevaluation_bench`. Below about 40,000
    # versions (8 MB, min_parallel_table_scan_size) the planner considers no parallel scan of
    # them, which is what beat the index.
    publish_doc("pricing", "r1", facts=[fact(14), fact(5, key="seats")])
    template = ingest("t-seats", claims=[{"key": "seats", "value": 5, "cite": "d1"}],
                      text="Five seats [d1].")
    copy_answers(template, CLAIMING_OTHER_KEYS, "seats-")
    publish_doc("pricing-pro", "r1", facts=[about(30, "pro")])
    trial = ingest("t-trial", cites=[("d1", "pricing-pro", "r1")],
                   claims=[{"key": "trial_days", "value": 30, "cite": "d1", "subject": "pro"}],
                   text="Pro trials last 30 days [d1].")
    floor = copy_answers(trial, CLAIMING_OTHER_KEYS // 100, "trial-")
    query = answer_ids_claiming(["trial_days"])
    sql, params = query.query.sql_with_params()
    with connection.cursor() as cursor:
        # The plan the planner chooses on these rows' statistics, nothing forced. Only the
        # versions' table is analyzed here (copy_answers analyzes the answers'): its column
        # statistics go with the test's rollback, its row count in pg_class outlives it, but
        # every other plan test that reads the table analyzes it first. A database-wide
        # ANALYZE would leave the row counts of every table.
        cursor.execute(f'ANALYZE "{AnswerVersion._meta.db_table}"')
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "Bitmap Index Scan on answer_version_claim_keys" in plan, plan
    # Driven from the versions: each is checked against its answer by primary key.
    assert "Seq Scan" not in plan, plan
    copies = Answer.objects.filter(pk__gt=floor, trace_id__startswith="trial-")
    assert list(query) == sorted([trial.pk, *copies.values_list("pk", flat=True)])


def test_only_the_current_version_s_claims_count(publish_doc: Any, ingest: Any) -> None:
    publish_doc("pricing", "r1", facts=[fact(14), fact(5, key="seats")])
    was_trial = ingest("t-was-trial")
    now_trial = ingest("t-now-trial", claims=[{"key": "seats", "value": 5, "cite": "d1"}],
                       text="Five seats [d1].")
    for answer, claims in ((was_trial, [{"key": "seats", "value": 5, "cite": "d1"}]),
                           (now_trial, [{"key": "seats", "value": 5, "cite": "d1"},
                                        {"key": "trial_days", "value": 14, "cite": "d1"}])):
        version = AnswerVersion.objects.create(answer=answer, number=2, text="Edited [d1].",
                                               claims=claims)
        Answer.objects.filter(pk=answer.pk).update(current_version=version)
    assert list(answer_ids_claiming(["trial_days"])) == [now_trial.pk]
    assert list(answer_ids_claiming(["seats", "no-such-key"])) == sorted(
        [was_trial.pk, now_trial.pk])
    assert list(answer_ids_claiming(["no-such-key"])) == []
