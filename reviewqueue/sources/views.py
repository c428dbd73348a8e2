"""The document owner's pages: conflicts, expiring facts, and their resolution."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode
from django.utils.text import capfirst
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from reviewqueue import instants
from reviewqueue.accounts.models import Role
from reviewqueue.accounts.roles import has_role
from reviewqueue.audit.services import Actor
from reviewqueue.errors import Conflict as ConflictError
from reviewqueue.errors import DomainError, FieldError
from reviewqueue.params import (
    GIVEN_TWICE,
    SearchDateField,
    param_problems,
    refuse_unknown_params,
)
from reviewqueue.sources import selectors, services
from reviewqueue.sources.conflicts import (
    EXCEPTION,
    DismissedAgain,
    NotAnException,
    conflict_dismiss,
    conflict_reopen,
    same_value,
)
from reviewqueue.sources.forms import (
    PASSAGE_FIELD,
    CorrectionNoteForm,
    DismissForm,
    EndValidityForm,
    FactEditFormSet,
    as_input,
    passage_error,
    passage_text,
)
from reviewqueue.sources.models import Conflict, Document, Fact, Passage, Revision
from reviewqueue.textlimit import grouped


def _require_owner(request: HttpRequest) -> None:
    if not has_role(request.user, Role.OWNER, Role.ADMIN):
        raise PermissionDenied


def _conflict_or_404(request: HttpRequest, conflict_id: int) -> Conflict:
    conflict = Conflict.objects.filter(pk=conflict_id).select_related("dismissed_by").first()
    # Not involved: answered as missing, so conflict ids of other owners are not probed.
    if conflict is None or not selectors.may_resolve(request.user, conflict):
        raise Http404("No such conflict")
    return conflict


def _document_or_404(request: HttpRequest, key: str) -> Document:
    document = selectors.document_get(key)
    if document is None or not selectors.may_manage_document(request.user, document):
        raise Http404("No such document")
    return document


def _progress_redirect(request: HttpRequest, keys: list[str], since: datetime,
                       conflict: Conflict | None = None) -> HttpResponse:
    """To the progress of the change made since `since`, which has just ended: the page shows
    what happened between the two, and nothing of a later change; and `conflict`, when the
    change was dismissing or reopening it."""
    # Only documents the person may see: the link must not name the others. One parameter
    # each: a document id may hold a comma.
    keys = selectors.documents_visible_to(request.user, keys)
    query = urlencode([*(("documents", key) for key in keys), ("since", since.isoformat()),
                       ("until", timezone.now().isoformat()),
                       *((("conflict", conflict.pk),) if conflict else ())])
    return redirect(f"{reverse('sources:progress')}?{query}")


# A document's page lists this many of its revisions, the newest.
HISTORY_SHOWN = 20

# The inbox lists this many conflicts (the most recently opened) and documents (by id) at most.
INBOX_CONFLICTS = 100
INBOX_DOCUMENTS = 200
INBOX_SENT = 100
# The conflicts closed in the last 30 days it lists at most, the most recently closed.
INBOX_CLOSED = 20


@login_required
@require_GET
def inbox(request: HttpRequest) -> HttpResponse:
    _require_owner(request)
    if refused := refuse_unknown_params(request):
        return refused
    return inbox_page(request)


def inbox_page(request: HttpRequest, *, status: int = 200,
               refused_reply: dict[str, str] | None = None) -> HttpResponse:
    """The owner's inbox; `refused_reply` (trace, text, error) puts a reply the server refused
    back into its card, with the reason beside it."""
    conflicts = list(selectors.conflicts_for_owner(request.user)[:INBOX_CONFLICTS + 1])
    more_conflicts = len(conflicts) > INBOX_CONFLICTS
    conflicts = conflicts[:INBOX_CONFLICTS]
    documents = list(selectors.documents_owned_by(request.user)
                     .order_by("key")[:INBOX_DOCUMENTS + 1])
    sent_to_me = selectors.answers_sent_to(request.user, limit=INBOX_SENT)
    closed = selectors.conflicts_closed_recently(request.user, limit=INBOX_CLOSED + 1)
    held = selectors.held_answer_counts(conflicts, request.user)
    sides = selectors.conflict_sides(conflicts, request.user)
    shown = selectors.reasons_shown(conflicts, request.user)
    rows = [{"conflict": c, "sides": sides[c.pk], "held": held[c.pk], "reason_shown": c.pk in shown}
            for c in conflicts]
    today = instants.today()
    return render(
        request,
        "sources/inbox.html",
        {
            "rows": rows,
            "closed": closed[:INBOX_CLOSED],
            "expiring": selectors.expiring_facts(request.user, today=today),
            "sent_to_me": sent_to_me.cards,
            "documents": documents[:INBOX_DOCUMENTS],
            # Said, not counted: one more row read tells that the list stops short.
            "more_conflicts": more_conflicts and INBOX_CONFLICTS,
            "more_documents": len(documents) > INBOX_DOCUMENTS and INBOX_DOCUMENTS,
            "more_closed": len(closed) > INBOX_CLOSED and INBOX_CLOSED,
            "more_sent": sent_to_me.more,
            "today": today,
            "refused_reply": refused_reply,
        },
        status=status,
    )


# The full list of ended and ending facts shows this many a page.
FACTS_PAGE = 100


@login_required
@require_GET
def expiring_facts(request: HttpRequest) -> HttpResponse:
    """Every fact of the owner's that has ended or ends within 30 days, as the inbox lists
    them but a page at a time, those that ended longest ago first: what the inbox leaves out
    past its first 200, though answers may wait on it. Only the owner's own documents, as in
    the inbox."""
    _require_owner(request)
    if refused := refuse_unknown_params(request, ["after"]):
        return refused
    after = _fact_position(request.GET.get("after"))
    if request.GET.get("after") is not None and after is None:
        # A link cut short or typed by hand: the first page, as the queue does.
        messages.info(request, _("That page link was not valid; here is the first page."))
    page = selectors.expiring_facts_page(request.user, today=instants.today(), after=after,
                                         size=FACTS_PAGE)
    following = (f"{page.after[0].isoformat()}.{page.after[1]}"
                 if page.after is not None else None)
    return render(request, "sources/facts.html", {
        "expiring": page, "after": following, "paged": after is not None,
    })


def _fact_position(raw: str | None) -> tuple[Any, int] | None:
    """The position `after` names, "<valid_until>.<fact id>" (2026-10-31.42), or None when
    it names none. A position, not a fact looked up: the next page is read from where the
    last one ended even once that fact is gone, and a fact id of another owner's tells
    nothing."""
    if raw is None:
        return None
    day, _dot, pk = raw.partition(".")
    try:
        position = datetime.strptime(day, "%Y-%m-%d").date(), int(pk)
    except ValueError:
        return None
    # An id past the column's range would fail in the database, not here.
    return position if 0 <= position[1] < 2**63 else None


@login_required
@require_GET
def conflict_detail(request: HttpRequest, conflict_id: int) -> HttpResponse:
    _require_owner(request)
    conflict = _conflict_or_404(request, conflict_id)
    return _conflict_page(request, conflict, DismissForm(initial={"signature": conflict.signature}))


def _conflict_page(
    request: HttpRequest, conflict: Conflict, form: DismissForm, status: int = 200,
    error: str = "",
) -> HttpResponse:
    sides = selectors.conflict_sides([conflict], request.user)[conflict.pk]
    context = {
        "conflict": conflict,
        "error": error,
        "sides": sides,
        "may_judge": _may_judge(sides),
        "held": selectors.held_answer_counts([conflict], request.user)[conflict.pk],
        "held_answers": selectors.held_answers_of(conflict, request.user),
        "reason_shown": conflict.pk in selectors.reasons_shown([conflict], request.user),
        "closing": selectors.conflict_closing(conflict, request.user),
        "reopening": selectors.conflict_reopening(conflict, request.user),
        "dismiss_form": form,
    }
    return render(request, "sources/conflict.html", context, status=status)


def _may_judge(sides: list[Any]) -> bool:
    """Whether the person sees every value of the conflict: saying that they do not conflict
    needs them all, as correcting one does."""
    return not any(side.restricted for side in sides)


@login_required
@require_POST
def conflict_dismiss_view(request: HttpRequest, conflict_id: int) -> HttpResponse:
    _require_owner(request)
    conflict = _conflict_or_404(request, conflict_id)
    form = DismissForm(request.POST)
    if not _may_judge(selectors.conflict_sides([conflict], request.user)[conflict.pk]):
        # The page says why, where the form would be; nothing is dismissed.
        return _conflict_page(request, conflict, form, status=403)
    if not form.is_valid():
        return _conflict_page(request, conflict, form, status=400)
    since = timezone.now()
    try:
        conflict_dismiss(
            conflict_id=conflict.pk,
            reason=form.justification(),
            user=request.user,
            actor=Actor.of_user(request.user),
            signature=form.cleaned_data["signature"],
        )
    except ConflictError:
        if (done := _dismissed_already(request, conflict.pk, form)) is not None:
            return done
        return _dismissal_refused(request, conflict.pk, form)
    except NotAnException:
        form.add_error("reason", _(
            "Neither value holds during only part of the other's period, so neither is an "
            "exception to the other. Choose another reason, or, if the dates are wrong, "
            "correct them on the documents.") if len(conflict.participants) < 3 else _(
            "These values are not a rule and its exceptions: two of them disagree over the "
            "same days without one holding during only part of the other's period, or two "
            "exceptions disagree. Choose another reason, or, if the dates are wrong, correct "
            "them on the documents."))
        return _conflict_page(request, conflict, form, status=400)
    except DomainError as exc:
        messages.error(request, exc.message)
        return redirect("sources:conflict", conflict_id=conflict.pk)
    messages.success(request, _(
        "Conflict dismissed. The answers it held only because the knowledge base disagreed are "
        "re-evaluated; an answer citing the documents that disagree still waits for a reviewer "
        "to check that it says which value applies."))
    if form.cleaned_data["reason"] == EXCEPTION:
        messages.info(request, _(
            "As an exception, its value prevails during its period: an answer stating another "
            "value on one of its days stays held."))
    return _progress_redirect(request, conflict.documents, since, conflict)


def _dismissed_already(request: HttpRequest, conflict_id: int, form: DismissForm
                       ) -> HttpResponse | None:
    """The progress of the dismissal this very form made, when it is sent again (a double
    click, a retry after a lost reply): the same person, with the same justification, on the
    same revisions. Saying that it was not recorded would be untrue: it was, the first time.
    None for any other dismissal."""
    conflict = _conflict_or_404(request, conflict_id)
    if (conflict.status != Conflict.Status.DISMISSED or conflict.dismissed_at is None
            or conflict.dismissed_by_id != request.user.pk
            or conflict.dismissal_reason != form.justification().strip()
            or conflict.dismissed_signature != form.cleaned_data["signature"]):
        return None
    return _progress_redirect(request, conflict.documents, conflict.dismissed_at, conflict)


def _dismissal_refused(request: HttpRequest, conflict_id: int, form: DismissForm) -> HttpResponse:
    """The conflict as it is now, with what the person typed: someone resolved it meanwhile,
    or a document involved got a new revision they have not judged."""
    conflict = _conflict_or_404(request, conflict_id)
    if conflict.status == Conflict.Status.OPEN:
        error = _(
            "A document involved in this conflict has a new revision since you opened it. "
            "Check the values below; your justification is kept, submit it again to dismiss "
            "the conflict as it is now."
        )
        # Bound to the revisions shown now, so that submitting again judges them.
        form = DismissForm({**form.data.dict(), "signature": conflict.signature})
    else:
        error = _(
            "This conflict was resolved while you were writing. Your justification was not "
            "recorded: it is shown below."
        )
    return _conflict_page(request, conflict, form, status=409, error=error)


@login_required
@require_POST
def conflict_reopen_view(request: HttpRequest, conflict_id: int) -> HttpResponse:
    _require_owner(request)
    conflict = _conflict_or_404(request, conflict_id)
    since = timezone.now()
    seen = request.POST.get("dismissed_at", "")
    try:
        # The dismissal the page showed; a form without it reopens whatever dismissal is.
        dismissed_at = datetime.fromisoformat(seen) if seen else None
    except ValueError:
        return HttpResponseBadRequest("dismissed_at: not a date and time in ISO 8601")
    try:
        conflict_reopen(conflict_id=conflict.pk, actor=Actor.of_user(request.user),
                        dismissed_at=dismissed_at)
    except DismissedAgain:
        conflict.refresh_from_db()
        return _conflict_page(
            request, conflict, DismissForm(initial={"signature": conflict.signature}),
            status=409, error=_("The conflict was dismissed again since you opened this page. "
                                "Nothing was reopened: read the reason below first."))
    except DomainError:
        conflict.refresh_from_db()
        reopening = selectors.conflict_reopening(conflict, request.user)
        if (dismissed_at is not None and conflict.dismissed_at == dismissed_at
                and reopening is not None and reopening.who == request.user.get_username()):
            # The same form sent again (a double click): the reopening it made stands.
            return _progress_redirect(request, conflict.documents, reopening.at, conflict)
        # Reopened from another page meanwhile, or closed since: the page now says which.
        messages.info(request, _("This conflict is not dismissed any more (it is %(status)s "
                                 "now): there is nothing to reopen.")
                      % {"status": str(conflict.get_status_display()).lower()})
        return redirect("sources:conflict", conflict_id=conflict.pk)
    messages.success(request, _("Conflict reopened."))
    return _progress_redirect(request, conflict.documents, since, conflict)


def _fact_formset(
    revision: Revision | None, data: Any = None, typed: dict[int, dict[str, Any]] | None = None
) -> Any:
    """The fact forms of `revision`; `typed` shows what the owner typed over some facts."""
    initial = [
        {
            "fact_id": f.pk,
            "value": as_input(f.value),
            "valid_from": f.valid_from,
            "valid_until": f.valid_until,
            **(typed or {}).get(f.pk, {}),
        }
        for f in (revision.facts.order_by("position") if revision else [])
    ]
    return FactEditFormSet(data=data, initial=initial, prefix="facts")


def _posted_passages(post: Any, revision: Revision | None) -> dict[str, str]:
    """The passages of `revision` whose text the form changed, by span. A passage the form
    did not send (a page opened before it offered every passage), sent unchanged, or changed
    only by white space before or after it (which nobody reads, while a new revision sends
    the answers quoting it back to reviewers) is not."""
    stored = {p.span: p.text for p in revision.passages.all()} if revision else {}
    posted = {name.removeprefix(PASSAGE_FIELD): passage_text(post[name])
              for name in post if name.startswith(PASSAGE_FIELD)}
    return {span: text for span, text in posted.items()
            if span not in stored or text.strip() != passage_text(stored[span]).strip()}


PassageRow = tuple[str, str, str, str]  # span, text, error, text published meanwhile


def _passage_rows(passages: list[Passage], facts: list[Fact], typed: dict[str, str],
                  errors: dict[str, str], meanwhile: dict[str, str]
                  ) -> tuple[list[PassageRow], list[PassageRow]]:
    """(span, text, error, text published meanwhile) of each of `passages`, with what the
    owner typed over some: those one of `facts` quotes (the text that should say a corrected
    value), and the others (text an answer may still quote)."""
    quoted = {f.span for f in facts}
    rows = [(p.span, typed.get(p.span, p.text), errors.get(p.span, ""),
             meanwhile.get(p.span, "")) for p in passages]
    return ([r for r in rows if r[0] in quoted], [r for r in rows if r[0] not in quoted])


def _fact_name(fact: Fact) -> str:
    """How a fact is named where a page labels its inputs for a screen reader."""
    return f"{fact.subject} · {fact.key}" if fact.subject else fact.key


def _edited_forms(formset: Any) -> dict[int, Any]:
    """The fact forms the owner changed, by the fact id they carry."""
    return {
        form.cleaned_data["fact_id"]: form
        for form in formset.forms
        if form.has_changed() and "fact_id" in form.cleaned_data
    }


FACT_FIELDS = ("value", "valid_from", "valid_until")


def _fact_field_shown(fact: Fact, name: str) -> str:
    """A fact's field as the correction form shows it."""
    if name == "value":
        return as_input(fact.value)
    day = getattr(fact, name)
    return f"{day:%Y-%m-%d}" if day else gettext("no end")


