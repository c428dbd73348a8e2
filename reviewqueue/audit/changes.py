"""An event's change as the audit list shows it: one line per field, with a label where the
field is known, and the value before and after where the event records both. The log and its
exports keep the JSON as stored; this is only how a person reads it.

No query: the labels of codes come from the models' choices and the reviewers' labels.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from html import escape
from typing import Any

from django.template.defaultfilters import yesno
from django.utils import timezone
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from reviewqueue.audit.chain import problem_label
from reviewqueue.audit.templatetags.audit_tags import NO_VALUE
from reviewqueue.jobs.models import Job
from reviewqueue.reviews.labels import decision_label, reject_reason_label, verdict_reason_label
from reviewqueue.reviews.models import Answer, Verdict
from reviewqueue.sources.forms import DISMISS_REASONS_SHOWN
from reviewqueue.sources.models import Conflict

# Past this many characters a value is cut short on its line; the whole line is a click away.
LONG = 48
# A digest is told apart by its first characters, as the hash column shows a hash.
DIGEST = 12

# An answer's or a conflict's status (their codes differ), and what caused a verdict.
STATUS_LABELS: dict[str, Any] = dict([*Answer.Status.choices, *Conflict.Status.choices])
TRIGGER_LABELS: dict[str, Any] = dict(Verdict.Trigger.choices)
# What changed a conflict or an answer's status on its own (`by`): a revision, a withdrawal,
# a restoration, the date (validity), or a re-evaluation; never a person.
BY_LABELS: dict[str, Any] = {**TRIGGER_LABELS, "reevaluation": gettext_lazy("Re-evaluation")}
SCOPE_LABELS: dict[str, Any] = dict(Job.Scope.choices)

# Values that say nothing: a dash where a line must show one, no line where a field is new.
EMPTY: tuple[Any, ...] = (None, "", [], {})


def _text(value: Any) -> str:
    """A stored value as a person reads it: no quotes, yes or no, a dash for nothing, a list
    as its items, and anything nested within it in brackets."""
    if value in EMPTY:
        return NO_VALUE
    if isinstance(value, bool):
        return str(yesno(value))
    if isinstance(value, list):
        return ", ".join(_nested(item) for item in value)
    if isinstance(value, dict):
        return ", ".join(f"{key}: {_nested(item)}" for key, item in value.items())
    return str(value)


def _nested(value: Any) -> str:
    if isinstance(value, list):
        return f"[{', '.join(_nested(item) for item in value)}]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key}: {_nested(item)}" for key, item in value.items()) + "}"
    return _text(value)


def _labelled(labels: dict[str, Any] | Callable[[str], str]) -> Callable[[Any], str]:
    """A code shown by its label (by `labels`, a dict or a function); anything else as is."""
    def show(value: Any) -> str:
        if not isinstance(value, str):
            return _text(value)
        label = labels(value) if callable(labels) else labels.get(value, value)
        return str(label)
    return show


def _revisions(value: Any) -> str:
    """[[document, revision], ...] as "pricing r2, faq r1"."""
    if not isinstance(value, list):
        return _text(value)
    return _text([" ".join(_text(part) for part in item) if isinstance(item, list) else item
                  for item in value])


def _time(value: Any) -> str:
    """An ISO time in the page's time zone, as the Time column shows it."""
    try:
        moment = dt.datetime.fromisoformat(value)
    except (TypeError, ValueError):
        return _text(value)
    if timezone.is_aware(moment):
        moment = timezone.localtime(moment)
    return moment.strftime("%Y-%m-%d %H:%M:%S")


@dataclass(frozen=True)
class Field:
    label: Any
    show: Callable[[Any], str] = _text
    limit: int = LONG
    id_label: Any = None  # the label when the value is a number: the id of a record


UNKNOWN = Field("")  # a field not listed below: labelled by its name


