"""Pages of the reviewer's workspace: the queue and the item page, plus their small POSTs.

Everything works without JavaScript; static/js adds keyboard shortcuts, lease renewal while a
page stays open and the record of which passages a reviewer opened.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from functools import wraps
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    HttpResponseRedirect,
    JsonResponse,
    QueryDict,
    RawPostDataException,
)
from django.shortcuts import render
from django.urls import reverse
from django.utils import formats, timezone
from django.utils.html import format_html
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views.decorators.http import require_POST

from reviewqueue.accounts.models import Role
from reviewqueue.accounts.principals import user_principals
from reviewqueue.accounts.roles import has_role
from reviewqueue.audit.services import Actor
from reviewqueue.errors import FieldError, NotFound
from reviewqueue.params import refuse_unknown_params
from reviewqueue.reviews.forms import (
    ApproveForm,
    EditForm,
    RejectForm,
    blank_row,
    cite_list,
    claim_formset,
    claim_rows,
)
from reviewqueue.reviews.labels import (
    REASONS,
    decision_label,
    explain_finding,
    reason_label,
    reject_reason_label,
    show_value,
    verdict_reason_label,
)
from reviewqueue.reviews.models import Answer, Verdict
from reviewqueue.reviews.selectors.answers import (
    conflicts_of_answer,
    owners_to_ask,
    owners_who_may_read,
    user_may_read_answer,
)
from reviewqueue.reviews.selectors.item import ItemPage, item_page
from reviewqueue.reviews.selectors.queue import (
    CLAIM_FILTERS,
    DEFAULT_LIMIT,
    HANDOFF_FILTERS,
    MAX_LIMIT,
    ORDERS,
    BadCursor,
    Cursor,
    QueueFilters,
    documents_like,
    queue_page,
)
from reviewqueue.reviews.services.decisions import (
    NOTHING_CHANGED,
    ApproveRefused,
    ClaimsOnHiddenFacts,
    ClaimsUnsaid,
    EditRefused,
    RecordedBefore,
    StaleVerdict,
    answer_decide,
    passage_expansion_record,
)
from reviewqueue.reviews.services.leases import (
    AdminOnly,
    LeasedByOther,
    LeaseLost,
    NotHeld,
    lease_claim,
    lease_claim_oldest,
    lease_leave,
    lease_release,
    lease_renew,
    lease_seconds,
)
from reviewqueue.sources.selectors import reasons_shown
from reviewqueue.textlimit import grouped

View = Callable[..., HttpResponse]


def reviewer_required(view: View) -> View:
    """Signed in, and a reviewer or an admin; anyone else gets 403."""

    @login_required
    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not has_role(request.user, Role.REVIEWER, Role.ADMIN):
            raise PermissionDenied
        return view(request, *args, **kwargs)

    return wrapper


def _actor(request: HttpRequest) -> Actor:
    return Actor.of_user(request.user)


def _when(moment: Any) -> str:
    """A lease's end, or a decision made meanwhile, as the page writes it: the time, and the
    day only when it is not today. Never the locale's long format, whose "p.m." would end the
    sentence twice."""
    local = timezone.localtime(moment)
    same_day = local.date() == timezone.localdate()
    return formats.date_format(local, "H:i e" if same_day else "Y-m-d H:i e")


def _held_by_message(exc: LeasedByOther) -> str:
    return _("%(holder)s is working on this answer until %(until)s.") % {
        "holder": exc.holder, "until": _when(exc.until)}


# What became of a request refused because someone else holds the answer. The page it comes
# back to says who and until when, in its lease box: the message does not say it again.
NOT_STARTED = gettext_lazy("Not started: another reviewer is working on this answer.")
NOT_RELEASED = gettext_lazy("Not released: another reviewer is working on this answer.")
NOT_RECORDED = gettext_lazy("Not recorded: another reviewer is working on this answer.")


def _filters(params: QueryDict) -> QueueFilters:
    claim = params.get("claim", "all")
    reason = params.get("reason", "")
    return QueueFilters(
        reason=reason if reason in REASONS else "",
        document=params.get("document", "").strip()[:200],
        release=params.get("release", "").strip()[:200],
        claim=claim if claim in CLAIM_FILTERS else "all",
        handoff=handoff if (handoff := params.get("handoff", "")) in HANDOFF_FILTERS else "",
        order=order if (order := params.get("order", "oldest")) in ORDERS else "oldest",
    )


QUEUE_PARAMS = ("reason", "document", "release", "claim", "handoff", "order", "cursor",
                "limit")


def _back(request: HttpRequest) -> str:
    """The query of the queue page the reviewer came from (its filters and page), carried as
    `back` through the item page and its forms so that "Queue" and every decision return
    there. Only the queue's own parameters are kept: the target is always the queue."""
    raw = request.POST.get("back") or request.GET.get("back") or ""
    query = QueryDict(raw[:2000])
    return urlencode([(name, query[name]) for name in QUEUE_PARAMS
                      if query.get(name) and len(query.getlist(name)) == 1])


