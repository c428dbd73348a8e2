"""Whether each verdict and each decision is still the row its audit event recorded, each
answer still where its last event left it and still the body its ingest event recorded, and
each API token still what the events that issued and revoked it recorded.

Verdicts and decisions have no hash of their own, and PostgreSQL refuses to update or delete
them; someone with the database's own rights can still do either, or insert a row that no
event recorded (an approval nobody made). The chained event that recorded each row holds the
fields the answer's timeline checks: every row is checked against it here, for the whole
store, as the sources are against the events that published them (sources/integrity.py)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple, cast

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import DecimalField, Model, Q
from django.db.models.expressions import RawSQL

from reviewqueue.accounts.models import ApiToken
from reviewqueue.audit.chain import plural
from reviewqueue.audit.hashing import HASHED_FIELDS, content_sha256, event_hash, hashed_fields_of
from reviewqueue.audit.models import AuditEvent
from reviewqueue.audit.selectors import (
    against_log,
    decision_as_logged,
    logged_rows,
    verdict_as_logged,
)
from reviewqueue.reviews.models import (
    Answer,
    AnswerVersion,
    Decision,
    OwnerQuestion,
    RetrievedItem,
    Verdict,
    body_sha256,
)
from reviewqueue.snapshot import in_one_snapshot

CHUNK = 2000


@dataclass(frozen=True)
class RecordProblem:
    """One row that differs: an "answer", a "verdict", a "decision", an owner's "reply" or a
    reviewer's "question" to the owners (`kind`; a reply by its question's id) by its id, and
    its answer's trace_id; `code` is "unrecorded" (no event recorded it), "changed" (`fields`
    differ from what its event recorded, "answer" when it now belongs to another answer; of an
    answer, "status" or "current_verdict" as its last event left them, or "current_version" not
    the one its current verdict judged) or "missing" (an event
    recorded it, and it is gone from its table); `detail` is the sentence verify_audit
    prints."""

    kind: str
    id: int
    trace_id: str
    code: str
    detail: str
    fields: tuple[str, ...] = ()
    # A digest of what the row holds now, where it differs: a second change to a row already
    # reported changes the findings, and so raises a new alert (the chain's findings carry the
    # recomputed hash for the same reason).
    evidence: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "id": self.id, "trace_id": self.trace_id, "code": self.code,
                "detail": self.detail, "fields": list(self.fields), "evidence": self.evidence}


# A check keeps the first this many problems (what a verification run stores) and counts the
# rest: its memory stays flat even when every row differs.
PROBLEMS_KEPT = 100


@dataclass
class RecordsCheck:
    answers: int = 0
    verdicts: int = 0
    decisions: int = 0
    tokens: int = 0
    problem_count: int = 0
    problems: list[RecordProblem] = field(default_factory=list)
    # The chain check found every event matching its hash: none is read again (see `found`).
    log_intact: bool = False

    def found(self, problem: RecordProblem | None, recorded_by: Q) -> None:
        """Count `problem` unless one of the events that recorded its row (`recorded_by`)
        no longer matches its own hash: a row whose event the chain check found edited is
        left to that finding, since the event, not the row, is what changed. For a row no
        event names, those are all the events of its answer: an edited one may now name
        another row, or none."""
        if problem is None or not (self.log_intact or _intact(recorded_by)):
            return
        self.problem_count += 1
        if len(self.problems) < PROBLEMS_KEPT:
            self.problems.append(problem)


# An event names the row it recorded in `after` ("verdict" or "decision"); logged_rows takes a
# JSON whole number (or, as Python reads JSON, true and false: 1 and 0) for an id. PostgreSQL
# orders the events by that same value, so that both sides can be read in id order and matched
# as they come: neither is ever held whole.
_ID_OF = ("CASE jsonb_typeof({after} -> %s) WHEN 'number' THEN ({after} ->> %s)::numeric "
          "WHEN 'boolean' THEN (({after} -> %s) = 'true'::jsonb)::int END")


def _events_by(name: str, actions: Q) -> Any:
    """The events of `actions`, in the order of the row id they name in after[`name`], then
    in the chain's order; events that name none are left out."""
    after = f'"{AuditEvent._meta.db_table}"."after"'
    key = RawSQL(_ID_OF.format(after=after), (name, name, name), output_field=DecimalField())
    return (AuditEvent.objects.filter(actions).annotate(row_id=key)
            .filter(row_id__isnull=False).order_by("row_id", "seq")
            .values_list("seq", "action", "before", "after", "trace_id", named=True)
            .iterator(chunk_size=CHUNK))