@dataclass
class CarriedOver:
    """What the owner typed on an older revision, moved to the current one."""

    typed: dict[int, dict[str, Any]]  # by the current fact's id: only the fields they changed
    meanwhile: dict[int, dict[str, str]]  # of those, the fields the new revision changed too
    unplaced: list[tuple[Fact, dict[str, Any]]]  # edits of facts it no longer has
    said: bool = True  # whether the current revision already says every field they changed


def _carry_over(document: Document, formset: Any, user: Any) -> CarriedOver:
    """What the owner typed on an older revision, moved to the current revision's fact with
    the same subject and key. Only the fields they changed move: the others show the new
    revision's values, so sending the form again keeps what another editor changed (an end
    date someone set is not undone by the empty one the older page held). A field both
    changed keeps what the owner typed, beside what was published meanwhile. A fact of a
    revision `user` may not read is dropped as an unknown id would be: its subject and key
    would show."""
    edited = _edited_forms(formset) if formset is not None else {}
    current = document.current_revision
    same: dict[tuple[str, str], list[Fact]] = {}
    for fact in current.facts.order_by("position") if current else []:
        same.setdefault((fact.subject, fact.key), []).append(fact)
    carried = CarriedOver({}, {}, [])
    for old in _readable_facts(user, document, edited):
        form = edited[old.pk]
        if not same.get((old.subject, old.key)):
            carried.unplaced.append((old, {name: form[name].value() for name in FACT_FIELDS}))
            continue
        new = same[(old.subject, old.key)].pop(0)
        changed = [name for name in FACT_FIELDS if name in form.changed_data]
        carried.typed[new.pk] = {name: form[name].value() for name in changed}
        carried.said = carried.said and all(
            name in form.cleaned_data and (same_value(form.cleaned_data[name], new.value)
                                           if name == "value" else
                                           form.cleaned_data[name] == getattr(new, name))
            for name in changed)
        shown = {name: (_fact_field_shown(old, name), _fact_field_shown(new, name))
                 for name in changed}
        both = {name: now for name, (then, now) in shown.items() if now != then}
        if both:
            carried.meanwhile[new.pk] = both
    return carried


