"""Admin pages of the audit log: search, per-answer timeline, exports and verification."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseRedirect,
    QueryDict,
    StreamingHttpResponse,
)
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import RFC3986_SUBDELIMS, url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_POST

from reviewqueue.accounts.principals import user_principals
from reviewqueue.audit import selectors
from reviewqueue.audit.chain import localized_detail, localized_problem, problem_label
from reviewqueue.audit.changes import STATUS_LABELS, ChangeCells
from reviewqueue.audit.forms import FILTER_PARAMS, PAGE_PARAMS, AuditSearchForm
from reviewqueue.audit.models import ACTION_FAMILIES, AuditEvent, VerificationRun
from reviewqueue.audit.permissions import admin_required
from reviewqueue.audit.services import (
    ALERT_NEW_LISTED,
    RECORDS_CHANGED,
    SOURCES_CHANGED,
    Actor,
    audit_alert_acknowledge,
    new_problems,
    runs_before,
)
from reviewqueue.audit.templatetags.audit_tags import actor_name
from reviewqueue.params import unexpected_params
from reviewqueue.reviews.labels import decision_label, reject_reason_label, verdict_reason_label
from reviewqueue.reviews.selectors.answers import user_may_read_answer
from reviewqueue.sources.selectors import document_titles

# How a verification was started, for people (the model's choices are not translated).
TRIGGER_LABELS: dict[str, Any] = {
    VerificationRun.Trigger.COMMAND: gettext_lazy("verify_audit command"),
    VerificationRun.Trigger.NIGHTLY: gettext_lazy("Nightly job"),
    VerificationRun.Trigger.MANUAL: gettext_lazy("Requested on the audit page"),
}


SOURCE_PROBLEM_LABELS = {
    "unpublished": gettext_lazy("no audit event published it"),
    "access_list": gettext_lazy("its access list is not the one it was published with"),
    "body": gettext_lazy("its title, dates, passages or facts are not those it was published "
                         "with"),
    "document_access": gettext_lazy("the document lets others read it than its current "
                                    "revision does"),
    "deleted": gettext_lazy("an audit event published it, and it is no longer stored"),
    "document_state": gettext_lazy("its current revision, or its withdrawal, is not what its "
                                   "last audit event left"),
    "document_owner": gettext_lazy("its owner is not the one its audit events gave it"),
    "conflict_state": gettext_lazy("its status is not what its last audit event left"),
    "conflict_justification": gettext_lazy("its justification is not the one its dismissal "
                                           "recorded"),
}


def _status_context() -> dict[str, Any]:
    """The verification status box (audit/_status.html): the last run's summary and problems
    as stored are English (verify_audit prints them); the page shows them in the reader's
    language, and problem codes as labels."""
    status = selectors.chain_status()
    run = status.last_run
    verification: dict[str, Any] = {}
    if run is not None:
        verification = {
            "detail": localized_detail(run.detail),
            "trigger": str(TRIGGER_LABELS.get(run.trigger, run.get_trigger_display())),
            "problems": [{"seq": p.get("seq"), "problem": p.get("problem", ""),
                          "label": problem_label(p.get("problem", "")),
                          "detail": localized_problem(p.get("detail", ""))}
                         for p in run.problems or []],
            "sources_problems": [{"name": p.get("name", ""),
                                  "label": SOURCE_PROBLEM_LABELS.get(p.get("code", ""), "")}
                                 for p in run.sources_problems or []],
            "records_problems": [_record_problem(p) for p in run.records_problems or []],
        }
    before = runs_before(alert.run for alert in status.open_alerts)
    verification["alerts"] = [_alert_shown(alert, before.get(alert.run_id))
                              for alert in status.open_alerts]
    return {"status": status, "verification": verification}


def _record_problem(problem: dict[str, Any]) -> dict[str, Any]:
    """An answer, verdict, decision or API token that differs from its event, as the status
    box lists it: named in the reader's language, linked to its answer's timeline (a token, to
    its page in the admin; one named by an edited event by an id no route takes, to
    nothing)."""
    trace_id = problem.get("trace_id", "")
    values = {"id": problem.get("id"), "trace": trace_id}
    kind = problem.get("kind")
    if kind == "token":  # no answer: linked to the token in the admin
        url = reverse("admin:accounts_apitoken_change", args=[problem.get("id")])
    else:
        url = reverse("audit:timeline", args=[trace_id]) if _routable(trace_id) else ""
    name = (_("Answer %(trace)s") if kind == "answer"
            else _("API token #%(id)s") if kind == "token"
            else _("Verdict #%(id)s of %(trace)s") if kind == "verdict"
            else _("An owner's reply on %(trace)s") if kind == "reply"
            else _("A reviewer's question to the owners on %(trace)s") if kind == "question"
            else _("Decision #%(id)s of %(trace)s")) % values
    if kind == "answer" and problem.get("code") == "changed" \
            and "body" not in (problem.get("fields") or ()):  # its ingest event recorded that
        label = _("changed after its last audit event (%(fields)s)") % {"fields": ", ".join(
            str(LOGGED_FIELDS.get(f, f)) for f in problem.get("fields") or [])}
    elif problem.get("code") == "unrecorded":
        label = _("no audit event recorded it: it was not made through ReviewQueue, or its "
                  "event was taken out of the log")
    elif problem.get("code") == "missing":
        label = _("an audit event recorded it, and it is no longer in its table (deleted)")
    else:
        label = _("changed after its audit event recorded it (%(fields)s)") % {"fields": ", ".join(
            str(LOGGED_FIELDS.get(f, f)) for f in problem.get("fields") or [])}
    return {"name": name, "label": label, "url": url}


def _alert_shown(alert: Any, previous: VerificationRun | None) -> dict[str, Any]:
    """An open alert in the reader's language, rebuilt from its run as `_alert_message` wrote
    it (the stored message is English, for the Django admin and the logs): what is new since
    the run before (`previous`), or how the problems differ, then the run's summary. A run
    stored before runs listed their problems shows the message as stored."""
    run = alert.run
    shown: dict[str, Any] = {"pk": alert.pk, "at": alert.created_at, "kind": "summary",
                             "items": [], "more": 0, "detail": localized_detail(run.detail)}
    if alert.problem in (SOURCES_CHANGED, RECORDS_CHANGED):
        kind = "sources" if alert.problem == SOURCES_CHANGED else "records"
        problems = getattr(run, f"{kind}_problems") or []
        count = getattr(run, f"{kind}_problem_count")
        listed = problems[:ALERT_NEW_LISTED]
        items = ([f"{p.get('name', '')}: {SOURCE_PROBLEM_LABELS.get(p.get('code'), '')}"
                  for p in listed] if kind == "sources"
                 else [f"{r['name']}: {r['label']}" for r in map(_record_problem, listed)])
        return {**shown, "kind": kind, "now": count, "detail": "", "items": items,
                "more": max(count - len(listed), 0)}
    if previous is None or previous.ok:
        return shown
    if not run.problems:
        return {**shown, "detail": alert.message}
    new = new_problems(run, previous)
    if not new:
        return {**shown, "kind": "differ", "since": previous.finished_at,
                "then": max(previous.problem_count, 1), "now": run.problem_count}
    return {**shown, "kind": "new", "since": previous.finished_at,
            "items": [f"#{p['seq']} {problem_label(p.get('problem', ''))}: "
                      f"{localized_problem(p.get('detail', ''))}" for p in new[:ALERT_NEW_LISTED]],
            "more": max(len(new) - ALERT_NEW_LISTED, 0)}


def _bad_request(request: HttpRequest, form: AuditSearchForm | None,
                 problems: list[str]) -> HttpResponse:
    context = {"form": form or AuditSearchForm(), "problems": problems, "page": None,
               **_status_context()}
    return render(request, "audit/events.html", context, status=400)


class _TimelineLinks:
    """`reverse("audit:timeline", args=[trace_id])` for the many ids of one page, without
    resolving the pattern once per row: the id is quoted into the reversed link exactly as
    `reverse` quotes it. An id the route would not match (empty, or with a slash) goes
    through `reverse` itself, which refuses it as before."""

    SAFE = RFC3986_SUBDELIMS + "/~:@"  # what `reverse` leaves unquoted in a path
    SENTINEL = "trace-id-placeholder"

    def __init__(self) -> None:
        template = reverse("audit:timeline", args=[self.SENTINEL])
        self.head, _, self.tail = template.partition(self.SENTINEL)

    def __call__(self, trace_id: str) -> str:
        if not trace_id or "/" in trace_id:
            return reverse("audit:timeline", args=[trace_id])
        return self.head + quote(trace_id, safe=self.SAFE) + self.tail


def _routable(key: str) -> bool:
    """Whether a page's route takes `key` as its id: an edited event may name an empty one,
    or one with a slash, which no answer or document has."""
    return bool(key) and "/" not in key


def _local_time(moment: Any) -> str:
    """`{{ moment|date:"Y-m-d H:i:s" }}`: in the current time zone, as the filter shows it."""
    t = timezone.localtime(moment) if timezone.is_aware(moment) else moment
    return (f"{t.year:04d}-{t.month:02d}-{t.day:02d} "
            f"{t.hour:02d}:{t.minute:02d}:{t.second:02d}")


def _conflict_document_keys(event: Any) -> list[str]:
    """The documents of the revisions a conflict event names, but the one the row names
    already (the publication that caused it): a dismissal, a reopening or a closing by date
    names no one document."""
    if event.object_type != "conflict" or not isinstance(event.after, dict):
        return []
    keys = [pair[0] for pair in event.after.get("revisions") or []
            if isinstance(pair, list) and pair and isinstance(pair[0], str)]
    return [key for key in dict.fromkeys(keys) if key != event.document_id]


def event_rows(events: list[Any], titles: dict[str, str] | None = None
               ) -> list[dict[str, Any]]:
    """What each row of the list shows, worked out once per page in Python: the template
    then only prints plain strings (escaped by it as any other value) and runs no url tag,
    filter or include per row. The Change cell, many lines a row, comes drawn and escaped
    (`ChangeCells`). No query: everything comes from the events read, and the `titles` of
    their documents (by id) read once for the page."""
    titles = titles or {}
    log = reverse("audit:events")
    timeline = _TimelineLinks()
    changes = ChangeCells()
    actor_types = {str(value): str(label) for value, label in AuditEvent.ActorType.choices}
    rows = []
    for e in events:
        rows.append({
            "seq": e.seq,
            "from_here": f"{log}?before={e.seq + 1}",
            "time": _local_time(e.created_at),
            "actor_type": e.actor_type,
            "actor_type_label": actor_types.get(e.actor_type, e.actor_type),
            "actor": e.actor,
            "actor_name": actor_name(e.actor),
            "actor_link": f"{log}?actor={quote(e.actor, safe=':')}" if e.actor else "",
            "action": e.action,
            "object_type": e.object_type,
            "object_id": e.object_id,
            "object_link": _object_link(e, timeline),
            "trace_id": e.trace_id,
            # An id no answer can have (an edited event) gets no link, not a 500.
            "trace_link": timeline(e.trace_id) if _routable(e.trace_id) else "",
            "document_id": e.document_id,
            "document_title": titles.get(e.document_id, "") if e.document_id else "",
            # A document the event is about but does not name as its document.
            "object_title": (titles.get(e.object_id, "") if e.object_type == "document"
                             and e.object_id != e.document_id else ""),
            "document_link": (f"{log}?document={quote(e.document_id, safe='/')}"
                              if e.document_id else ""),
            # Each with its search link and its title where the viewer may read it.
            "conflict_documents": [(key, f"{log}?document={quote(key, safe='/')}",
                                    titles.get(key, "")) for key in _conflict_document_keys(e)],
            "change": changes.cell(e.before, e.after),
            "hash": e.hash,
            "request_short": e.request_id[:12] if e.request_id else "",
        })
    return rows


def _object_link(event: Any, timeline: _TimelineLinks) -> str:
    """Where the event's object is shown: an answer's timeline, a conflict's page, or a
    document's page, whose History says what each revision changed (the log keeps no values)
    to an admin who may read it."""
    kind, key = event.object_type, event.object_id
    if kind == "answer":
        return timeline(key) if _routable(key) else ""
    if kind == "conflict" and key.isascii() and key.isdigit() and len(key) < 19:
        return reverse("sources:conflict", args=[key])
    if kind == "document" and _routable(key):
        return reverse("sources:document", args=[key])
    return ""


def _titles_on(events: list[Any], user: Any) -> dict[str, str]:
    """The titles `user` may read of the documents the page names: one query for the page
    (none when it names no document)."""
    keys = {e.document_id for e in events if e.document_id}
    keys |= {e.object_id for e in events if e.object_type == "document" and e.object_id}
    keys |= {key for e in events for key in _conflict_document_keys(e)}
    return document_titles(user, keys)


def _row_words() -> dict[str, str]:
    """The few words every row repeats, translated once per page rather than per row."""
    return {"from_here": _("Show the whole log from here, without the search"), "doc": _("doc"),
            "request_id": _("request id"),
            # Named on the page: beside the hash, a bare id reads as the previous hash.
            "request": _("request"),
            "actor_events": _("Show this actor's events"),
            # On a phone the header row, which names the zone, is not shown: each time does.
            "zone": timezone.get_current_timezone_name()}


@require_GET
@admin_required
def events(request: HttpRequest) -> HttpResponse:
    problems = unexpected_params(request.GET, FILTER_PARAMS | PAGE_PARAMS, shown=True)
    if problems:
        return _bad_request(request, None, problems)
    form = AuditSearchForm(request.GET, user=request.user)
    if not form.is_valid():
        return _bad_request(request, form, [])
    page = selectors.event_page(form.event_filter(), before=form.cleaned_data["before"],
                                after=form.cleaned_data["after"])
    return render(request, "audit/events.html", {
        "form": form,
        "page": page,
        "rows": event_rows(page.events, _titles_on(page.events, request.user)),
        "words": _row_words(),
        "filter_query": form.filter_query(),
        "filtered": not form.event_filter().is_empty(),
        # A page of a search on several fields may find nothing and still have older events
        # to read: no slip to undo then.
        "retries": [] if page.events or page.older else _retries(form),
        "families": _families_hint(form.cleaned_data["action"])
        if not (page.events or page.older) else None,
        **_status_context(),
    })


def _families_hint(action: str) -> str | None:
    """The families the log's actions start with, for a search of an action in none of them
    ("job", "jobs.*"); None when no action was searched or its family exists."""
    family = action.split(".")[0].rstrip("*")
    if not action or family in ACTION_FAMILIES:
        return None
    return ", ".join(f"{known}." for known in ACTION_FAMILIES)


def _retries(form: AuditSearchForm) -> list[tuple[str, str, str]]:
    """For a search that found nothing, the same search with a likely slip undone, each as
    (field, value, query string): an action typed without `*` ("revision", or
    "revision.publish") by its family, `revision.*`; a username typed in another case
    ("Alice") by the one user who has it in any case (1 query, only then)."""
    d = form.cleaned_data
    retries = []
    family = d["action"].split(".")[0]
    if d["action"] and not d["action"].endswith("*") and family in ACTION_FAMILIES:
        retries.append(("action", f"{family}.*"))
    prefix = "user:" if d["actor"].startswith("user:") else ""
    name = d["actor"].removeprefix(prefix)
    if name and ":" not in name:
        found = list(get_user_model().objects.filter(username__iexact=name)
                     .exclude(username=name).values_list("username", flat=True)[:2])
        if len(found) == 1:
            retries.append(("actor", f"{prefix}{found[0]}"))
    out = []
    for field, value in retries:
        query = QueryDict(form.filter_query(), mutable=True)
        query[field] = value
        out.append((field, value, query.urlencode()))
    return out


@require_GET
@admin_required
def timeline(request: HttpRequest, trace_id: str) -> HttpResponse:
    found = selectors.answer_timeline(trace_id)
    if found is None:
        raise Http404("No such answer")
    _label_timeline(found)
    if found.status_against_log and found.status_against_log["seq"] is not None:
        logged = found.status_against_log["status"]
        found.status_against_log["status_label"] = STATUS_LABELS.get(logged, logged)
    current = found.answer.current_verdict
    return render(request, "audit/timeline.html", {
        "timeline": found,
        # A comment may quote what the answer cites: shown to who may read all of that.
        "show_comments": user_may_read_answer(found.answer, user_principals(request.user)),
        "current_verdict": {"decision": decision_label(current.decision),
                            "reason": verdict_reason_label(current.reason)} if current else None,
        **_status_context(),
    })


# The fields of a verdict or a decision that its audit event records, as an auditor names them.
LOGGED_FIELDS = {
    "decision": gettext_lazy("decision"), "reason": gettext_lazy("reason"),
    "revisions": gettext_lazy("revisions used"), "action": gettext_lazy("action"),
    "reviewer": gettext_lazy("reviewer"), "decided_on_verdict": gettext_lazy("verdict"),
    "reject_reason": gettext_lazy("reason"), "comment_sha256": gettext_lazy("comment"),
    "read_passages": gettext_lazy("passages expanded"),
    "version": gettext_lazy("version"), "decided_on_version": gettext_lazy("version decided on"),
    "reply": gettext_lazy("reply"), "replied_by": gettext_lazy("who replied"),
    "question": gettext_lazy("question"), "asked_by": gettext_lazy("who asked"),
    "answer": gettext_lazy("the answer it belongs to"),
    "verdict_sha256": gettext_lazy("findings, warnings, fingerprint or revisions used"),
    "version_sha256": gettext_lazy("text or claims of the version judged"),
    "status": gettext_lazy("status"),
    "current_verdict": gettext_lazy("current verdict"),
    "current_version": gettext_lazy("current version, not the one its verdict judged"),
    "body": gettext_lazy("the body submitted: question, who asked, day, index release, "
                         "citations, or first text and claims"),
    "user": gettext_lazy("user"), "prefix": gettext_lazy("token prefix"),
    "scopes": gettext_lazy("scopes"), "token_sha256": gettext_lazy("the token itself"),
    "revoked": gettext_lazy("revoked"),
}


def _label_timeline(found: selectors.Timeline) -> None:
    """Labels for the gate's and reviewers' codes of each entry, and each event's change as
    the audit list shows it, in the reader's language."""
    changes = ChangeCells()
    for entry in found.entries:
        if entry.kind in ("event", "source"):
            entry.extra["change"] = changes.cell(entry.obj.before, entry.obj.after)
        if entry.extra.get("against_log"):
            entry.extra["changed_fields"] = [LOGGED_FIELDS[key]
                                             for key in entry.extra["against_log"]]
        if entry.kind == "verdict":
            verdict = entry.obj
            entry.extra["decision_label"] = decision_label(verdict.decision)
            entry.extra["reason_label"] = verdict_reason_label(verdict.reason)
            entry.extra["finding_labels"] = [verdict_reason_label(r)
                                             for r in verdict.reasons or []]
        elif entry.kind == "decision" and entry.obj.reject_reason:
            entry.extra["reject_reason_label"] = reject_reason_label(entry.obj.reject_reason)