class _Logged(NamedTuple):
    """What an event recorded of a row, and which event, for which answer."""

    pk: int
    fields: dict[str, Any]
    seq: int
    trace_id: str


def _logged(events: Iterator[Any], kind: str) -> Iterator[_Logged]:
    """What the events recorded of each row, in id order, once per id: of a verdict the first
    event to name it (the one that made it), of a decision the last, as logged_rows reads
    a whole answer's events. An event edited since tells what it says now (see `_intact`)."""
    first = kind == "verdict"
    current: _Logged | None = None
    for event in events:
        of_verdicts, of_decisions = logged_rows([event], {})
        for pk, logged in (of_verdicts if first else of_decisions).items():
            if current is not None and current.pk == pk:
                if not first:
                    current = _Logged(pk, logged, event.seq, event.trace_id)
                continue
            if current is not None:
                yield current
            current = _Logged(pk, logged, event.seq, event.trace_id)
    if current is not None:
        yield current


class _Stream:
    """One side of the merge: what the events recorded, read on demand in row id order. The
    rows recorded that the table no longer holds are passed to `gone`."""

    def __init__(self, pairs: Iterator[_Logged], gone: Callable[[_Logged], None]) -> None:
        self._pairs = pairs
        self._gone = gone
        self._next = next(pairs, None)  # runs the query now

    def logged(self, pk: int) -> _Logged | None:
        """What the event recorded of row `pk`; asked in increasing pk order, with every row
        of the table up to the last asked for."""
        while self._next is not None and self._next.pk < pk:
            self._gone(self._next)  # the table holds no such row
            self._next = next(self._pairs, None)
        found = self._next
        if found is None or found.pk != pk:
            return None
        self._next = next(self._pairs, None)
        return found

    def rest(self, model: type[Model]) -> None:
        """The rows recorded past the last asked for: gone unless saved since the table was
        read (a row and its event commit together), which `model`'s table is asked for."""
        while self._next is not None:
            batch: list[_Logged] = []
            while self._next is not None and len(batch) < CHUNK:
                batch.append(self._next)
                self._next = next(self._pairs, None)
            there = set(model._default_manager.filter(pk__in=[b.pk for b in batch])
                        .values_list("pk", flat=True))
            for logged in batch:
                if logged.pk not in there:
                    self._gone(logged)


def _recorded(check: RecordsCheck) -> tuple[_Stream, _Stream]:
    """What the events recorded of the verdicts and of the decisions, each read in row id
    order (both queries run before this returns)."""
    verdict_events = (Q(action__in=("answer.ingested", "verdict.created"))
                      | Q(action__startswith="decision."))

    def gone(kind: str) -> Callable[[_Logged], None]:
        return lambda logged: check.found(_missing(kind, logged), Q(seq=logged.seq))

    return (_Stream(_logged(_events_by("verdict", verdict_events), "verdict"),
                    gone("verdict")),
            _Stream(_logged(_events_by("decision", Q(action__startswith="decision.")),
                            "decision"), gone("decision")))


class _VersionRow(NamedTuple):  # what verdict_as_logged reads of a verdict's version
    text: str
    claims: Any

    def content_sha256(self) -> str:
        return AnswerVersion.content_sha256(cast(Any, self))  # the model's own, on this row


class _VerdictRow(NamedTuple):  # what verdict_as_logged reads of a Verdict
    decision: str
    reason: str
    revisions_used: Any
    version_id: int
    reasons: Any
    findings: Any
    warnings: Any
    fingerprint: str
    gate_version: str
    as_of: Any
    next_boundary: Any
    trigger: str
    version: _VersionRow

    def content_sha256(self) -> str:
        return Verdict.content_sha256(cast(Any, self))  # the model's own, on this row


_VERDICT_COLUMNS = ("decision", "reason", "revisions_used", "version_id", "reasons", "findings",
                    "warnings", "fingerprint", "gate_version", "as_of", "next_boundary",
                    "trigger")