# The fields the application records (see the callers of `audit_record`), in the order their
# lines are shown: what changed first, then who and why, then the ids and the details.
FIELDS: dict[str, Field] = {
    # Answers: verdicts, reviewers' decisions, the queue
    "status": Field(gettext_lazy("status"), _labelled(STATUS_LABELS)),
    "reviewer": Field(gettext_lazy("reviewer")),
    "reject_reason": Field(gettext_lazy("reason"), _labelled(reject_reason_label)),
    "comment_sha256": Field(gettext_lazy("comment (SHA-256)"), limit=DIGEST),
    "read_passages": Field(gettext_lazy("passages expanded")),
    # A verdict's decision (review), or the id of a reviewer's decision on a decision event.
    "decision": Field(gettext_lazy("decision"), _labelled(decision_label),
                      id_label=gettext_lazy("decision id")),
    "reason": Field(gettext_lazy("reason"), _labelled(verdict_reason_label)),
    "cause": Field(gettext_lazy("cause"), _labelled(TRIGGER_LABELS)),
    "by": Field(gettext_lazy("changed by"), _labelled(BY_LABELS)),
    "verdict": Field(gettext_lazy("verdict")),
    "earlier_verdict": Field(gettext_lazy("an earlier verdict, current again")),
    "decided_on_verdict": Field(gettext_lazy("decided on verdict")),
    "verdict_decision": Field(gettext_lazy("new verdict's decision"), _labelled(decision_label)),
    "version_number": Field(gettext_lazy("version")),
    "version": Field(gettext_lazy("version id")),
    "revisions": Field(gettext_lazy("revisions"), _revisions),
    "verdict_revisions": Field(gettext_lazy("new verdict's revisions"), _revisions),
    "verdict_sha256": Field(gettext_lazy("verdict (SHA-256)"), limit=DIGEST),
    "version_sha256": Field(gettext_lazy("text and claims (SHA-256)"), limit=DIGEST),
    "body_sha256": Field(gettext_lazy("body submitted (SHA-256)"), limit=DIGEST),
    "audit_sample": Field(gettext_lazy("audit sample")),
    "waiting_for_owner": Field(gettext_lazy("waiting for owner")),
    "owners": Field(gettext_lazy("owners")),
    "asked_by": Field(gettext_lazy("asked by")),
    "note_sha256": Field(gettext_lazy("note (SHA-256)"), limit=DIGEST),
    "reply_sha256": Field(gettext_lazy("reply (SHA-256)"), limit=DIGEST),
    # Leases
    "holder": Field(gettext_lazy("lease holder")),
    "until": Field(gettext_lazy("lease until"), _time),
    "expired": Field(gettext_lazy("lease expired")),
    # Documents and their revisions
    "current_revision": Field(gettext_lazy("current revision")),
    "withdrawn": Field(gettext_lazy("withdrawn")),
    "seq": Field(gettext_lazy("revision number")),
    "owner": Field(gettext_lazy("owner")),
    "allowed_principals": Field(gettext_lazy("readers")),
    "facts": Field(gettext_lazy("facts")),
    "passages": Field(gettext_lazy("passages")),
    "body_digest": Field(gettext_lazy("body (SHA-256)"), limit=DIGEST),
    # Conflicts
    "subject": Field(gettext_lazy("subject")),
    "key": Field(gettext_lazy("key")),
    "dismissal_reason": Field(gettext_lazy("reason"), _labelled(DISMISS_REASONS_SHOWN)),
    "reason_sha256": Field(gettext_lazy("justification (SHA-256)"), limit=DIGEST),
    # Re-evaluations and failed tasks
    "scope": Field(gettext_lazy("scope"), _labelled(SCOPE_LABELS), limit=80),
    "trigger": Field(gettext_lazy("trigger"), _labelled(TRIGGER_LABELS)),
    "answers": Field(gettext_lazy("answers")),
    "task": Field(gettext_lazy("task")),
    "retry_count": Field(gettext_lazy("retries")),
    # Accounts, API tokens, webhooks
    "revoked": Field(gettext_lazy("revoked")),
    "url": Field(gettext_lazy("URL")),
    "active": Field(gettext_lazy("active")),
    "user": Field(gettext_lazy("user")),
    "prefix": Field(gettext_lazy("token prefix")),
    "scopes": Field(gettext_lazy("scopes")),
    "token_sha256": Field(gettext_lazy("token (SHA-256)"), limit=DIGEST),
    "groups": Field(gettext_lazy("groups")),
    # Alerts about the chain
    "acknowledged": Field(gettext_lazy("acknowledged")),
    "problem": Field(gettext_lazy("problem"), _labelled(problem_label)),
    "first_bad_seq": Field(gettext_lazy("first bad event")),
}


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit - 1]}…"