def _end_forms(facts: list[Fact], submitted: EndValidityForm | None) -> list[Any]:
    """One end-validity form per fact that has not ended yet (one that has is extended or
    corrected in the correction form instead); the one just submitted keeps what was typed."""
    today = instants.today()
    rows = []
    for fact in facts:
        if fact.valid_until is not None and fact.valid_until < today:
            continue
        form = submitted
        if form is None or form["fact_id"].value() != str(fact.pk):
            # No day is offered: one click on a day filled in for them would publish a
            # revision the owner never chose. The picker spans the days the fact may end on.
            form = EndValidityForm(initial={"fact_id": fact.pk})
        attrs = form.fields["last_day"].widget.attrs
        attrs["required"] = True
        if fact.valid_from:
            attrs["min"] = fact.valid_from.isoformat()
        if fact.valid_until:
            attrs["max"] = (fact.valid_until - timedelta(days=1)).isoformat()
        if (form is not submitted and fact.valid_from and fact.valid_until
                and fact.valid_until <= fact.valid_from):
            # Valid on one day only: no earlier day to end on, and a picker would offer none.
            # The page says so instead of showing a form nobody can send.
            form = None
        rows.append((fact, form, _fact_name(fact)))
    return rows


def _document_page(
    request: HttpRequest, document: Document, status: int | None = None, **extra: Any
) -> HttpResponse:
    revision = document.current_revision
    # An admin manages every document but reads only those their principals allow: the page
    # then names the document and its revisions, and shows nothing of what they say.
    readable = _readable(request, document)
    facts = list(revision.facts.order_by("position")) if revision and readable else []
    passage_list = list(revision.passages.order_by("id")) if revision and readable else []
    passages = {p.span: p.text for p in passage_list}
    formset = extra.pop("formset", None)
    if formset is None:
        formset = _fact_formset(revision)
    typed = extra.pop("passages_typed", None) or {}
    passage_rows, other_passage_rows = _passage_rows(
        passage_list, facts, typed, extra.pop("passage_errors", None) or {},
        extra.pop("passages_meanwhile", None) or {})
    fact_meanwhile = extra.pop("fact_meanwhile", None) or {}
    note_form = extra.pop("note_form", None)
    history = selectors.document_history_seen_by(request.user, document, limit=HISTORY_SHOWN)
    selectors.attach_changes(request.user, document, history)
    # The revision a restore brings back, and that any revision published after it but older
    # than it (received late) stays behind.
    newest = document.current_revision or document.revisions.order_by(
        *Revision.NEWEST_FIRST).first()
    conflicts = list(Conflict.objects.filter(documents__contains=[document.key])
                     .exclude(status=Conflict.Status.CLOSED))
    context = {
        "document": document,
        "revision": revision,
        "readable": readable,
        "facts": facts,
        # Each row with the fact's name, which labels its inputs for a screen reader, and
        # after a refusal, the fields another editor changed too, as they are now.
        "rows": [
            (form, f, passages.get(f.span, ""), _fact_name(f), fact_meanwhile.get(f.pk, {}))
            for form, f in zip(formset.forms, facts, strict=False)
        ],
        "formset": formset,
        "passage_rows": passage_rows,
        "other_passage_rows": other_passage_rows,
        # Open when the owner typed over one of them (a refused form comes back) or one is
        # refused: what was typed is in sight; and when no fact quotes any passage.
        "other_passages_open": not passage_rows or any(
            span in typed or error for span, _, error, _ in other_passage_rows),
        "passage_field": PASSAGE_FIELD,
        "note_form": note_form or CorrectionNoteForm(),
        "end_rows": _end_forms(facts, extra.pop("end_form", None)),
        "error_links": _error_links(formset, facts, [("passage", passage_rows),
                                                     ("other-passage", other_passage_rows)],
                                    note_form),
        # A revision's note says what changed in it: shown only to who may read that revision.
        "history": history,
        "history_entries": selectors.history_with_withdrawals(
            document, history, cut=len(history) == HISTORY_SHOWN),
        # A withdrawn document is still known by the title of its newest revision.
        "newest": newest,
        "withdrawn_title": newest.title if document.withdrawn_at and newest is not None
        and selectors.may_read_revision(request.user, document, newest) else "",
        "conflicts": conflicts,
        "withdraw_releases": _withdraw_releases(request, document, conflicts),
        "retrieving": selectors.answers_retrieving(document.key),
        "unreceived": selectors.held_on_unreceived(document, request.user) if revision else None,
        "today": instants.today(),
        "soon": instants.today() + timedelta(days=30),
        **extra,
    }
    return render(
        request,
        "sources/document.html",
        context,
        status=status or (400 if extra.get("error") else 200),
    )