class _Reviewer(NamedTuple):
    username: str

    def get_username(self) -> str:
        return self.username


class _DecisionRow(NamedTuple):  # what decision_as_logged reads of a Decision
    action: str
    reviewer: _Reviewer
    verdict_id: int
    reject_reason: str
    comment: str
    read_passages: Any
    revisions_used: Any
    version_id: int
    new_version_id: int | None

    def comment_sha256(self) -> str | None:
        return Decision.comment_sha256(cast(Any, self))  # the model's own, on this row


# The fields an event records as digests, as verify_audit names them.
_SAID = {"verdict_sha256": "findings, warnings, fingerprint or revisions used",
         "version_sha256": "text or claims of the version judged"}


def _problem(kind: str, pk: int, trace_id: str, stored: dict[str, Any],
             logged: _Logged | None) -> RecordProblem | None:
    name = f"{kind} #{pk} of answer {trace_id}"
    if logged is None:
        return RecordProblem(kind, pk, trace_id, "unrecorded", (
            f"{name}: no audit event recorded it (not made through ReviewQueue, or its event "
            "was taken out of the log)"), evidence=content_sha256(stored))
    changed = against_log(stored, logged.fields) or []
    moved = logged.trace_id and logged.trace_id != trace_id
    if moved:
        changed.insert(0, "answer")
    if not changed:
        return None
    said = ", ".join(f"answer: recorded for {logged.trace_id}" if f == "answer"
                     else _SAID.get(f, f) for f in changed)
    return RecordProblem(kind, pk, trace_id, "changed", (
        f"{name}: changed after its audit event recorded it ({said})"), tuple(changed),
        content_sha256(stored))


def _intact(events: Q) -> bool:
    """Whether every event of `events` still matches its own hash: a row that differs from
    them is blamed only then. One query, for a row that differs (rare: a tampered store)."""
    return all(event_hash(hashed_fields_of(event), event["prev_hash"]) == event["hash"]
               for event in AuditEvent.objects.filter(events)
               .values(*HASHED_FIELDS, "prev_hash", "hash").iterator(chunk_size=CHUNK))


def _of_answer(trace_id: str) -> Q:
    """Every event of answer `trace_id`: those that recorded a row of it no event names now,
    if one was edited since (see RecordsCheck.found)."""
    if not trace_id:  # an event edited to name no answer: no other event is of it
        return Q(pk__in=[])
    return Q(trace_id=trace_id) | Q(object_type="answer", object_id=trace_id)


def _recorded_by(trace_id: str, seq: int | None) -> Q:
    """The event that recorded a row of answer `trace_id` (`seq`), or, when none names it,
    every event of that answer."""
    return _of_answer(trace_id) if seq is None else Q(seq=seq)


def _missing(kind: str, logged: _Logged) -> RecordProblem:
    return RecordProblem(kind, logged.pk, logged.trace_id, "missing", (
        f"{kind} #{logged.pk} of answer {logged.trace_id}: audit event #{logged.seq} recorded "
        "it, and it is no longer in its table (deleted)"))


# Each answer with the last event that set its status (ingest, a new verdict, a decision, or
# a verdict that took it out of the queue: each records the status and the verdict the answer
# then rested on) and the version its current verdict judged, a page of answers at a time in
# id order. One statement a page, so the row and its events are read in one snapshot: a status
# and its event commit together. The page is taken first, by walking the primary key from the
# last id read: with the range bounded on both sides PostgreSQL read and sorted every answer
# left for each page when the table's statistics were stale (quadratic: 100,000 answers took
# 15 s).
#
# With it, the answer's ingest event: the digest of the body submitted, which events from
# before it was recorded do not hold (the body is read by `_submitted`: with the question and
# askers in this page, PostgreSQL read the whole table and sorted it for each page).
_ANSWERS_SQL = """
SELECT a.id, a.trace_id, a.status, a.current_verdict_id, e.seq, e.after -> 'status',
       e.after -> 'verdict', a.current_version_id, v.version_id,
       i.seq, i.after ->> 'body_sha256'
FROM (
    SELECT id, trace_id, status, current_verdict_id, current_version_id FROM {answer}
    WHERE id > %s ORDER BY id LIMIT %s
) a
LEFT JOIN {verdict} v ON v.id = a.current_verdict_id
LEFT JOIN LATERAL (
    SELECT seq, after FROM {event}
    WHERE object_type = 'answer' AND object_id = a.trace_id AND after ? 'status'
    ORDER BY seq DESC LIMIT 1
) e ON true
LEFT JOIN LATERAL (
    SELECT seq, after FROM {event}
    WHERE object_type = 'answer' AND object_id = a.trace_id AND action = 'answer.ingested'
    ORDER BY seq LIMIT 1
) i ON true
WHERE a.id <= %s
ORDER BY a.id"""