# A line, and one cut short: it opens to show the whole line.
LINE = '<div><span class="muted">{}:</span> {}</div>'
CUT_LINE = ('<details><summary><span class="muted">{}:</span> {}</summary>'
            "<code>{}</code></details>")


class ChangeCells:
    """The Change cells of one page of the audit list.

    A page of 50 events draws some 500 lines: labels are translated once for the page rather
    than once a line, a value seen before on the page is not worked out again, and each cell
    is drawn here rather than by a loop in the template."""

    def __init__(self) -> None:
        self.labels = {key: str(field.label) for key, field in FIELDS.items()}
        self.id_labels = {key: str(field.id_label) for key, field in FIELDS.items()
                          if field.id_label}
        self.was = _("before")
        self.shown: dict[tuple[str, type, Any], str] = {}

    def _show(self, key: str, value: Any) -> str:
        field = FIELDS.get(key, UNKNOWN)
        if isinstance(value, list | dict):
            return field.show(value)
        seen = (key, type(value), value)  # the type too: True == 1
        if seen not in self.shown:
            self.shown[seen] = field.show(value)
        return self.shown[seen]

    def lines(self, before: Any, after: Any) -> list[tuple[str, str, str]]:
        """(label, text shown, whole text or "" when the text is not cut short) for each field
        of the change: "old → new" when the event records the field before and after and it
        changed, the value otherwise."""
        before = before if isinstance(before, dict) else {"value": before} if before else {}
        after = after if isinstance(after, dict) else {"value": after} if after else {}
        keys = [key for key in FIELDS if key in before or key in after]
        keys += sorted((before.keys() | after.keys()) - FIELDS.keys())
        lines = []
        for key in keys:
            if key not in before and after[key] in EMPTY:
                continue  # nothing to say (no reject reason on an approval)
            limit = FIELDS.get(key, UNKNOWN).limit
            if key in before and key in after and before[key] != after[key]:
                old, new = self._show(key, before[key]), self._show(key, after[key])
                text, whole = f"{_cut(old, limit)} → {_cut(new, limit)}", f"{old} → {new}"
            elif key in after:
                whole = self._show(key, after[key])
                text = _cut(whole, limit)
            else:
                # Recorded only as it was: what the change ended (a lease that had lapsed).
                old = self._show(key, before[key])
                text, whole = f"{_cut(old, limit)} ({self.was})", f"{old} ({self.was})"
            value = after.get(key, before.get(key))
            label = (self.id_labels[key] if key in self.id_labels and isinstance(value, int)
                     and not isinstance(value, bool) else self.labels.get(key, key))
            lines.append((label, text, whole if whole != text else ""))
        return lines

    def cell(self, before: Any, after: Any) -> str:
        # Safe: every label and value is escaped, as Django's `escape` does (the standard
        # library's, without Django's wrappers: a page escapes some 1,500 of them).
        return mark_safe("".join(
            CUT_LINE.format(escape(label), escape(text), escape(whole)) if whole
            else LINE.format(escape(label), escape(text))
            for label, text, whole in self.lines(before, after)))
