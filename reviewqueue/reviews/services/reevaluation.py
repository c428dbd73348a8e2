"""Re-evaluate answers against the revisions that are current now.

`answer_reevaluate` is the one service every trigger ends in (a revision published, a document
withdrawn, a validity boundary, a new gate version, "re-evaluate now", a refused decision).
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from django.db import InterfaceError, OperationalError, connection, transaction

from reviewqueue.audit.services import SYSTEM, WORKER, Actor, audit_record
from reviewqueue.prepared import prepared_cursor
from reviewqueue.reviews.models import Answer, Verdict
from reviewqueue.reviews.services import evaluation
from reviewqueue.reviews.services.evaluation import KbRow, Sources, older_gate
from reviewqueue.reviews.services.transitions import answer_apply_verdict
from reviewqueue.sources.models import Conflict as SourceConflict
from reviewqueue.sources.models import Document, Fact, Revision
from reviewqueue.sources.selectors import (
    CURRENT_FACTS_FROM,
    CurrentDocument,
    received_revisions,
)

log = logging.getLogger(__name__)


def answer_reevaluate(*, answer_id: int, trigger: str, actor: Actor = WORKER,
                      cause: str = "",
                      on_change: Callable[[int], None] | None = None) -> Verdict | None:
    """Gate the answer's current version on the current revisions and today. `cause`: the
    document whose change this follows; for an answer that does not cite it, a new verdict's
    trigger says that another document changed. `on_change` is called with the answer's id
    when it gets a new verdict, in the same transaction: what it writes commits with the verdict.

    Returns the verdict that became current, or None when nothing changed: the fingerprint
    equals the current verdict's, or the answer is gone. Safe to run twice and concurrently:
    the answer row is locked for the whole evaluation, and (version, fingerprint) is unique.
    """
    with transaction.atomic():
        # Lock first, without joins. Had another transaction changed the row while this one
        # waited for the lock, PostgreSQL would re-check only the locked row and return the
        # outer-joined verdict and version as NULL. A fresh read after the lock sees both.
        locked = Answer.objects.select_for_update().filter(pk=answer_id).values_list("pk")
        if not locked.first():
            return None
        answer = Answer.objects.select_related("current_version", "current_verdict").get(
            pk=answer_id
        )
        if answer.current_version is None:
            return None
        # Read the documents only now, under the lock: a revision published after this point
        # queues its own re-evaluation, which waits for this lock and then sees it.
        retrieved = list(answer.retrieved.all())
        if cause and all(r.document_key != cause for r in retrieved):
            trigger = Verdict.Trigger.OTHER_DOCUMENT
        run = evaluation.run_gate(answer=answer, version=answer.current_version,
                                  retrieved=retrieved, as_of=evaluation.gate_day(answer))
        current = answer.current_verdict
        if (current is not None and current.version_id == answer.current_version_id
                and current.fingerprint == run.verdict.fingerprint):
            return None
        if current is not None and older_gate(run.verdict.gate_version, current.gate_version):
            # A rolling deploy: this worker still runs the previous release, and a newer one
            # gave the current verdict. Its verdict would replace (or bring back) one the new
            # gate has judged differently; the answer waits for a worker of the new release.
            raise OlderGate(
                f"this worker runs gate {run.verdict.gate_version}, older than gate "
                f"{current.gate_version} of the answer's current verdict: send it again once "
                "every worker runs the new release")
        verdict, _ = evaluation.store_verdict(answer=answer, version=answer.current_version,
                                              run=run, trigger=trigger)
        old_status = answer.status
        new_status = answer_apply_verdict(answer=answer, verdict=verdict, actor=actor,
                                          cause=trigger)
        record_cleared(answer=answer, old_status=old_status, new_status=new_status,
                       verdict=verdict, trigger=trigger, actor=actor)
        if on_change is not None:
            on_change(answer_id)
        return verdict


class OlderGate(Exception):
    """The answer's current verdict comes from a newer gate than this process runs."""


def record_cleared(*, answer: Answer, old_status: str, new_status: str, verdict: Verdict,
                   trigger: str, actor: Actor) -> None:
    """A fresh verdict took the answer out of the queue without a reviewer's decision: say so
    in the log in plain terms. Every path that applies a re-evaluated verdict calls this (a
    trigger, or a decision refused on a stale verdict)."""
    if old_status != Answer.Status.HELD or new_status == Answer.Status.HELD:
        return
    audit_record(
        actor=actor,
        action="review_item.cleared",
        object_type="answer",
        object_id=answer.trace_id,
        trace_id=answer.trace_id,
        before={"status": old_status},
        after={"status": new_status, "by": "reevaluation", "trigger": trigger,
               "verdict": verdict.pk, "decision": verdict.decision,
               "reason": verdict.reason},
    )