class _AnswerRow(NamedTuple):  # what Answer.submitted_body reads of an Answer
    trace_id: str
    question: str
    asked_by: list[str]
    index_release: str
    as_of: Any


def _submitted(after: int, last: int) -> dict[int, tuple[str, str]]:
    """Of the answers with ids in (after, last]: the digest of the body each one's row, first
    version and retrieved items give now, and the digest its row stores. Three queries, each
    a range of an index on the answer's id (a list of a page's ids took PostgreSQL three
    times as long)."""
    versions = {answer: (text, claims) for answer, text, claims in AnswerVersion.objects.filter(
        answer_id__gt=after, answer_id__lte=last, number=1)
        .values_list("answer_id", "text", "claims")}
    items: dict[int, list[Any]] = {}
    for answer, *item in (RetrievedItem.objects.filter(answer_id__gt=after, answer_id__lte=last)
                          .order_by("pk")
                          .values_list("answer_id", "cite", "document_key", "revision", "span")):
        items.setdefault(answer, []).append(item)
    digests = {}
    for pk, stored, *fields in (Answer.objects.filter(pk__gt=after, pk__lte=last).values_list(
            "pk", "body_digest", "trace_id", "question", "asked_by", "index_release", "as_of")):
        text, claims = versions.get(pk, ("", []))
        now = body_sha256(Answer.submitted_body(cast(Any, _AnswerRow(*fields)), text, claims,
                                                items.get(pk, [])))
        digests[pk] = (now, stored)
    return digests


def _answers_against_log(check: RecordsCheck, last: int) -> None:
    """Every answer up to id `last` against the last event that set its status: an answer
    moved to another status in the table (a rejection turned into an approval), pointed at
    another verdict or at a version its verdict did not judge, or one no event recorded, is a
    problem. Its status and current version are what the service is told. So is one whose
    body no longer gives the digest its ingest event recorded (`_body_problem`)."""
    sql = _ANSWERS_SQL.format(answer=Answer._meta.db_table, verdict=Verdict._meta.db_table,
                              event=AuditEvent._meta.db_table)
    after = 0
    with connection.cursor() as cursor:
        while True:
            cursor.execute(sql, [after, CHUNK, last])
            rows = cursor.fetchall()
            bodies = _submitted(after, rows[-1][0]) if rows else {}
            for (pk, trace_id, status, verdict_id, seq, logged_status, logged_verdict,
                 version_id, judged_id, ingest_seq, logged_body) in rows:
                check.answers += 1
                check.found(_answer_problem(pk, trace_id, status, verdict_id, seq,
                                            _json(logged_status), _json(logged_verdict),
                                            version_id, judged_id),
                            _recorded_by(trace_id, seq))
                if logged_body is not None and pk in bodies:
                    check.found(_body_problem(pk, trace_id, ingest_seq, logged_body,
                                              *bodies[pk]), Q(seq=ingest_seq))
            if len(rows) < CHUNK:
                return
            after = rows[-1][0]


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value  # Django reads jsonb as text


def changed_since_logged(status: str, verdict_id: int | None, version_id: int | None,
                         logged_status: Any, logged_verdict: Any, judged_id: int | None
                         ) -> list[str]:
    """Which of an answer's status, current verdict and current version differ from what its
    last status event left (`logged_status`, `logged_verdict`) and from the version its
    current verdict judged (`judged_id`); a value the event does not hold is not compared."""
    return [field for field, stored, logged in (
        ("status", status, logged_status), ("current_verdict", verdict_id, logged_verdict),
        ("current_version", version_id, judged_id))
        if logged is not None and stored != logged]


