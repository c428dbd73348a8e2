"""Fast test data: many stored answers, each a copy of one answer that went through ingest.

Copies are made in SQL (INSERT ... SELECT over generate_series), so 100,000 answers take
seconds. Every copy has the template's text, claims, retrieved items and verdict (the gate's
fingerprint does not depend on the trace id), so re-evaluating an unchanged copy is a no-op
exactly as it would be for an ingested answer. Copies get no audit events.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db import connection, models, transaction
from django.utils import timezone

from reviewqueue.audit.services import SYSTEM
from reviewqueue.jobs.models import Job, JobChunk
from reviewqueue.reviews.models import Answer, AnswerVersion, RetrievedItem, Verdict
from reviewqueue.reviews.services.ingest import AnswerInput, RetrievedInput, answer_ingest


def ingest(
    trace_id: str,
    *,
    cites: list[tuple[str, str, str]] | None = None,
    claims: list[dict[str, Any]] | None = None,
    text: str = "The free trial lasts 14 days [d1].",
    asked_by: tuple[str, ...] = ("user:customer-7",),
) -> Answer:
    """Submit one answer through the ingest service, gated on today's date."""
    cites = cites if cites is not None else [("d1", "pricing", "r1")]
    data = AnswerInput(
        trace_id=trace_id,
        question="How long is the free trial?",
        answer=text,
        asked_by=asked_by,
        index_release="2026.11",
        retrieved=tuple(RetrievedInput(c, d, r, "p1") for c, d, r in cites),
        claims=tuple(claims if claims is not None
                     else [{"key": "trial_days", "value": 14, "cite": "d1"}]),
    )
    return answer_ingest(data=data, actor=SYSTEM).answer


def _columns(model: type[models.Model]) -> list[str]:
    # Generated columns are computed by PostgreSQL from the copied ones.
    return [f.column for f in model._meta.concrete_fields if not f.primary_key and not f.generated]


def _copy_sql(model: type[models.Model], overrides: dict[str, str], source_alias: str,
              from_clause: str) -> str:
    columns = _columns(model)
    values = [overrides.get(c, f'{source_alias}."{c}"') for c in columns]
    names = ", ".join(f'"{c}"' for c in columns)
    return (f'INSERT INTO "{model._meta.db_table}" ({names}) '
            f'SELECT {", ".join(values)} FROM {from_clause}')


@transaction.atomic
def copy_answers(template: Answer, count: int, prefix: str) -> int:
    """Store `count` copies of `template`, with trace ids `<prefix><n>`. Returns the largest
    answer id before the copies: they are the answers above it whose trace id has the prefix."""
    answer_t = Answer._meta.db_table
    version_t = AnswerVersion._meta.db_table
    verdict_t = Verdict._meta.db_table
    retrieved_t = RetrievedItem._meta.db_table
    like = prefix.replace("%", r"\%").replace("_", r"\_") + "%"
    with connection.cursor() as cursor:
        cursor.execute(f'SELECT COALESCE(MAX(id), 0) FROM "{answer_t}"')
        floor = int(cursor.fetchone()[0])
        copies = f'"{answer_t}" a WHERE a.id > {floor} AND a.trace_id LIKE %s'
        cursor.execute(
            _copy_sql(Answer, {"trace_id": "%s || g", "current_version_id": "NULL",
                               "current_verdict_id": "NULL", "created_at": "now()"},
                      "t", f'"{answer_t}" t, generate_series(1, %s) g WHERE t.id = %s'),
            [prefix, count, template.pk],
        )
        cursor.execute(
            _copy_sql(AnswerVersion, {"answer_id": "a.id", "created_at": "now()"}, "v",
                      f'"{version_t}" v, {copies} AND v.id = %s'),
            [like, template.current_version_id],
        )
        cursor.execute(
            _copy_sql(RetrievedItem, {"answer_id": "a.id"}, "r",
                      f'"{retrieved_t}" r, {copies} AND r.answer_id = %s'),
            [like, template.pk],
        )
        cursor.execute(
            _copy_sql(Verdict, {"answer_id": "a.id", "version_id": "nv.id",
                                "created_at": "now()"}, "t",
                      f'"{verdict_t}" t, "{answer_t}" a '
                      f'JOIN "{version_t}" nv ON nv.answer_id = a.id '
                      f"WHERE a.id > {floor} AND a.trace_id LIKE %s AND t.id = %s"),
            [like, template.current_verdict_id],
        )
        cursor.execute(
            f'UPDATE "{answer_t}" a SET current_version_id = nv.id, current_verdict_id = vd.id '
            f'FROM "{version_t}" nv, "{verdict_t}" vd '
            "WHERE nv.answer_id = a.id AND vd.answer_id = a.id AND a.id > %s "
            "AND a.trace_id LIKE %s",
            [floor, like],
        )
        cursor.execute(f'ANALYZE "{answer_t}"')
    return floor


def job_with_one_chunk(answer_ids: list[int], *, sent_ago: timedelta) -> Job:
    """A running job ("every answer") whose one chunk holds `answer_ids`, sent `sent_ago`."""
    job = Job.objects.create(scope=Job.Scope.ALL, trigger="manual", state=Job.State.RUNNING,
                             total=len(answer_ids), actor_type="system", actor="system")
    JobChunk.objects.create(job=job, number=0, answer_ids=answer_ids,
                            enqueued_at=timezone.now() - sent_ago)
    return job