class OutOfTime(Exception):
    """A batch of re-evaluations stopped at its deadline, between two answers."""


@dataclass
class BatchOutcome:
    """What happened to a batch of answers: `done_ids` re-evaluated (changed or not),
    `changed_ids` of those got a new verdict, `errors` could not be re-evaluated."""

    done_ids: list[int] = field(default_factory=list)
    changed_ids: list[int] = field(default_factory=list)
    errors: list[tuple[int, Exception]] = field(default_factory=list)

    @property
    def done(self) -> int:
        return len(self.done_ids)

    @property
    def changed(self) -> int:
        return len(self.changed_ids)


def answers_reevaluate(
    *,
    answer_ids: Iterable[int],
    trigger: str,
    actor: Actor = WORKER,
    cause: str = "",
    reraise: tuple[type[BaseException], ...] = (OperationalError, InterfaceError),
    deadline: float | None = None,
    on_change: Callable[[int], None] | None = None,
) -> BatchOutcome:
    """Re-evaluate each answer in its own transaction.

    An error in one answer is recorded and the batch goes on; errors of the `reraise` kinds
    (a lost database connection, a time limit) stop the batch so the caller can retry it as a
    whole, which is harmless for the answers already done. The error carries how far the batch
    got, as `error.batch_outcome`: a time limit must not count the answers done before it as
    failed. Past `deadline` (time.monotonic()), the batch stops between two answers, after
    one at least, with `OutOfTime`: stopped there, rather than by a time limit raised in the
    middle of a query, it leaves its connection sound. `on_change`: see `answer_reevaluate`.
    """
    outcome = BatchOutcome()
    for answer_id in answer_ids:
        if (deadline is not None and (outcome.done_ids or outcome.errors)
                and time.monotonic() > deadline):
            stop = OutOfTime("the chunk ran out of time between two answers")
            stop.batch_outcome = outcome  # type: ignore[attr-defined]
            raise stop
        try:
            verdict = answer_reevaluate(answer_id=answer_id, trigger=trigger, actor=actor,
                                        cause=cause, on_change=on_change)
        except reraise as exc:
            exc.batch_outcome = outcome  # type: ignore[attr-defined]
            raise
        except Exception as exc:
            outcome.errors.append((answer_id, exc))
            continue
        outcome.done_ids.append(answer_id)
        if verdict is not None:
            outcome.changed_ids.append(answer_id)
    return outcome


# --- After an ingest or an edit commits -----------------------------------------------------

def catch_up_on_commit(sources: Sources, citing: dict[str, list[int]],
                       claiming: dict[str, list[int]]) -> None:
    """Once the caller's transaction commits, re-evaluate the answers whose sources changed
    since the gate read `sources` for them (see _catch_up): `citing` maps each cited document,
    `claiming` each claimed key, to the answers the gate ran for. Ingest and edits call it."""
    seen = {key: _state(sources.documents.get(key)) for key in citing}
    kb_seen = {key: _kb_state(sources.kb.get(key, ())) for key in claiming}
    unreceived = sources.unreceived
    # robust: should the hand-over fail too (the broker is down as well), the request that
    # committed the answers still gets its reply; the failure is logged.
    transaction.on_commit(lambda: _catch_up_or_hand_over(seen, citing, kb_seen, claiming,
                                                         unreceived), robust=True)


def _catch_up_or_hand_over(seen: dict[str, tuple[int | None, bool]],
                           citing: dict[str, list[int]], kb_seen: dict[str, _KbState],
                           claiming: dict[str, list[int]],
                           unreceived: frozenset[tuple[str, str]]) -> None:
    """`_catch_up`, or, when it fails (the database dropped the connection a moment after the
    commit), the same check handed to a worker, which retries it. The answers are committed:
    the request must not fail for it, and nothing else would ever look at them again, left on
    a verdict of the revision a publish replaced while they were gated."""
    try:
        _catch_up(seen, citing, kb_seen, claiming, unreceived)
    except Exception as exc:
        from reviewqueue.reviews.tasks import catch_up_after_commit

        log.warning("catch-up after commit handed to a worker", extra={
            "error": type(exc).__name__,
            "answers": len({i for ids in (*citing.values(), *claiming.values()) for i in ids})})
        catch_up_after_commit.delay(
            seen={key: list(state) for key, state in seen.items()}, citing=citing,
            kb_seen={key: [[*where, count] for where, count in state]
                     for key, state in kb_seen.items()},
            claiming=claiming, unreceived=[list(pair) for pair in unreceived])