def _answer_problem(pk: int, trace_id: str, status: str, verdict_id: int | None,
                    seq: int | None, logged_status: Any, logged_verdict: Any,
                    version_id: int | None, judged_id: int | None) -> RecordProblem | None:
    """An answer against its last status event, and its current version against the one its
    current verdict judged: every path that sets the verdict sets that version with it, and
    the version's text is vouched for by the digest its first verdict's event holds. A version
    made current by hand is text no gate and no reviewer saw, served as approved."""
    name = f"answer {trace_id}"
    if seq is None:
        return RecordProblem("answer", pk, trace_id, "unrecorded", (
            f"{name}: no audit event recorded its status (not made through ReviewQueue, or its "
            "events were taken out of the log)"), evidence=content_sha256([status, verdict_id]))
    changed = changed_since_logged(status, verdict_id, version_id, logged_status,
                                   logged_verdict, judged_id)
    if not changed:
        return None
    said = ", ".join(
        f"status: {status}, where audit event #{seq} left it {logged_status}"
        if field == "status" else
        f"current verdict: #{verdict_id}, where audit event #{seq} left it #{logged_verdict}"
        if field == "current_verdict" else
        f"current version: #{version_id}, where its current verdict judged #{judged_id}"
        for field in changed)
    return RecordProblem("answer", pk, trace_id, "changed", (
        f"{name}: changed after its last audit event ({said})"), tuple(changed),
        content_sha256([status, verdict_id, version_id]))


def _body_problem(pk: int, trace_id: str, seq: int, logged: str, now: str,
                  digest: str) -> RecordProblem | None:
    """An answer whose question, askers, day, index release, citations or first text and
    claims no longer give the digest its ingest event recorded: a re-evaluation would judge
    it on a body nobody sent (askers widened in the table turn an abstention into a
    candidate), or whose stored digest is not that one (a replay of another body would be
    taken as this one). The log keeps only the digest, so which field changed cannot be
    told."""
    if now == logged == digest:
        return None
    return RecordProblem("answer", pk, trace_id, "changed", (
        f"answer {trace_id}: its body (question, askers, as_of, index release, citations, or "
        f"first text and claims) changed after audit event #{seq} recorded it"), ("body",),
        now)


@in_one_snapshot
def records_check(*, log_intact: bool = False) -> RecordsCheck:
    """Every answer, verdict and decision against the event that recorded it. The rows and the
    events are read side by side in row id order, a chunk at a time: memory stays flat
    however many there are. In one snapshot: a batch whose ids were taken before the check
    began and that commits while it reads is then in neither the events nor the rows.

    `log_intact`: the chain check just found every event matching its hash, so a row that
    differs is blamed without reading its events again (a log whose events name a million
    rows that are gone would otherwise cost a query each). An event edited in between is
    blamed on its row this once; the next run's chain check finds it."""
    check = RecordsCheck(log_intact=log_intact)
    last_answer = Answer.objects.order_by("-id").values_list("id", flat=True).first() or 0
    _answers_against_log(check, last_answer)
    # Rows saved after this point, with their events, are left to the next check: read after
    # the events, they would seem recorded by none.
    last_verdict = Verdict.objects.order_by("-id").values_list("id", flat=True).first() or 0
    last_decision = Decision.objects.order_by("-id").values_list("id", flat=True).first() or 0
    logged_verdicts, logged_decisions = _recorded(check)
    verdicts = (Verdict.objects.filter(id__lte=last_verdict).order_by("id")
                .values_list("id", "answer__trace_id", *_VERDICT_COLUMNS, "version__text",
                             "version__claims"))
    for pk, trace_id, *fields, text, claims in verdicts.iterator(chunk_size=CHUNK):
        check.verdicts += 1
        row = _VerdictRow(*fields, version=_VersionRow(text, claims))
        logged = logged_verdicts.logged(pk)
        check.found(_problem("verdict", pk, trace_id,
                             verdict_as_logged(row, logged.fields if logged else None), logged),
                    _recorded_by(trace_id, logged.seq if logged else None))
    logged_verdicts.rest(Verdict)
    username = f"reviewer__{get_user_model().USERNAME_FIELD}"
    decisions = (Decision.objects.filter(id__lte=last_decision).order_by("id")
                 .values_list("id", "answer__trace_id", "action", username, "verdict_id",
                              "reject_reason", "comment", "read_passages", "revisions_used",
                             "version_id", "new_version_id"))
    for pk, trace_id, action, reviewer, *fields in decisions.iterator(chunk_size=CHUNK):
        check.decisions += 1
        row = _DecisionRow(action, _Reviewer(reviewer), *fields)
        logged = logged_decisions.logged(pk)
        check.found(_problem("decision", pk, trace_id, decision_as_logged(row), logged),
                    _recorded_by(trace_id, logged.seq if logged else None))
    logged_decisions.rest(Decision)
    _replies_against_log(check)
    _tokens_against_log(check)
    return check


