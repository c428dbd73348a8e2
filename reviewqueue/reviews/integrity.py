"""Whether each verdict and each decision is still the row its audit event recorded.

Verdicts and decisions have no hash of their own, and PostgreSQL refuses to update or delete
them; someone with the database's own rights can still do either, or insert a row that no
event recorded (an approval nobody made). The chained event that recorded each row holds the
fields the answer's timeline checks: every row is checked against it here, for the whole
store, as the sources are against the events that published them (sources/integrity.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import batched
from typing import Any

from django.db.models import Q

from reviewqueue.audit.models import AuditEvent
from reviewqueue.audit.selectors import (
    against_log,
    decision_as_logged,
    logged_rows,
    verdict_as_logged,
)
from reviewqueue.reviews.models import Decision, Verdict

CHUNK = 2000


@dataclass(frozen=True)
class RecordProblem:
    """One row that differs: a "verdict" or a "decision" (`kind`) by its id, and its answer's
    trace_id; `code` is "unrecorded" (no event recorded it) or "changed" (`fields` differ from
    what its event recorded); `detail` is the sentence verify_audit prints."""

    kind: str
    id: int
    trace_id: str
    code: str
    detail: str
    fields: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "id": self.id, "trace_id": self.trace_id, "code": self.code,
                "detail": self.detail, "fields": list(self.fields)}


@dataclass
class RecordsCheck:
    verdicts: int = 0
    decisions: int = 0
    problems: list[RecordProblem] = field(default_factory=list)


def _recorded() -> tuple[dict[int, dict[str, Any]], dict[int, dict[str, Any]]]:
    """What the events recorded of every verdict and decision, by the row's id, read in the
    chain's order a chunk at a time (as the timeline reads one answer's). An event edited
    since is the chain check's to report: here it still tells what it says now."""
    verdicts: dict[int, dict[str, Any]] = {}
    decisions: dict[int, dict[str, Any]] = {}
    events = (AuditEvent.objects
              .filter(Q(action__in=("answer.ingested", "verdict.created"))
                      | Q(action__startswith="decision."))
              .only("seq", "action", "after").order_by("seq"))
    for chunk in batched(events.iterator(chunk_size=CHUNK), CHUNK):
        of_verdicts, of_decisions = logged_rows(list(chunk), {})
        for pk, logged in of_verdicts.items():
            if pk not in verdicts:  # the first event to name a verdict made it
                verdicts[pk] = {k: logged[k] for k in _VERDICT_FIELDS if k in logged}
        decisions.update((pk, {k: logged[k] for k in _DECISION_FIELDS if k in logged})
                         for pk, logged in of_decisions.items())
    return verdicts, decisions


# Only what the check compares is kept of each event (an ingest event holds much more).
_VERDICT_FIELDS = ("decision", "reason", "revisions")
_DECISION_FIELDS = ("action", "reviewer", "decided_on_verdict", "reject_reason",
                    "comment_sha256", "read_passages", "revisions")


def _problem(kind: str, row: Any, stored: dict[str, Any],
             logged: dict[str, Any] | None) -> RecordProblem | None:
    name = f"{kind} #{row.pk} of answer {row.answer.trace_id}"
    if logged is None:
        return RecordProblem(kind, row.pk, row.answer.trace_id, "unrecorded", (
            f"{name}: no audit event recorded it (not made through ReviewQueue, or its event "
            "was taken out of the log)"))
    changed = against_log(stored, logged) or []
    if not changed:
        return None
    return RecordProblem(kind, row.pk, row.answer.trace_id, "changed", (
        f"{name}: changed after its audit event recorded it ({', '.join(changed)})"),
        tuple(changed))


def records_check() -> RecordsCheck:
    """Every verdict and every decision against the event that recorded it."""
    check = RecordsCheck()
    # Rows saved after this point, with their events, are left to the next check: read after
    # the events, they would seem recorded by none.
    last_verdict = Verdict.objects.order_by("-id").values_list("id", flat=True).first() or 0
    last_decision = Decision.objects.order_by("-id").values_list("id", flat=True).first() or 0
    logged_verdicts, logged_decisions = _recorded()
    verdicts = (Verdict.objects.filter(id__lte=last_verdict).select_related("answer")
                .order_by("id")
                .only("id", "decision", "reason", "revisions_used", "answer__trace_id"))
    for verdict in verdicts.iterator(chunk_size=CHUNK):
        check.verdicts += 1
        if problem := _problem("verdict", verdict, verdict_as_logged(verdict),
                               logged_verdicts.get(verdict.pk)):
            check.problems.append(problem)
    decisions = (Decision.objects.filter(id__lte=last_decision)
                 .select_related("answer", "reviewer").order_by("id")
                 .only("id", "action", "comment", "reject_reason", "read_passages",
                       "revisions_used", "verdict_id", "answer__trace_id",
                       "reviewer__username"))
    for decision in decisions.iterator(chunk_size=CHUNK):
        check.decisions += 1
        if problem := _problem("decision", decision, decision_as_logged(decision),
                               logged_decisions.get(decision.pk)):
            check.problems.append(problem)
    return check


def records_report(verdicts: int, decisions: int, count: int, details: list[str]) -> str:
    """What verify_audit prints of a check: `count` problems, the first of them in `details`."""
    if not count:
        return (f"Records OK: {verdicts} verdicts and {decisions} decisions match the audit "
                "events that recorded them.")
    listing = "".join(f"\n  {detail}" for detail in details[:100])
    more = count - len(details[:100])
    return (f"Records CHANGED: {count} problem(s) in {verdicts} verdicts and {decisions} "
            f"decisions:{listing}" + (f"\n  ... and {more} more" if more > 0 else ""))