def _back_to_queue(back: str) -> str:
    url = reverse("reviews:queue")
    return f"{url}?{back}" if back else url


def _queue_url(filters: QueueFilters, **extra: str) -> str:
    params = {**filters.as_params(), **{k: v for k, v in extra.items() if v}}
    url = reverse("reviews:queue")
    return f"{url}?{urlencode(params)}" if params else url


def _readable_answer(request: HttpRequest, trace_id: str) -> Answer:
    answer = Answer.objects.filter(trace_id=trace_id).first()
    if answer is None or not user_may_read_answer(answer, user_principals(request.user)):
        raise Http404("No such answer")
    return answer


def _item_url(trace_id: str, back: str = "") -> str:
    url = reverse("reviews:item", args=[trace_id])
    return f"{url}?{urlencode({'back': back})}" if back else url


# --- Queue ------------------------------------------------------------------------------------

@login_required
def queue(request: HttpRequest) -> HttpResponse:
    # The page everyone lands on after signing in: an owner who is not also a reviewer is sent
    # to their own page instead of a refusal.
    if not has_role(request.user, Role.REVIEWER, Role.ADMIN):
        if has_role(request.user, Role.OWNER):
            return HttpResponseRedirect(reverse("sources:inbox"))
        raise PermissionDenied
    return _queue(request)


def _queue(request: HttpRequest) -> HttpResponse:
    if refused := refuse_unknown_params(request, QUEUE_PARAMS):
        return refused
    filters = _filters(request.GET)
    # `_filters` leaves out a value it does not know; the reader is told which.
    ignored = [f"{name}={value[:40]}" for name, known in (("reason", REASONS),
                                                          ("claim", CLAIM_FILTERS),
                                                          ("handoff", HANDOFF_FILTERS),
                                                          ("order", ORDERS))
               if (value := request.GET.get(name, "")) and value not in known]
    if ignored:
        messages.info(request, _("Not a value this filter knows, so it was left out: "
                                 "%(filters)s.") % {"filters": ", ".join(ignored)})
    cursor = None
    if request.GET.get("cursor"):
        try:
            cursor = Cursor.decode(request.GET["cursor"])
        except BadCursor:
            messages.info(request, _("That page link was not valid; here is the first page."))
    try:
        limit = max(1, min(int(request.GET.get("limit", DEFAULT_LIMIT)), MAX_LIMIT))
    except ValueError:
        limit = DEFAULT_LIMIT
    principals = user_principals(request.user)
    page = queue_page(principals=principals, filters=filters, user=request.user,
                      cursor=cursor, limit=limit)
    limit_param = str(limit) if limit != DEFAULT_LIMIT else ""
    context = {
        "page": page,
        "filters": filters,
        "reasons": [(r, reason_label(r)) for r in REASONS],
        "claim_choices": [("all", _("All")), ("unclaimed", _("Unclaimed")),
                          ("mine", _("Mine"))],
        "order_choices": [("oldest", _("Oldest first")), ("newest", _("Newest first"))],
        "handoff_choices": [("waiting", _("Waiting for the owner")),
                            ("replied", _("The owner replied"))],
        "next_url": _queue_url(filters, cursor=page.next_cursor or "", limit=limit_param)
        if page.next_cursor else None,
        "previous_url": _queue_url(filters, cursor=page.previous_cursor or "",
                                   limit=limit_param) if page.previous_cursor else None,
        "first_url": _queue_url(filters, limit=limit_param) if page.previous_cursor else None,
        "count_links": [
            (c, _queue_url(replace(filters, reason=c.reason)))
            for c in page.counts if c.count or c.reason == filters.reason
        ],
        "all_reasons_url": _queue_url(replace(filters, reason="")),
        "now": timezone.now(),
        "back": request.GET.urlencode(),
        # This page of the queue however its address was written (queue.js finds the row the
        # reviewer was on when they come back to it).
        "queue_key": _queue_url(filters, cursor=request.GET["cursor"] if cursor else "",
                                limit=limit_param),
        # A row's document or release link narrows the filters the reader already has.
        "keep_for_document": _kept_filters(filters, "document"),
        "keep_for_release": _kept_filters(filters, "release"),
        "keep_for_handoff": _kept_filters(filters, "handoff"),
        # The filter matches ids and titles whole: when it named nothing, say so and offer
        # the near ones (None: it named a document).
        "documents_like": _documents_like(filters, principals, request.user)
        if filters.document and not page.rows else None,
    }
    return render(request, "reviews/queue.html", context)


def _documents_like(filters: QueueFilters, principals: Any, user: Any
                    ) -> list[tuple[str, str]] | None:
    like = documents_like(filters.document, principals, user)
    if like is None:
        return None
    return [(title, _queue_url(replace(filters, document=key)))
            for key, title in like]


def _kept_filters(filters: QueueFilters, replaced: str) -> str:
    """The query of `filters` without `replaced`, ready to have it appended: "reason=x&"."""
    kept = {k: v for k, v in filters.as_params().items() if k != replaced}
    return f"{urlencode(kept)}&" if kept else ""