def _withdraw_releases(request: HttpRequest, document: Document, conflicts: list[Conflict]
                       ) -> dict[str, Any] | None:
    """What withdrawing the document does to the open conflicts it is part of, for the box
    that withdraws it: it leaves them, and an answer held only for one of them can then be
    released as a candidate, with no reviewer. How many held answers they hold now (those the
    person may read)."""
    open_ones = [c for c in conflicts if c.status == Conflict.Status.OPEN]
    if document.withdrawn_at is not None or not open_ones:
        return None
    return {"conflicts": open_ones,
            "held": selectors.held_answer_count_of_any(open_ones, request.user)}


def _error_links(formset: Any, facts: list[Fact], passage_rows: list[tuple[str, list[Any]]],
                 note_form: CorrectionNoteForm | None) -> list[tuple[str, str]]:
    """Each refused field of the correction form, named, with the id of its input: the banner
    links to each, and the page puts the cursor in the first."""
    links = []
    if formset.is_bound:
        for form, fact in zip(formset.forms, facts, strict=False):
            links += [(f"{_fact_name(fact)}: {form[name].label}", form[name].id_for_label)
                      for name in form.errors if name in form.fields]
    # Numbered as the page numbers their boxes (sources/_passage_edit.html).
    for prefix, rows in passage_rows:
        links += [(_("Passage %(span)s") % {"span": span}, f"{prefix}-{n}-text")
                  for n, (span, _text, error, _now) in enumerate(rows, start=1) if error]
    if note_form is not None and note_form.is_bound and note_form.errors:
        links += [(str(note_form[name].label), note_form[name].id_for_label)
                  for name in note_form.errors if name in note_form.fields]
    return links