def _tokens_against_log(check: RecordsCheck) -> None:
    """Every API token against the events that issued and revoked it: a token inserted by hand
    (no event issued it), one whose user, prefix, scopes or digest differ from its issue (the
    digest swapped lets another token in under its name), one revoked that works again, or
    one revoked in the table alone, is a problem. Tokens change only through those two
    services (the admin shows them read-only), and they are few: read whole."""
    issued: dict[str, tuple[int, dict[str, Any]]] = {}
    revoked: dict[str, int] = {}
    for seq, action, object_id, after in (
            AuditEvent.objects.filter(object_type="api_token",
                                      action__in=("token.issued", "token.revoked"))
            .order_by("seq").values_list("seq", "action", "object_id", "after")):
        if action == "token.issued":
            issued.setdefault(object_id, (seq, after if isinstance(after, dict) else {}))
        else:
            revoked.setdefault(object_id, seq)
    username = f"user__{get_user_model().USERNAME_FIELD}"
    for pk, user, prefix, scopes, digest, revoked_at in (
            ApiToken.objects.order_by("pk")
            .values_list("pk", username, "prefix", "scopes", "digest", "revoked_at")):
        check.tokens += 1
        name = f"API token #{pk} ({prefix}…)"
        stored = {"user": user, "prefix": prefix, "scopes": scopes, "token_sha256": digest}
        event = issued.pop(str(pk), None)
        if event is None:  # or its issue event was edited to name another token
            check.found(RecordProblem("token", pk, "", "unrecorded", (
                f"{name}: no audit event issued it (not made through ReviewQueue, or its "
                "event was taken out of the log)"), evidence=content_sha256(stored)),
                Q(object_type="api_token") & (Q(object_id=str(pk)) | Q(after__user=user)))
            continue
        seq, logged = event
        changed = [key for key, value in stored.items() if key in logged and logged[key] != value]
        revoked_seq = revoked.get(str(pk))
        if (revoked_at is None) != (revoked_seq is None):
            changed.append("revoked")
        if changed:
            said = [f"revoked by audit event #{revoked_seq}, and working again"
                    if key == "revoked" and revoked_seq is not None
                    else "revoked, and no audit event revoked it" if key == "revoked"
                    else "the token itself" if key == "token_sha256" else key
                    for key in changed]
            check.found(RecordProblem("token", pk, "", "changed", (
                f"{name}: changed after its audit events recorded it ({', '.join(said)})"),
                tuple(changed), content_sha256([stored, str(revoked_at)])),
                Q(seq__in=[s for s in (seq, revoked_seq) if s is not None]))
    for object_id, (seq, logged) in issued.items():
        number = int(object_id) if object_id.isascii() and object_id.isdigit() else 0
        check.found(RecordProblem("token", number, "",
                                  "missing", (
            f"API token #{object_id} ({logged.get('prefix')}…): audit event #{seq} issued it, "
            "and it is no longer in its table (deleted)")), Q(seq=seq))


def _replies_against_log(check: RecordsCheck) -> None:
    """Every owner's reply and every reviewer's question to the owners against the event that
    recorded it, which keeps its digest and who wrote it. A reply rewritten in the table would
    otherwise tell the reviewer what no owner wrote; a question rewritten, have the owner seem
    to answer what nobody asked.

    Each answer's questions go in id order, never by when they were asked or answered: that
    is the clock of the web host, and hosts drift apart. Their ids follow their events: both
    are taken while the answer's review item is locked (handoff._locked_item), so the
    questions of one answer are made, and their events chained, one transaction after the
    other. Only the latest question is ever answered, once, so the replies follow too."""
    username = get_user_model().USERNAME_FIELD
    _texts_against_log(
        check, "reply", "review_item.owner_replied", "reply_sha256", "replied_by",
        OwnerQuestion.objects.filter(replied_at__isnull=False).order_by("answer_id", "pk")
        .values_list("pk", "answer__trace_id", "reply", f"replied_by__{username}"))
    _texts_against_log(
        check, "question", "review_item.sent_to_owner", "note_sha256", "asked_by",
        OwnerQuestion.objects.order_by("answer_id", "pk")
        .values_list("pk", "answer__trace_id", "note", f"asked_by__{username}"))