@require_POST
@reviewer_required
def next_item(request: HttpRequest) -> HttpResponse:
    return _open_next(request, _filters(request.POST), _back(request))


def _open_next(request: HttpRequest, filters: QueueFilters, back: str) -> HttpResponse:
    """Claim the first unclaimed answer under `filters`, in their order, and open it; or say
    there is none and go back to the queue."""
    answer = lease_claim_oldest(filters=filters, user=request.user, actor=_actor(request))
    if answer is None:
        messages.info(request, _("Answers waiting for their owners are not handed out: open "
                                 "one from the list.") if filters.handoff == "waiting"
                      else _("Nothing unclaimed matches these filters.") if filters.as_params()
                      else _("Nothing unclaimed is waiting for you."))
        return HttpResponseRedirect(_back_to_queue(back) if back else _queue_url(filters))
    return HttpResponseRedirect(_item_url(answer.trace_id, back))


# Where a decision leads, as the reviewer last chose it on the Decide box: "next" opens the next
# unclaimed answer under the queue's filters, anything else goes back to the queue.
AFTER_DECISION = "after_decision"


def _then_next(request: HttpRequest) -> bool:
    """Whether this decision leads to the next answer; remembers the choice it was sent with."""
    then = request.POST.get("then")
    if then in ("next", "queue") and request.session.get(AFTER_DECISION) != then:
        request.session[AFTER_DECISION] = then  # saved only when it changes
    return request.session.get(AFTER_DECISION) == "next"


# --- Leases -------------------------------------------------------------------------------------

@require_POST
@reviewer_required
def claim(request: HttpRequest, trace_id: str) -> HttpResponse:
    answer = _readable_answer(request, trace_id)
    try:
        lease_claim(answer=answer, user=request.user, actor=_actor(request))
    except LeasedByOther:
        messages.warning(request, NOT_STARTED)
    except NotHeld:
        messages.info(request, _("This answer is no longer waiting for review."))
    return HttpResponseRedirect(_item_url(trace_id, _back(request)))


@require_POST
@reviewer_required
def release(request: HttpRequest, trace_id: str) -> HttpResponse:
    answer = _readable_answer(request, trace_id)
    force = request.POST.get("force") == "1"
    back = _back(request)
    try:
        released = lease_release(answer=answer, user=request.user, actor=_actor(request),
                                 force=force)
    except LeasedByOther:
        messages.warning(request, NOT_RELEASED)
        return HttpResponseRedirect(_item_url(trace_id, back))
    except NotHeld:
        return HttpResponseRedirect(_back_to_queue(back))
    except AdminOnly as exc:
        raise PermissionDenied from exc
    if force:
        if released:
            messages.success(request, _("The lease was broken; the answer is free again."))
        return HttpResponseRedirect(_item_url(trace_id, back))
    if released:
        messages.success(request, _("Released. The answer is back in the queue."))
    return HttpResponseRedirect(_back_to_queue(back))


@require_POST
@reviewer_required
def renew(request: HttpRequest, trace_id: str) -> HttpResponse:
    """Called every few minutes by item.js while the page stays open: extends the user's own
    lease, never claims the item again (a 409 makes the page say the lease is lost)."""
    answer = _readable_answer(request, trace_id)
    try:
        lease = lease_renew(answer=answer, user=request.user)
    except LeasedByOther as exc:
        return JsonResponse({"error": exc.code, "holder": exc.holder,
                             "until": exc.until.isoformat(),
                             "message": _held_by_message(exc)}, status=409)
    except NotHeld:
        return JsonResponse({"error": "not_held",
                             "message": _("This answer is no longer waiting for review.")},
                            status=409)
    except LeaseLost as exc:
        said = {
            "released": _("You released this answer, in another tab or window: nobody is "
                          "working on it now. Reload the page and start reviewing again to "
                          "decide."),
            "broken": _("Your lease on this answer has ended: an admin broke it. Reload the "
                        "page and start reviewing again to decide."),
        }.get(exc.why or "", _("Your lease on this answer has ended: it expired. Reload the "
                               "page and start reviewing again to decide."))
        return JsonResponse({"error": exc.code, "message": said}, status=409)
    until = timezone.localtime(lease.until) if lease.until else None
    # `until_shown` as the page writes it, for the page to show the renewed time.
    return JsonResponse({"holder": lease.holder,
                         "until": until.isoformat() if until else None,
                         "until_shown": formats.date_format(until, "H:i") if until else None})