def _document_changed(
    request: HttpRequest, document: Document,
    changed: services.RevisionChanged | services.DocumentWithdrawn, **page: Any
) -> HttpResponse:
    """The page on the revision published meanwhile, with every value the owner typed, and
    beside each they typed over, what was published there meanwhile. On a document withdrawn
    meanwhile, which has no revision to correct, what they typed is shown apart, to send again
    once they restore it (the API's message would tell them to publish through the API)."""
    document = _document_or_404(request, document.key)  # its current revision moved on
    carried = _carry_over(document, page.pop("formset", None), request.user)
    texts = page.pop("passages_typed", None) or {}
    page.pop("passage_errors", None)
    current = document.current_revision
    now = {p.span: p.text for p in current.passages.all()} if current else {}
    based = document.revisions.filter(revision=request.POST.get("revision") or None).first()
    if based is not None and not selectors.may_read_revision(request.user, document, based):
        based = None
    seen = {p.span: p.text for p in based.passages.filter(span__in=texts)} if based else {}
    texts, seen = _follow_moved_passages(texts, seen, now)
    unplaced_passages = [(span, text) for span, text in texts.items() if span not in now]
    if (isinstance(changed, services.RevisionChanged) and current is not None
            and current.published_by_id == request.user.pk and not carried.unplaced
            and not unplaced_passages and carried.said
            and all(passage_text(text).strip() == passage_text(now[span]).strip()
                    for span, text in texts.items())
            and _end_said(document, page.get("end_form"), request.user)):
        # The same form sent again (a double click, a retry after a lost reply) once its
        # first sending published: nothing is left to publish, and it was no one else's doing.
        messages.info(request, _("Revision %(revision)s, which you published, already says "
                                 "what this form asked for: nothing more was published.")
                      % {"revision": current.revision})
        return redirect("sources:document", key=document.key)
    if page.get("end_form") is not None:
        page["end_form"], page["unplaced_end"] = _carry_end_form(document, page["end_form"],
                                                                    request.user)
    return _document_page(
        request,
        document,
        status=409,
        formset=_fact_formset(current, typed=carried.typed),
        fact_meanwhile=carried.meanwhile,
        passages_typed={span: text for span, text in texts.items() if span in now},
        passages_meanwhile={span: now[span] for span in texts if span in now and span in seen
                            and passage_text(now[span]) != passage_text(seen[span])},
        unplaced=carried.unplaced,
        unplaced_passages=unplaced_passages,
        error=_changed_meanwhile(changed),
        **page,
    )


def _changed_meanwhile(changed: services.RevisionChanged | services.DocumentWithdrawn) -> str:
    """What happened to the document since the owner opened its page, in their language."""
    if isinstance(changed, services.DocumentWithdrawn):
        return _("This document was withdrawn since you opened it, so nothing was published. "
                 "What you typed is kept below: restore the document to correct it again.")
    return _(
        "This document changed since you opened it: revision %(revision)s was published. "
        "Your values are kept below; check them against the new revision and submit again."
    ) % {"revision": changed.current}


def _follow_moved_passages(texts: dict[str, str], seen: dict[str, str], now: dict[str, str]
                           ) -> tuple[dict[str, str], dict[str, str]]:
    """The passages the owner typed, and those they saw, each under the span its passage has
    now: typed over the Pro passage at p2, the text stays with the Pro passage when the
    revision published meanwhile moved it to p1 (and put another at p2). A passage moved is
    one whose text, as the owner saw it, is now at exactly one other span."""
    def moved_to(span: str) -> str:
        if span not in seen or passage_text(now.get(span, "")) == passage_text(seen[span]):
            return span
        found = [other for other, text in now.items()
                 if passage_text(text) == passage_text(seen[span])]
        return found[0] if len(found) == 1 else span

    targets = {span: moved_to(span) for span in texts}
    if len(set(targets.values())) < len(targets):
        return texts, seen  # two would land on one span: left where they were typed
    return ({targets[span]: text for span, text in texts.items()},
            {targets.get(span, span): text for span, text in seen.items()})


def _end_said(document: Document, form: EndValidityForm | None, user: Any) -> bool:
    """Whether the current revision already ends the fact `form` ends on the day it names
    (True without a form)."""
    if form is None:
        return True
    old = next(iter(_readable_facts(user, document, [form.cleaned_data["fact_id"]])), None)
    current = document.current_revision
    return old is not None and current is not None and current.facts.filter(
        subject=old.subject, key=old.key, valid_until=form.cleaned_data["last_day"]).exists()