@require_POST
@admin_required
def verify(request: HttpRequest) -> HttpResponse:
    from reviewqueue.audit.tasks import MANUAL_PENDING_KEY, MANUAL_PENDING_SECONDS, verify_chain

    actor = Actor.of_user(request.user)
    if not cache.add(MANUAL_PENDING_KEY, actor.name, timeout=MANUAL_PENDING_SECONDS):
        messages.info(request, _("A verification is already running. Its result appears below "
                                 "when it is done."))
        return _back_to_audit(request)
    try:
        verify_chain.delay(trigger=VerificationRun.Trigger.MANUAL, requested_by=actor.name)
    except Exception as exc:  # a broker that is down must not turn into a 500
        cache.delete(MANUAL_PENDING_KEY)
        messages.error(request, _("The verification could not be started (%(error)s).")
                       % {"error": type(exc).__name__})
    else:
        messages.info(request,
                      _("Verification requested. The result appears below when it is done."))
    return _back_to_audit(request)


@require_POST
@admin_required
def acknowledge_alert(request: HttpRequest, pk: int) -> HttpResponse:
    alert = audit_alert_acknowledge(alert_id=pk, user=request.user,
                                    actor=Actor.of_user(request.user))
    if alert is None:
        raise Http404("No such alert")
    # An alert about sources or records names no event: the chain itself was intact.
    said = (_("Alert about changed sources acknowledged.") if alert.problem == SOURCES_CHANGED
            else _("Alert about changed answers, verdicts, decisions or API tokens "
                   "acknowledged.")
            if alert.problem == RECORDS_CHANGED or alert.first_bad_seq is None
            else _("Alert about event #%(seq)s acknowledged.") % {"seq": alert.first_bad_seq})
    messages.info(request, said)
    return _back_to_audit(request)