def catch_up_handed_over(*, seen: dict[str, list[Any]], citing: dict[str, list[int]],
                         kb_seen: dict[str, list[list[Any]]], claiming: dict[str, list[int]],
                         unreceived: list[list[str]]) -> None:
    """The check `_catch_up_or_hand_over` handed to a worker, read back from its message."""
    _catch_up({key: (state[0], state[1]) for key, state in seen.items()}, citing,
              {key: frozenset(((d, r, s), n) for d, r, s, n in state)
               for key, state in kb_seen.items()},
              claiming, frozenset((d, r) for d, r in unreceived))


def _state(document: CurrentDocument | None) -> tuple[int | None, bool]:
    return (None, False) if document is None else (document.revision_id,
                                                   document.withdrawn_at is not None)


# What identifies the knowledge-base facts on one key: how many facts each document's current
# revision states on each subject. Revisions are immutable, so a fact's value can only change
# with a new revision; a dismissed conflict hides its (subject, key) from the gate, all but
# the facts it kept as exceptions, which may be some of one revision's facts on it.
_KbState = frozenset[tuple[tuple[str, str, str], int]]


def _kb_state(rows: Iterable[KbRow]) -> _KbState:
    return frozenset(Counter((row.document, row.revision, row.fact.subject or "")
                             for row in rows).items())


# Once the answers are committed, in one statement: each cited document's current revision and
# whether it is withdrawn, and every fact of a current revision on the claimed keys, apart from
# those of a dismissed conflict (as `current_facts_on` selects them, which is what the gate
# read). The first column tells the two kinds of row apart.
_SINCE_SQL = """
SELECT 'cited', d.key, d.current_revision_id, d.withdrawn_at IS NOT NULL, NULL, NULL, NULL
FROM {document} d
WHERE d.key = ANY(%s)
UNION ALL
SELECT 'kb', d.key, NULL, NULL, f.key, r.revision, f.subject""" + CURRENT_FACTS_FROM


@cache
def _since_sql() -> str:
    return _SINCE_SQL.format(**{
        name: connection.ops.quote_name(model._meta.db_table)
        for name, model in (("document", Document), ("revision", Revision), ("fact", Fact),
                            ("conflict", SourceConflict))})


def _sources_now(documents: Iterable[str], keys: Iterable[str]
                 ) -> tuple[dict[str, tuple[int | None, bool]], dict[str, _KbState]]:
    """The cited documents' states and the knowledge base's state on `keys` (1 query)."""
    states: dict[str, tuple[int | None, bool]] = {}
    kb: dict[str, Counter[tuple[str, str, str]]] = {}
    with prepared_cursor() as cursor:
        cursor.execute(_since_sql(), [sorted(set(documents)), sorted(set(keys)),
                                      SourceConflict.Status.DISMISSED.value])
        for kind, document, revision_id, withdrawn, key, revision, subject in cursor:
            if kind == "cited":
                states[document] = (revision_id, withdrawn)
            else:
                kb.setdefault(key, Counter())[(document, revision, subject)] += 1
    return states, {key: frozenset(rows.items()) for key, rows in kb.items()}


def _catch_up(seen: dict[str, tuple[int | None, bool]], citing: dict[str, list[int]],
              kb_seen: dict[str, _KbState], claiming: dict[str, list[int]],
              unreceived: frozenset[tuple[str, str]] = frozenset()) -> None:
    """Once the answers are committed, re-evaluate those whose sources changed since the gate
    read them: a cited document, a cited revision the store had not received (delivered late,
    it is not current but is what the answer quotes), or the knowledge-base facts on a key
    they claim. A publish, withdrawal or dismissal in between started its job at its own
    commit, when these answers could not be seen yet: without this they would keep a verdict
    on what the store said before. Compared per claimed key, not per document read, so that a
    document carrying the key for the first time counts too. One query when nothing changed
    (two when a cited revision was missing)."""
    documents, facts = _sources_now(seen, claiming)
    ids = {answer_id for key, state in seen.items() if documents.get(key, (None, False)) != state
           for answer_id in citing.get(key, ())}
    # Every answer citing the document is taken, whichever revision it cites: cheap, and the
    # verdict of one that cites another comes out unchanged.
    ids.update(answer_id for key, _ in received_revisions(unreceived)
               for answer_id in citing.get(key, ()))
    # A claim whose subject differs from a changed fact's is re-evaluated all the same: cheap,
    # and the verdict comes out unchanged.
    ids.update(answer_id for key, answers in claiming.items()
               if facts.get(key, frozenset()) != kb_seen.get(key, frozenset())
               for answer_id in answers)
    if ids:
        from reviewqueue.jobs.services import job_start_for_answers

        with transaction.atomic():
            job_start_for_answers(ids, Verdict.Trigger.REVISION, None, actor=SYSTEM)