def _carry_end_form(
    document: Document, form: EndValidityForm, user: Any
) -> tuple[EndValidityForm | None, tuple[Fact, dict[str, Any]] | None]:
    """An end-validity form filled in on an older revision, moved to the current revision's
    fact with the same subject and key; when the current revision has no such fact, the old
    fact with what was typed, for the page to show apart (nothing typed is lost); nothing for
    a fact of a revision `user` may not read."""
    old = next(iter(_readable_facts(user, document, [form.cleaned_data["fact_id"]])), None)
    current = document.current_revision
    if old is None:
        return None, None
    same = current.facts.filter(subject=old.subject, key=old.key).order_by("position").first() \
        if current else None
    if same is None:
        return None, (old, {name: form[name].value() for name in ("last_day", "note")})
    return EndValidityForm({**form.data.dict(), "fact_id": str(same.pk)}), None


def _readable_facts(user: Any, document: Document, fact_ids: Iterable[int]) -> list[Fact]:
    """The facts of `document` among `fact_ids` in revisions `user` may read, by id. Ids come
    from a posted form: those of a restricted older revision must not bring its facts back."""
    facts = (Fact.objects.filter(revision__document=document, pk__in=list(fact_ids))
             .select_related("revision").order_by("pk"))
    return [f for f in facts if selectors.may_read_revision(user, document, f.revision)]


def _readable(request: HttpRequest, document: Document, revision: Revision | None = None) -> bool:
    """Whether the person may read what `document` says now (a withdrawn one says nothing),
    or what its `revision` says."""
    revision = revision or document.current_revision
    return revision is None or selectors.may_read_revision(request.user, document, revision)


def _refuse_unreadable(request: HttpRequest, document: Document,
                       revision: Revision | None = None) -> HttpResponse | None:
    """The page, with 403, when the person may manage `document` but not read its current
    revision (or `revision`): correcting values one cannot see would be blind."""
    if _readable(request, document, revision):
        return None
    return _document_page(request, document, status=403, error=_(
        "None of your principals may read this document, so you cannot correct it. Its owner "
        "or someone allowed to read it can."))


@login_required
@require_GET
def document_detail(request: HttpRequest, key: str) -> HttpResponse:
    _require_owner(request)
    return _document_page(request, _document_or_404(request, key))


@login_required
@require_POST
def document_publish(request: HttpRequest, key: str) -> HttpResponse:
    """Publish a corrected revision: the current one with the edited facts and a note."""
    _require_owner(request)
    document = _document_or_404(request, key)
    if refused := _refuse_unreadable(request, document):
        return refused
    # The revision the form was rendered from; forms posted without one are checked by the
    # fact ids they carry, which belong to a single revision.
    based_on = request.POST.get("revision") or None
    based = document.revisions.filter(revision=based_on).first() or document.current_revision
    if (document.current_revision is None and based is not None
            and not selectors.may_read_revision(request.user, document, based)):
        # Checked against passages of a revision one may not read, the refusal would tell
        # what they say (a withdrawn document has no current revision to refuse on; on one
        # that has, a form of an older revision gets the page of the current one).
        return _refuse_unreadable(request, document, based)
    # Compared only with a revision the person may read: against another, which values,
    # dates and passages come back as typed would tell whether a guess is what it says.
    readable = based is None or selectors.may_read_revision(request.user, document, based)
    formset = _fact_formset(based if readable else None, request.POST)
    passages = _posted_passages(request.POST, based if readable else None)
    passage_errors = {span: error for span, text in passages.items()
                      if (error := passage_error(text))}
    note_form = CorrectionNoteForm(request.POST)
    valid = all([formset.is_valid(), note_form.is_valid(), not passage_errors])
    forms = {"formset": formset, "note_form": note_form, "passages_typed": passages,
             "passage_errors": passage_errors}
    # Before the field errors: those of a revision no longer current (or of a document
    # withdrawn meanwhile) would mislead.
    try:
        services.revision_check_current(
            document=document, based_on=based_on, fact_ids=set(_edited_forms(formset))
        )
    except (services.RevisionChanged, services.DocumentWithdrawn) as exc:
        return _document_changed(request, document, exc, **forms)
    if not valid:
        return _document_page(request, document, error=_("Some values need fixing."), **forms)
    edits = [
        services.FactEdit(
            fact_id=f.cleaned_data["fact_id"],
            value=f.cleaned_data["value"],
            valid_from=f.cleaned_data["valid_from"],
            valid_until=f.cleaned_data["valid_until"],
        )
        for f in formset.forms
        if f.has_changed()
    ]
    if not edits and not passages:
        if not note_form.cleaned_data["note"]:
            messages.info(request, _("Nothing changed, so nothing was published."))
            return redirect("sources:document", key=document.key)
        # A revision is a new source: every answer quoting this one would go back to a
        # reviewer as "Source revised", for a document that says the same.
        return _document_page(request, document, error=_(
            "Nothing was published: the values and passages are as they were. A revision "
            "with only a note would send every answer quoting this document back to "
            "reviewers, for a document that says the same. Change a value or a passage, "
            "or leave the note out."), **forms)
    if based is not None and not request.POST.get("passages_checked") and (
            left := services.passages_left_behind(based, edits, passages)):
        return _document_page(
            request, document,
            error=_("Nothing was published: check that the passages no longer say the values "
                    "you corrected.") if any(row.unsaid for row in left)
            else _("Nothing was published: a passage still says the value you corrected."),
            passages_left_behind=[
                (_("Passage %(span)s is unchanged, while %(fact)s goes from %(old)s to %(new)s: "
                   "check that it does not still say the old value in words.") if row.unsaid
                 else _("Passage %(span)s still says %(old)s, not %(new)s (%(fact)s).")) % {
                    "span": row.span, "old": json.dumps(row.old, ensure_ascii=False),
                    "new": json.dumps(row.new, ensure_ascii=False), "fact": _fact_name(row.fact)}
                for row in left],
            **forms)
    return _publish_then_progress(
        request,
        document,
        lambda: services.revision_publish_corrected(
            document=document,
            edits=edits,
            note=note_form.cleaned_data["note"],
            actor=Actor.of_user(request.user),
            user=request.user,
            based_on=based_on,
            passages=passages,
        ),
        **forms,
    )