@require_POST
@reviewer_required
def leave(request: HttpRequest, trace_id: str) -> HttpResponse:
    """Sent by item.js as the reviewer's item page goes away, with the lease end it last knew:
    the lease then lapses within a minute or so unless a page of it renews again."""
    answer = _readable_answer(request, trace_id)
    try:
        seen = datetime.fromisoformat(str(json.loads(request.body or b"{}")["until"]))
        if seen.tzinfo is None:
            return JsonResponse({"error": "invalid", "detail": "until: the offset is missing"},
                                status=400)
        seen = seen.astimezone(UTC)  # PostgreSQL holds offsets up to 15:59, Python to 23:59
    except (ValueError, KeyError, TypeError, RecursionError, OverflowError,
            RawPostDataException):  # a form body, read already as a form (RefuseNulMiddleware)
        return JsonResponse({"error": "invalid",
                             "detail": "until: a date and time with its offset, as renew "
                                       "answered"}, status=400)
    shortened = lease_leave(answer=answer, user=request.user, seen_until=seen)
    return JsonResponse({"shortened": shortened})


@require_POST
@reviewer_required
def expanded(request: HttpRequest, trace_id: str) -> HttpResponse:
    """item.js reports that the reviewer opened a cited passage."""
    answer = _readable_answer(request, trace_id)
    try:
        body = json.loads(request.body or b"{}")
        cite, verdict_id = str(body["cite"]), int(body["verdict"])
        # PostgreSQL takes neither a NUL nor a lone surrogate (which cannot be encoded: a
        # ValueError), and no cite holds one.
        if "\x00" in cite:
            raise ValueError(cite)
        cite.encode()
    except (ValueError, KeyError, TypeError, RecursionError, OverflowError,
            RawPostDataException):
        return JsonResponse({"error": "invalid"}, status=400)
    try:
        passage_expansion_record(answer=answer, verdict_id=verdict_id, user=request.user,
                                 cite=cite)
    except FieldError as exc:
        return JsonResponse({"error": "invalid", "detail": exc.message}, status=400)
    return HttpResponse(status=204)


# --- Item page and decisions ------------------------------------------------------------------

@login_required
def item(request: HttpRequest, trace_id: str) -> HttpResponse:
    """Reviewers and admins work here; an owner (their inbox links here) only reads the page,
    under the same readability check."""
    reviewer = has_role(request.user, Role.REVIEWER, Role.ADMIN)
    if not reviewer and not has_role(request.user, Role.OWNER):
        raise PermissionDenied
    page = item_page(trace_id=trace_id, user=request.user)
    if page is None:
        raise Http404("No such answer")
    return _render_item(request, page, read_only=not reviewer)


def _forms(page: ItemPage, data: QueryDict | None = None) -> dict[str, Any]:
    version = page.answer.current_version
    assert version is not None
    verdict = {"verdict": page.verdict.pk, "held": page.lease.mine}
    if data is not None:
        # Keep what the reviewer typed, but bind it to the verdict and the lease the page now
        # shows.
        data = data.copy()
        for prefix in ("approve", "reject", "edit"):
            data[f"{prefix}-verdict"] = str(page.verdict.pk)
            data[f"{prefix}-held"] = str(page.lease.mine)
    return {
        # Drawn again after a refusal, the approval keeps its comment but asks afresh about
        # the claims that do not hold now: the box is not ticked, and no error says it must be.
        "approve_form": ApproveForm(
            initial={**verdict, "comment": data.get("approve-comment", "")}
            if _posted(data, "approve") else verdict, contradicted=page.contradicted,
            unchecked=page.unchecked),
        "reject_form": RejectForm(data if _posted(data, "reject") else None, initial=verdict),
        "edit_form": EditForm(data if _posted(data, "edit") else None,
                              initial={**verdict, "answer": version.text}),
        "claims_formset": claim_formset(
            data=data if _posted(data, "edit") else None, claims=version.claims,
            cites=page.cites,
        ),
    }


def _owner_rows(answer: Answer, reader: Any, conflict_records: list[Any]
                ) -> list[tuple[str, bool]]:
    """(username, would be asked) for each owner of the sources: an owner who may not read the
    answer in full is named but not sent it (see review_item_send_to_owner)."""
    owners = owners_to_ask(answer, reader, conflict_records)
    asked = {o.pk for o in owners_who_may_read(answer, owners)}
    return sorted((o.get_username(), o.pk in asked) for o in owners)


def _posted(data: QueryDict | None, action: str) -> bool:
    return data is not None and data.get("action") == action


def _render_item(request: HttpRequest, page: ItemPage, *, status: int = 200,
                 forms: dict[str, Any] | None = None, read_only: bool = False,
                 **extra: Any) -> HttpResponse:
    """`read_only`: the page without any form or button that changes something (an owner's)."""
    conflict_records = conflicts_of_answer(page.answer)
    owners = _owner_rows(page.answer, request.user, conflict_records)
    forms = forms or _forms(page)
    back = _back(request)
    context = {
        "back": back,
        "queue_url": _back_to_queue(back),
        "page": page,
        "read_only": read_only,
        "may_decide": page.may_decide and not read_only,
        "conflict_records": conflict_records,
        "reasons_shown": reasons_shown(conflict_records, request.user),
        "owners": owners,
        "may_ask_owner": any(asked for _, asked in owners),
        # One of the owners asked, reading the page while the reviewer waits for them.
        "may_reply": bool(page.waiting_on and request.user.pk in page.waiting_on.owners
                          and owners_who_may_read(page.answer, [request.user])),
        "lease_seconds": lease_seconds(),
        "is_admin": has_role(request.user, Role.ADMIN),
        "open_form": "",
        "then_next": request.session.get(AFTER_DECISION) == "next",
        **forms,
        "claim_rows": claim_rows(forms["claims_formset"]),
        "cite_list": cite_list(page.cites),
        "blank_row": blank_row(forms["claims_formset"]),
        # Read here, not as `claims_formset.management_form` in the template: the template
        # tries `claims_formset["management_form"]` first, which builds every form.
        "claims_management": forms["claims_formset"].management_form,
        "claims_errors": forms["claims_formset"].non_form_errors(),
        **extra,
    }
    return render(request, "reviews/item.html", context, status=status)


