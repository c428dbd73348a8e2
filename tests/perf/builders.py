"""A backlog built in SQL: many held answers, spread like a real queue.

`copy_answers` (tests/reevaluation/builders.py) stores copies of one ingested answer; `spread`
then gives the copies their own cited documents, index releases and statuses, and queues the
held ones with a primary reason, an entry time and, for a few, a colleague's lease. 100,000
answers take seconds. Used by tests/perf and benchmarks/queue_bench.py.
"""

from __future__ import annotations

from django.db import connection, transaction

from reviewqueue.reviews.models import Answer, OwnerQuestion, RetrievedItem, ReviewItem
from tests.reevaluation.builders import copy_answers

# Primary reasons a review verdict gives, with the share of the backlog each holds (percent).
REASON_SHARES = (("conflicting_sources", 40), ("superseded_revision", 25),
                 ("noncurrent_citation", 15), ("invalid_metadata", 10), ("supported", 10))


def public_document(n: int) -> str:
    return f"kb-{n:02d}"


def hr_document(n: int) -> str:
    return f"hr-{n}"


@transaction.atomic
def held_copies(template: Answer, count: int, prefix: str, *, public_documents: int = 40,
                hr_documents: int = 5, releases: int = 6, held_every: int = 1,
                lessee_id: int | None = None) -> None:
    """`count` copies of `template`; one in `held_every` is held and queued, the rest are
    candidates. Every copy cites two public documents (`kb-NN`), except one in twenty whose
    second citation is an HR-only document (`hr-N`), which hides it from anyone outside hr.
    One queued item in fifty is leased to `lessee_id` for ten more minutes."""
    floor = copy_answers(template, count, prefix)
    answers, retrieved = Answer._meta.db_table, RetrievedItem._meta.db_table
    items, questions = ReviewItem._meta.db_table, OwnerQuestion._meta.db_table
    cases, bound = [], 0
    for reason, share in REASON_SHARES:
        bound += share
        cases.append(f"WHEN (a.id * 37) %% 100 < {bound} THEN '{reason}'")
    reason = "CASE " + " ".join(cases) + " END"
    with connection.cursor() as cursor:
        cursor.execute("SELECT setseed(0.42)")
        # Retrieved items are append-only: the copies' documents are set with the triggers
        # off for this statement (the copies were made a moment ago, by this builder).
        cursor.execute("SET LOCAL session_replication_role = replica")
        cursor.execute(
            f'UPDATE "{retrieved}" r SET document_key = CASE '
            "WHEN r.cite <> 'd1' AND r.answer_id %% 20 = 0 "
            f"THEN 'hr-' || ((r.answer_id / 20) %% {hr_documents}) "
            "ELSE 'kb-' || lpad(((r.answer_id * 7 + CASE WHEN r.cite = 'd1' THEN 0 ELSE 13 "
            f"END) %% {public_documents})::text, 2, '0') END "
            "WHERE r.answer_id > %s",
            [floor],
        )
        cursor.execute("SET LOCAL session_replication_role = origin")
        cursor.execute(
            f'UPDATE "{answers}" SET index_release = %s || lpad((id %% {releases} + 1)::text, '
            "2, '0'), status = CASE WHEN id %% %s = 0 THEN 'held' ELSE 'candidate' END "
            "WHERE id > %s",
            ["2026.", held_every, floor],
        )
        cursor.execute(
            f'INSERT INTO "{items}" (answer_id, entered_at, primary_reason, reasons, '
            "index_release, leased_by_id, lease_until, audit_sample, waiting_for_owner, "
            "owner_question_id, earlier_approval_id) "
            f"SELECT a.id, now() - random() * interval '30 days', {reason}, "
            f"ARRAY[{reason}]::varchar[], a.index_release, "
            "CASE WHEN a.id %% 50 = 0 THEN %s::integer END, "
            "CASE WHEN a.id %% 50 = 0 AND %s::integer IS NOT NULL "
            "THEN now() + interval '10 minutes' END, "
            f"{reason} = 'supported', false, NULL, NULL "
            f"FROM \"{answers}\" a WHERE a.id > %s AND a.status = 'held'",
            [lessee_id, lessee_id, floor],
        )
        # One in 97 waits for the owners, on a question of its own.
        cursor.execute(
            f'WITH asked AS (INSERT INTO "{questions}" (answer_id, asked_at, note, reply, '
            "owners) "
            f"SELECT answer_id, entered_at, 'Which value applies?', '', '{{}}' FROM \"{items}\" "
            "WHERE answer_id > %s AND answer_id %% 97 = 0 RETURNING id, answer_id) "
            f'UPDATE "{items}" AS item SET waiting_for_owner = true, owner_question_id = asked.id '
            "FROM asked WHERE item.answer_id = asked.answer_id",
            [floor],
        )
        # One in 89 was sent to the owners and has their reply: it waits for a reviewer again.
        cursor.execute(
            f'WITH asked AS (INSERT INTO "{questions}" (answer_id, asked_at, note, replied_at, '
            "reply, owners) "
            f"SELECT answer_id, entered_at, 'Which value applies?', entered_at, 'The first.', "
            "'{}' "
            f'FROM "{items}" WHERE answer_id > %s AND answer_id %% 89 = 0 '
            "AND NOT waiting_for_owner RETURNING id, answer_id) "
            f'UPDATE "{items}" AS item SET owner_question_id = asked.id '
            "FROM asked WHERE item.answer_id = asked.answer_id",
            [floor],
        )
        cursor.execute("ANALYZE")