@login_required
@require_POST
def document_end_validity(request: HttpRequest, key: str) -> HttpResponse:
    _require_owner(request)
    document = _document_or_404(request, key)
    if refused := _refuse_unreadable(request, document):
        return refused
    form = EndValidityForm(request.POST)
    if not form.is_valid():
        last_day = (_("Choose the last valid day.") if not request.POST.get("last_day", "").strip()
                    else _("Give the last valid day as YYYY-MM-DD."))
        problems = {
            "fact_id": _("Choose the fact again: reload the page."),
            "last_day": last_day,
            "note": _("Keep the note to %(limit)s characters at most.") % {
                "limit": grouped(EndValidityForm.base_fields["note"].max_length or 0)},
        }
        error = " ".join(str(problems[name]) for name in form.errors if name in problems)
        return _document_page(
            request, document, end_form=form, error=error or _("Some values need fixing.")
        )
    data = form.cleaned_data
    return _publish_then_progress(
        request,
        document,
        lambda: services.fact_end_validity(
            document=document,
            fact_id=data["fact_id"],
            last_day=data["last_day"],
            note=data["note"],
            actor=Actor.of_user(request.user),
            user=request.user,
        ),
        end_form=form,
    )


def _publish_then_progress(
    request: HttpRequest, document: Document, publish: Any, **page: Any
) -> HttpResponse:
    since = timezone.now()
    before = _conflict_documents(document.key)
    waiting = selectors.answers_waiting_on(document.key, request.user)
    try:
        result = publish()
    except (services.RevisionChanged, services.DocumentWithdrawn) as exc:
        # Another revision was published (or the document withdrawn) between the page's
        # checks and this one.
        return _document_changed(request, document, exc, **page)
    except FieldError as exc:
        end_form = page.get("end_form")
        error = exc.message
        if end_form is not None and exc.field in end_form.fields:
            # Said in the owner's language, on the field's own label (the fact, a hidden
            # field, has none: its refusal is a sentence of its own).
            refusal = gettext(exc.field_message)
            if end_form[exc.field].is_hidden:
                error = refusal
            else:
                end_form.add_error(exc.field, capfirst(refusal))
                error = f"{end_form[exc.field].label}: {refusal}"
        return _document_page(request, document, error=error, **page)
    except DomainError as exc:
        messages.error(request, exc.message)
        return redirect("sources:document", key=document.key)
    messages.success(
        request,
        _("Published revision %(revision)s. Answers citing it are re-evaluated.")
        % {"revision": result.revision.revision},
    )
    if waiting:
        messages.info(request, ngettext(
            "%(n)d held answer citing this document waits for an owner's reply: with its "
            "new verdict it goes back to the reviewers, and the hand-off ends.",
            "%(n)d held answers citing this document wait for an owner's reply: with their "
            "new verdicts they go back to the reviewers, and the hand-offs end.",
            waiting) % {"n": waiting})
    return _progress_redirect(request, [document.key, *before,
                                        *_conflict_documents(document.key)], since)


def _conflict_documents(key: str) -> list[str]:
    """The documents `key` shares a conflict with: read before a change as well as after it,
    since the change may take it out of a conflict whose other documents' answers it sends
    to re-evaluation all the same."""
    rows = Conflict.objects.filter(documents__contains=[key]).values_list("documents", flat=True)
    return [k for documents in rows for k in documents]


@login_required
@require_POST
def document_withdraw(request: HttpRequest, key: str) -> HttpResponse:
    _require_owner(request)
    document = _document_or_404(request, key)
    typed = request.POST.get("confirm", "")
    if typed != document.key:
        # Said at the field, with what was typed kept, as every other form of the page does.
        return _document_page(request, document, status=400, withdraw_typed=typed[:200],
                              withdraw_error=_("Type the document id to confirm the withdrawal."))
    since = timezone.now()
    keys = [document.key, *_conflict_documents(document.key)]
    withdrawn = services.document_withdraw(document_key=document.key,
                                           actor=Actor.of_user(request.user)).document
    if document.withdrawn_at is not None or (
            withdrawn.withdrawn_at is not None and withdrawn.withdrawn_at < since):
        # Withdrawn before this request (a page left open, or someone else meanwhile): the
        # service did nothing, and there is no re-evaluation to follow.
        messages.info(request, _("This document was already withdrawn; nothing changed."))
        return redirect("sources:document", key=document.key)
    messages.success(request, _("Document withdrawn. Answers citing it are re-evaluated."))
    return _progress_redirect(request, keys, since)


@login_required
@require_POST
def document_restore(request: HttpRequest, key: str) -> HttpResponse:
    """Undo a withdrawal from the document's page: its last revision is current again."""
    _require_owner(request)
    document = _document_or_404(request, key)
    since = timezone.now()
    restored = services.document_restore(document_key=document.key,
                                         actor=Actor.of_user(request.user))
    if restored is None or restored.again:
        # Restored or republished before this request: nothing changed, nothing to follow.
        messages.info(request, _("This document is not withdrawn; nothing changed."))
        return redirect("sources:document", key=document.key)
    messages.success(request, _("Restored revision %(revision)s. Answers citing it are "
                                "re-evaluated.") % {"revision": restored.revision.revision})
    return _progress_redirect(request, [document.key, *_conflict_documents(document.key)], since)