def _posted_id(shown: str) -> int | None:
    """The id a form's hidden field carries, None when it names none."""
    return int(shown) if shown.isascii() and shown.isdigit() and len(shown) < 19 else None


@require_POST
@reviewer_required
def decide(request: HttpRequest, trace_id: str) -> HttpResponse:
    action = request.POST.get("action", "")
    then_next = _then_next(request)  # remembered even when the decision is refused
    page = item_page(trace_id=trace_id, user=request.user)
    if page is None:
        raise Http404("No such answer")
    form_class = {"approve": ApproveForm, "reject": RejectForm, "edit": EditForm}.get(action)
    forms = _forms(page, request.POST)
    if form_class is None:
        return _render_item(request, page, status=400, forms=forms)
    # Bound to exactly what was posted, including the verdict id the reviewer saw; an approval
    # asks again about the claims that do not hold now, whatever the page showed, unless it
    # was made on an older verdict that told otherwise: that is refused as stale, with what
    # changed. (One that told the same is decided on: it asks too.)
    posted = _posted_id(request.POST.get("approve-verdict", ""))
    asks = posted is not None and page.asks_despite(posted)
    form = (ApproveForm(request.POST, contradicted=page.contradicted if asks else None,
                        unchecked=page.unchecked)
            if action == "approve" else form_class(request.POST))
    forms[f"{action}_form"] = form
    claims_formset = forms["claims_formset"]
    valid = form.is_valid() and (action != "edit" or claims_formset.is_valid())
    if not valid:
        # Drawn again bound to the verdict the page shows now: when a re-evaluation replaced
        # the one the form was drawn with, the page says so before it is sent again.
        replaced = page.replaced(_posted_id(request.POST.get(f"{action}-verdict", "")))
        return _render_item(request, page, status=400, forms=forms, open_form=action,
                            **({"stale": replaced} if replaced else {}))
    extra = {"claims": claims_formset.claims()} if action == "edit" else {}
    data = form.to_input(**extra)
    try:
        result = answer_decide(trace_id=trace_id, user=request.user, actor=_actor(request),
                               data=data)
    except StaleVerdict as exc:
        return _render_refused(
            request, trace_id, action,
            stale={"decision": decision_label(exc.verdict.decision),
                   "reason": verdict_reason_label(exc.verdict.reason),
                   "edited": exc.edited, "day_passed": exc.day_passed},
        )
    except EditRefused as exc:
        # Drawn afresh: the refusal kept the lease the edit took, which the page must show
        # (and renew).
        return _render_refused(
            request, trace_id, "edit", status=400,
            refused={
                "reason": verdict_reason_label(exc.verdict.reason),
                "sentences": [explain_finding(f.to_dict(), data.claims or [])
                              for f in exc.verdict.findings],
            },
        )
    except ApproveRefused as exc:
        form.add_error(None, _(
            "Nothing was recorded: the gate abstains on this answer (%(reason)s), so it cannot "
            "be approved. Reject it, or edit it so that the gate no longer abstains.") % {
            "reason": verdict_reason_label(exc.verdict.reason)})
        return _render_item(request, page, status=409, forms=forms, open_form=action)
    except LeasedByOther:
        messages.warning(request, NOT_RECORDED)
        return _render_refused(request, trace_id, action, why=NOT_RECORDED)
    except LeaseLost:
        lost = _(
            "Nothing was recorded: your lease on this answer ended while you worked on it (an "
            "admin broke it, or it expired). What you wrote is kept; send it again to take the "
            "answer back and record your decision.")
        messages.warning(request, lost)
        return _render_refused(request, trace_id, action, why=lost)
    except NotHeld as exc:
        said = _not_held(exc)
        messages.info(request, said)
        return _render_refused(request, trace_id, action, why=said)
    except RecordedBefore as exc:
        said = _recorded_before(exc.decision)
        messages.info(request, said)
        return _render_refused(request, trace_id, action, why=said)
    except (ClaimsOnHiddenFacts, ClaimsUnsaid) as exc:
        # Each claim named by its number on the page; the unsaid ones at the box that lets
        # the reviewer confirm them.
        if isinstance(exc, ClaimsUnsaid):
            field, said = "claims_checked", ngettext(
                "Nothing was saved: claim %(claims)s states a value the text said before your "
                "edit and no longer says. The gate checks the claims, not the text: change the "
                "claim too, or tick the box if it is right as it is.",
                "Nothing was saved: claims %(claims)s state values the text said before your "
                "edit and no longer says. The gate checks the claims, not the text: change the "
                "claims too, or tick the box if they are right as they are.",
                len(exc.numbers))
        else:
            field, said = None, ngettext(
                "Nothing was saved: the gate checks claim %(claims)s against a document you may "
                "not read, so changing it would tell you what that document says. Leave it as "
                "it was or remove it; a reviewer who may read the document can change it.",
                "Nothing was saved: the gate checks claims %(claims)s against a document you "
                "may not read, so changing them would tell you what that document says. Leave "
                "them as they were or remove them; a reviewer who may read the document can "
                "change them.",
                len(exc.numbers))
        form.add_error(field, said % {"claims": ", ".join(map(str, exc.numbers))})
        return _render_item(request, page, status=400, forms=forms, open_form=action)
    except FieldError as exc:
        # A hidden field (the verdict id) shows no errors of its own: said above the form.
        shown = exc.field in form.fields and not form.fields[exc.field].widget.is_hidden
        form.add_error(exc.field if shown else None, _refusal(exc))
        return _render_item(request, page, status=400, forms=forms, open_form=action)
    except NotFound as exc:
        raise Http404("No such answer") from exc

    question = result.answer.question[:80]
    back = _back(request)
    if result.status == Answer.Status.HELD:
        # Saved, but not done: the answer still waits, so this is no success.
        messages.warning(request, _(
            "Saved the edit as version %(number)s. The gate still holds it (%(reason)s): "
            "review it and approve it explicitly.") % {
            "number": result.verdict.version.number,
            "reason": verdict_reason_label(result.verdict.reason)})
        return HttpResponseRedirect(_item_url(trace_id, back))
    done = {
        "approve": _("Approved {answer}: “{question}”."),
        "reject": _("Rejected {answer}: “{question}”."),
        "edit": _("Edited and approved {answer}: “{question}”."),
    }[action]
    # Many answers share a question: the trace id, linked, says which one it was.
    link = format_html('<a href="{}">{}</a>', reverse("reviews:item", args=[trace_id]),
                       trace_id)
    messages.success(request, format_html(done, answer=link, question=question))
    if then_next:
        return _open_next(request, _filters(QueryDict(back)), back)
    return HttpResponseRedirect(_back_to_queue(back))