def _back_to_audit(request: HttpRequest) -> HttpResponse:
    """Back to the audit page the form was sent from, with its filters or the timeline it
    showed; anything else (another site, another area) goes to the audit log."""
    back = request.POST.get("back", "")
    if back.startswith(reverse("audit:events")) and url_has_allowed_host_and_scheme(
            back, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return HttpResponseRedirect(back)
    return redirect("audit:events")


# --- Exports ------------------------------------------------------------------------------------


@require_GET
@admin_required
def export(request: HttpRequest, fmt: str) -> HttpResponseBase:
    """The matching events, oldest first, streamed: memory stays flat however many there are.

    The JSON Lines export keeps every field as stored, so a full export can be verified offline
    with `verify_audit --jsonl`, and a filtered one checked event by event. The CSV is for
    people: JSON columns hold the JSON text as stored, and cells that a spreadsheet would run
    as a formula start with an apostrophe.
    """
    problems = unexpected_params(request.GET, FILTER_PARAMS, shown=True)
    if problems:
        return _bad_request(request, None, problems)
    form = AuditSearchForm(request.GET, user=request.user)
    if not form.is_valid():
        return _bad_request(request, form, [])
    event_filter = form.event_filter()
    blocks = selectors.export_blocks(event_filter, fmt)
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    # Only a full export can prove that nothing was removed; say in the name which one this
    # is, so a search's export is not kept as if it were the whole log. The body stays one
    # event a line either way, as the offline check and other tools read it.
    kind = "" if event_filter.is_empty() else "filtered-"
    content_type = ("text/csv; charset=utf-8" if fmt == "csv"
                    else "application/x-ndjson; charset=utf-8")
    response = StreamingHttpResponse(blocks, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="audit-{kind}{stamp}.{fmt}"'
    response["Cache-Control"] = "no-store"
    return response