@login_required
@require_GET
def progress(request: HttpRequest) -> HttpResponse:
    """The re-evaluations the signed-in person's last action started, with progress bars."""
    _require_owner(request)
    if refused := _refuse_progress_params(request):
        return refused
    from reviewqueue.jobs.models import Job

    keys = selectors.documents_visible_to(request.user, _progress_documents(request))
    since = _moment(request.GET.get("since"), timezone.now() - timedelta(minutes=10))
    until = _moment(request.GET.get("until"), None)
    problems = {name: _("give a date and time between %(first)s and %(last)s, such as "
                        "%(example)s.") % {
                            "first": SearchDateField.FIRST, "last": SearchDateField.LAST,
                            "example": timezone.now().replace(microsecond=0).isoformat()}
                for name, moment in (("since", since), ("until", until))
                if moment is None and request.GET.get(name) is not None}
    if not problems and until is not None and until < since:
        problems["until"] = _("must not be before since.")
    if _conflict_number(request.GET.get("conflict", "0")) is None:
        problems["conflict"] = _("must be the number of a conflict, such as 12.")
    if problems:
        # The same page without the moments shows the last ten minutes' changes.
        kept = [("documents", key) for key in request.GET.getlist("documents")]
        return render(request, "bad_params.html", {
            "heading": _("This link's times cannot be used"),
            "problems": list(problems.items()),
            "without_url": f"{request.path}?{urlencode(kept)}" if kept else request.path,
        }, status=400)
    # A link the change made holds the moments just before and after it, read by the process
    # that made it and stamped its rows; a link without `until` is given a few seconds' slack.
    window = (since, until) if until else (since - timedelta(seconds=5), None)
    jobs = Job.objects.filter(requested_by=request.user, document_key__in=keys,
                              created_at__gte=window[0])
    if window[1]:
        jobs = jobs.filter(created_at__lte=window[1])
    jobs = list(jobs.order_by("created_at")[:50])
    changes, cut = selectors.conflict_changes_by(request.user, keys, *window)
    return render(request, "sources/progress.html", {
        "jobs": jobs, "documents": keys, "since": since, "until": until,
        "changed_total": sum(job.changed for job in jobs),
        "conflict_changes": changes, "conflict_changes_cut": cut,
        "decided": _decided(request, *window),
        "standing": _standing(jobs, request.user),
        "made": selectors.changes_made_by(request.user, keys, *window),
    })


def _standing(jobs: list[Any], user: Any) -> dict[str, Any] | None:
    """Where the answers the jobs reached that `user` may read stand now, in words, once every
    job has ended; until then the page reloads itself when one ends."""
    from reviewqueue.jobs.selectors import STANDING_CAP, where_answers_stand
    from reviewqueue.reviews.labels import reason_label
    from reviewqueue.reviews.models import Answer

    if not jobs or not all(job.ended for job in jobs):
        return None
    rows, capped, later = where_answers_stand(jobs, user)
    return {"rows": [{**row, "label": Answer.Status(row["status"]).label,
                      "reason": reason_label(row["reason"])
                      if row["status"] == Answer.Status.HELD and row["reason"] else ""}
                     for row in rows],
            "capped": STANDING_CAP if capped else None,
            "moved_by_change": sum(row["moved_any"] for row in rows), "changed_later": later}


def _decided(request: HttpRequest, since: datetime, until: datetime | None
             ) -> dict[str, Any] | None:
    """The dismissal or reopening the link names (`conflict`), with what the conflict holds
    now; none when the person did not make it in the link's window."""
    number = _conflict_number(request.GET.get("conflict", ""))
    decision = selectors.conflict_decision_by(request.user, number, since, until) \
        if number else None
    if decision is None:
        return None
    conflict = decision.conflict
    return {"decision": decision,
            "held": selectors.held_answer_counts([conflict], request.user)[conflict.pk]
            if conflict.status != Conflict.Status.CLOSED else None}


def _conflict_number(raw: str) -> int | None:
    return int(raw) if raw.isascii() and raw.isdigit() and len(raw) < 19 else None


PROGRESS_PARAMS = ("documents", "since", "until", "conflict")
PROGRESS_DOCUMENTS_MAX = 50


def _refuse_progress_params(request: HttpRequest) -> HttpResponse | None:
    """As `refuse_unknown_params`, but `documents` comes once per document."""
    problems = param_problems(request.GET, frozenset(PROGRESS_PARAMS))
    if problems.get("documents") == GIVEN_TWICE:
        del problems["documents"]
    if not problems:
        return None
    kept = [(name, value) for name in PROGRESS_PARAMS if name not in problems
            for value in request.GET.getlist(name)]
    return render(request, "bad_params.html", {
        "problems": [(name, gettext(problem)) for name, problem in problems.items()],
        "without_url": f"{request.path}?{urlencode(kept)}" if kept else request.path,
    }, status=400)


def _progress_documents(request: HttpRequest) -> list[str]:
    """The document ids of a progress link, one `documents` parameter each. Links made
    earlier joined them with commas in one (documents=a,b), so a value's pieces are read as
    well as the value itself; the caller keeps only the documents the person may see."""
    keys: list[str] = []
    for value in request.GET.getlist("documents")[:PROGRESS_DOCUMENTS_MAX]:
        keys.append(value)
        if "," in value:
            keys.extend(k for k in value.split(",") if k)
    return keys[:2 * PROGRESS_DOCUMENTS_MAX]


def _moment(raw: str | None, default: datetime | None) -> datetime | None:
    """The `since` or `until` of a progress link, `default` without one, None if unusable:
    not a date and time, or too far from now to count back from (0001-01-01 minus seconds
    is no date at all)."""
    if raw is None:
        return default
    try:
        since = datetime.fromisoformat(raw)
    except ValueError:
        return None
    if not SearchDateField.FIRST <= since.date() <= SearchDateField.LAST:
        return None
    return timezone.make_aware(since) if timezone.is_naive(since) else since