def _refusal(exc: FieldError) -> str:
    """A refusal of answer_decide in the reviewer's language (the service speaks the API's; a
    blank text never gets there, EditForm refuses it)."""
    if exc.field_message == NOTHING_CHANGED:
        return _("The edit changes nothing; approve the answer instead.")
    return exc.field_message


def _recorded_before(decision: Any) -> str:
    """An approval sent again after the answer it approved came back to the queue."""
    said = {
        "approve": _("Nothing new was recorded: you approved this answer at %(when)s, and it "
                     "has come back to the queue since, as its sources changed. Read the "
                     "current verdict and decide again."),
        "edit": _("Nothing new was recorded: you edited this answer at %(when)s, and it has "
                  "come back to the queue since, as its sources changed. Read the current "
                  "verdict and decide again."),
    }[decision.action]  # a rejection is final: the answer never comes back
    return said % {"when": _when(decision.created_at)}


def _not_held(refusal: NotHeld) -> str:
    """Why a decision found nothing to decide: who decided meanwhile, and how."""
    decided = refusal.decided
    if decided is None:
        # Nobody decided it: a new verdict took it out of the queue.
        return {
            "candidate": _("This answer is no longer waiting for review: its sources changed, "
                           "and the gate now lets it through by itself."),
            "abstained": _("This answer is no longer waiting for review: its sources changed, "
                           "and the gate now abstains on it (see its verdict)."),
        }.get(refusal.status or "", _("This answer is no longer waiting for review."))
    said = {
        "approve": _("This answer is no longer waiting for review: %(reviewer)s approved it at "
                     "%(when)s."),
        "edit": _("This answer is no longer waiting for review: %(reviewer)s edited and "
                  "approved it at %(when)s."),
        "reject": _("This answer is no longer waiting for review: %(reviewer)s rejected it at "
                    "%(when)s."),
    }[decided.action]
    return said % {"reviewer": decided.reviewer.get_username(), "when": _when(decided.created_at)}


def _render_refused(request: HttpRequest, trace_id: str, action: str, *, status: int = 409,
                    bind: bool = True, why: str = "", **context: Any) -> HttpResponse:
    """The answer as it is now, with the refused form open, keeping what the reviewer typed:
    nobody loses an edit or a note to a stale verdict or to someone else's claim. `bind`
    binds the decision forms to what was posted (a decision was). `why` it was refused is
    said again beside what was written, when no form is left to hold it: the message at the
    top of the page may be out of sight."""
    fresh = item_page(trace_id=trace_id, user=request.user)
    if fresh is None:
        raise Http404("No such answer")
    forms = _forms(fresh, request.POST) if bind else _forms(fresh)
    # With no form left to hold it (someone else holds the item, or it was decided), what the
    # reviewer wrote is shown read-only, to copy.
    unsaved = [] if fresh.may_decide else _written(request.POST, action, forms)
    return _render_item(request, fresh, status=status, forms=forms, open_form=action,
                        unsaved=unsaved, unsaved_why=why if unsaved else "", **context)