def _texts_against_log(check: RecordsCheck, kind: str, action: str, digest: str, by_field: str,
                       rows: Any) -> None:
    """Rows (id, trace_id, text, author's username) of one answer, oldest first, and the
    answer's `action` events, in the chain's order, go one with the other: each text against
    the `digest` its event keeps (events from before it was kept have none) and its author
    against the event's actor. Which event goes with which row depends on all the answer's
    events: one of them edited leaves its rows to the chain check."""
    logged: dict[str, list[tuple[int, str, Any]]] = {}
    for seq, trace_id, actor, after in (
            AuditEvent.objects.filter(action=action).order_by("seq")
            .values_list("seq", "trace_id", "actor", "after").iterator(chunk_size=CHUNK)):
        logged.setdefault(trace_id, []).append((seq, actor, after))
    taken: dict[str, int] = {}
    for pk, trace_id, text, by in rows.iterator(chunk_size=CHUNK):
        index = taken[trace_id] = taken.get(trace_id, -1) + 1
        events = logged.get(trace_id, [])
        name = f"{kind} #{pk} of answer {trace_id}"
        if index >= len(events):
            check.found(RecordProblem(kind, pk, trace_id, "unrecorded", (
                f"{name}: no audit event recorded it (not made through ReviewQueue, or its "
                "event was taken out of the log)"), evidence=content_sha256([text, by])),
                _of_answer(trace_id))
            continue
        _seq, actor, after = events[index]
        after = after if isinstance(after, dict) else {}
        changed = [f for f, differs in (
            (kind, digest in after and after[digest] != hashlib.sha256(text.encode()).hexdigest()),
            (by_field, str(actor).split(" ")[0] != f"user:{by}")) if differs]
        if changed:
            check.found(RecordProblem(kind, pk, trace_id, "changed", (
                f"{name}: changed after its audit event recorded it ({', '.join(changed)})"),
                tuple(changed), content_sha256([text, by])), _of_answer(trace_id))
    for trace_id, events in logged.items():
        for seq, _actor, _after in events[taken.get(trace_id, -1) + 1:]:
            check.found(RecordProblem(kind, 0, trace_id, "missing", (
                f"{kind} of answer {trace_id}: audit event #{seq} recorded it, and it is no "
                "longer stored (deleted)")), Q(seq=seq) | _of_answer(trace_id))


def records_report(answers: int | None, verdicts: int, decisions: int, count: int,
                   details: list[str], tokens: int | None = None) -> str:
    """What verify_audit prints of a check: `count` problems, the first of them in `details`
    (`answers` is None for a run made before answers were checked, `tokens` for one made
    before tokens were)."""
    if not count:
        stand = ("" if answers is None else
                 f"{plural(answers, 'answer')} stands where its last audit event left it; "
                 if answers == 1 else
                 f"{answers} answers stand where their last audit events left them; ")
        api = ("" if tokens is None else
               f"; {plural(tokens, 'API token')} matches the audit events that issued and "
               "revoked it" if tokens == 1 else
               f"; {tokens} API tokens match the audit events that issued and revoked them")
        return (f"Records OK: {stand}{plural(verdicts, 'verdict')} and "
                f"{plural(decisions, 'decision')} match the audit events that recorded "
                f"them{api}.")
    listing = "".join(f"\n  {detail}" for detail in details[:100])
    more = count - len(details[:100])
    checked = "" if answers is None else f"{plural(answers, 'answer')}, "
    api = "" if tokens is None else f" and {plural(tokens, 'API token')}"
    return (f"Records CHANGED: {plural(count, 'problem')} in {checked}"
            f"{plural(verdicts, 'verdict')}, {plural(decisions, 'decision')}{api}:{listing}"
            + (f"\n  ... and {more} more" if more > 0 else ""))