def _written(data: QueryDict, action: str, forms: dict[str, Any]) -> list[tuple[str, str]]:
    """(label, text) of everything the reviewer wrote in the refused form: the answer text, the
    claims as `key = value [cite]` lines, the reject reason, the comment or the note to the
    owner."""
    claims = forms["claims_formset"]
    reason = data.get("reject-reason", "") if action == "reject" else ""
    written = [
        (_("Answer text"), data.get(f"{action}-answer", "")),
        (_("Claims"), "\n".join(_claim_line(c) for c in claims.claims())
         if action == "edit" and claims.is_valid() else ""),
        (_("Reason"), reject_reason_label(reason) if reason else ""),
        (_("Comment"), data.get(f"{action}-comment", "")),
        (_("What should the owner look at?"),
         data.get("note", "") if action == "send-to-owner" else ""),
    ]
    return [(label, text) for label, text in written if text.strip()]


def _claim_line(claim: dict[str, Any]) -> str:
    what = f"{claim['subject']}.{claim['key']}" if claim.get("subject") else claim["key"]
    return f"{what} = {show_value(claim['value'])} [{claim['cite']}]"


# --- Hand-off to the owners and re-evaluation on request ------------------------------------


@require_POST
@reviewer_required
def send_to_owner(request: HttpRequest, trace_id: str) -> HttpResponse:
    """Ask the owners of the conflicting sources instead of deciding; the item stays held."""
    from reviewqueue.reviews.services.handoff import (
        AlreadyAsked,
        NoOwnerToAsk,
        VerdictChanged,
        review_item_send_to_owner,
    )

    _readable_answer(request, trace_id)
    note = str(request.POST.get("note", ""))
    seen: Any = ...
    if "asked" in request.POST:
        seen = _posted_id(request.POST["asked"])
    try:
        review_item_send_to_owner(trace_id=trace_id, user=request.user, note=note,
                                  actor=_actor(request), seen_question=seen,
                                  seen_verdict=_posted_id(request.POST.get("verdict", "")))
    except NotFound as exc:
        raise Http404("No such answer") from exc
    except (AlreadyAsked, VerdictChanged) as exc:
        if isinstance(exc, VerdictChanged) and exc.day_passed is not None:
            text = _("Not sent: a validity date passed while you were reviewing (on %(day)s a "
                     "fact this answer rests on started or stopped holding), and the verdict "
                     "changed with it; read it below before asking the owners. What you wrote "
                     "is kept here to copy.") % {"day": f"{exc.day_passed:%Y-%m-%d}"}
        elif isinstance(exc, VerdictChanged):
            text = _("Not sent: the sources changed while you were reviewing, and the verdict "
                     "with them; read it below before asking the owners. What you wrote is "
                     "kept here to copy.")
        else:
            asked = exc.question
            text = _("Not sent: %(who)s asked the owners on %(when)s and no one has replied "
                     "yet; the question is below. What you wrote is kept here to copy.") % {
                "who": asked.asked_by.get_username() if asked.asked_by else _("A reviewer"),
                "when": _when(asked.asked_at)}
        messages.warning(request, text)
        fresh = item_page(trace_id=trace_id, user=request.user)
        if fresh is None:
            raise Http404("No such answer") from exc
        return _render_item(request, fresh, status=409, open_form="send-to-owner",
                            unsaved=[(_("What should the owner look at?"), note)],
                            unsaved_why=text)
    except (FieldError, LeasedByOther, NotHeld, NoOwnerToAsk) as exc:
        level, text, status = _handoff_refusal(exc)
        messages.add_message(request, level, text)
        return _render_refused(request, trace_id, "send-to-owner", status=status, bind=False,
                               why=text, owner_note=note)
    messages.success(request, _("Sent to the owners. The answer stays held and is marked "
                                "as waiting for them."))
    return HttpResponseRedirect(_item_url(trace_id, _back(request)))


def _handoff_refusal(exc: Exception) -> tuple[int, str, int]:
    """(message level, text, status) of a refused hand-off, in the reviewer's language."""
    from reviewqueue.reviews.services.handoff import MAX_OWNER_NOTE_CHARS, NoOwnerToAsk, NoteTooLong

    if isinstance(exc, NoteTooLong):
        return messages.ERROR, _("Nothing was sent: the note is %(length)s characters long, "
                                 "over the limit of %(limit)s. Shorten it and send it again.") % {
            "length": grouped(exc.length), "limit": grouped(MAX_OWNER_NOTE_CHARS)}, 400
    if isinstance(exc, FieldError):
        return messages.ERROR, _("Say what the owner should look at."), 400
    if isinstance(exc, LeasedByOther):
        return messages.WARNING, str(NOT_RECORDED), 409
    if isinstance(exc, NoOwnerToAsk):
        return messages.WARNING, _("None of the owners of these sources may read this answer "
                                   "in full, so it was not sent. Decide it here, or ask an "
                                   "admin."), 409
    return messages.INFO, _("This answer is no longer waiting for review."), 409


@require_POST
@login_required
def owner_reply(request: HttpRequest, trace_id: str) -> HttpResponse:
    """An owner asked about a held answer replies: the item goes back to the reviewers. From
    the inbox the owner returns there, and an empty or too long reply comes back in its card
    there; a reply refused because the wait ended opens the answer's page, which shows how.
    Either way the reason stands beside what was written, kept."""
    from reviewqueue.reviews.services.handoff import (
        MAX_OWNER_NOTE_CHARS,
        NotAsked,
        NoteTooLong,
        NotWaiting,
        review_item_owner_reply,
    )

    if not has_role(request.user, Role.OWNER, Role.ADMIN):
        raise PermissionDenied
    _readable_answer(request, trace_id)
    reply = str(request.POST.get("reply", ""))
    shown = request.POST.get("question", "")
    try:
        question = review_item_owner_reply(
            trace_id=trace_id, user=request.user, reply=reply, actor=_actor(request),
            question_id=_posted_id(shown))
    except NotFound as exc:
        raise Http404("No such answer") from exc
    except NotAsked as exc:
        raise PermissionDenied from exc
    except (FieldError, NotWaiting) as exc:
        if isinstance(exc, NoteTooLong):
            error = _("Nothing was sent: the reply is %(length)s characters long, over the limit "
                      "of %(limit)s. Shorten it and send it again.") % {
                "length": grouped(exc.length), "limit": grouped(MAX_OWNER_NOTE_CHARS)}
        elif isinstance(exc, FieldError):
            error = _("Say what the reviewer should know.")
        else:
            error = _not_waiting_text(exc, request.user.get_username())
            # The kept text is far down the page: said at the top too.
            messages.warning(request, error)
        if isinstance(exc, FieldError) and request.POST.get("from") == "inbox":
            from reviewqueue.sources.views import inbox_page

            return inbox_page(request, status=exc.status_code, refused_reply={
                "trace": trace_id, "text": reply, "error": error})
        page = item_page(trace_id=trace_id, user=request.user)
        if page is None:
            raise Http404("No such answer") from exc
        return _render_item(request, page, status=exc.status_code,
                            read_only=not has_role(request.user, Role.REVIEWER, Role.ADMIN),
                            owner_reply_text=reply, owner_reply_error=error)
    messages.success(request, _("Your reply about %(trace)s was sent to %(who)s. The answer is "
                                "back with the reviewers.") % {
        "trace": trace_id,
        "who": question.asked_by.get_username() if question.asked_by else _("the reviewers")})
    if request.POST.get("from") == "inbox":
        return HttpResponseRedirect(reverse("sources:inbox"))
    return HttpResponseRedirect(_item_url(trace_id))


def _not_waiting_text(exc: Any, username: str) -> str:
    """Why a reply was not sent (NotWaiting), in the owner's language."""
    kept = _("What you wrote is kept here to copy.")
    if exc.why == "replied" and exc.who == username:
        said = _("Not sent: you had replied already, from another window or tab, and the answer "
                 "is back with the reviewers.")
        return f"{said} {kept}"
    said = {
        "decided": _("Not sent: %(who)s has decided this answer meanwhile."),
        "left": _("Not sent: a new verdict took this answer out of the queue meanwhile."),
        "replied": _("Not sent: %(who)s replied first, and the answer is back with the "
                     "reviewers."),
        "edited": _("Not sent: %(who)s edited this answer meanwhile, which ended the wait "
                    "for the owners; it is still held, with the edited text below."),
        "ended": _("Not sent: a new revision gave this answer a new verdict, which ended the "
                   "wait for the owners."),
        "asked_again": _("Not sent: %(who)s has asked a new question since this page was "
                         "shown. Read it below and reply to it."),
    }[exc.why] % {"who": exc.who or _("a reviewer")}
    return f"{said} {kept}"


@require_POST
@reviewer_required
def reevaluate_now(request: HttpRequest, trace_id: str) -> HttpResponse:
    """Re-evaluate this answer on the current revisions and show the job's progress."""
    from reviewqueue.jobs.services import job_start_for_answers

    answer = _readable_answer(request, trace_id)
    job = job_start_for_answers([answer.pk], Verdict.Trigger.MANUAL, request.user,
                                actor=_actor(request))
    # The job's page links back to this answer (and through it to the same queue page).
    back = _back(request)
    params = {"answer": trace_id, **({"back": back} if back else {})}
    return HttpResponseRedirect(f"{job.get_absolute_url()}?{urlencode(params)}")
