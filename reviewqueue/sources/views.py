"""The document owner's pages: conflicts, expiring facts, and their resolution."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from reviewqueue.accounts.models import Role
from reviewqueue.accounts.roles import has_role
from reviewqueue.audit.services import Actor
from reviewqueue.errors import DomainError, FieldError
from reviewqueue.params import refuse_unknown_params
from reviewqueue.sources import selectors, services
from reviewqueue.sources.conflicts import conflict_dismiss, conflict_reopen
from reviewqueue.sources.forms import (
    CorrectionNoteForm,
    DismissForm,
    EndValidityForm,
    FactEditFormSet,
)
from reviewqueue.sources.models import Conflict, Document


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


def _progress_redirect(request: HttpRequest, keys: list[str], since: datetime) -> HttpResponse:
    query = urlencode({"documents": ",".join(sorted(set(keys))), "since": since.isoformat()})
    return redirect(f"{reverse('sources:progress')}?{query}")


@login_required
@require_GET
def inbox(request: HttpRequest) -> HttpResponse:
    _require_owner(request)
    if refused := refuse_unknown_params(request):
        return refused
    conflicts = list(selectors.conflicts_for_owner(request.user)[:100])
    held = selectors.held_answer_counts(conflicts)
    rows = [
        {"conflict": c, "sides": selectors.conflict_sides(c), "held": held.get(c.pk, 0)}
        for c in conflicts
    ]
    today = timezone.localdate()
    return render(
        request,
        "sources/inbox.html",
        {
            "rows": rows,
            "expiring": selectors.expiring_facts(request.user, today=today),
        "sent_to_me": selectors.answers_sent_to(request.user),
            "documents": selectors.documents_owned_by(request.user).order_by("key")[:200],
            "today": today,
        },
    )


@login_required
@require_GET
def conflict_detail(request: HttpRequest, conflict_id: int) -> HttpResponse:
    _require_owner(request)
    return _conflict_page(request, _conflict_or_404(request, conflict_id), DismissForm())


def _conflict_page(
    request: HttpRequest, conflict: Conflict, form: DismissForm, status: int = 200
) -> HttpResponse:
    context = {
        "conflict": conflict,
        "sides": selectors.conflict_sides(conflict),
        "held": selectors.held_answer_counts([conflict]).get(conflict.pk, 0),
        "dismiss_form": form,
    }
    return render(request, "sources/conflict.html", context, status=status)


@login_required
@require_POST
def conflict_dismiss_view(request: HttpRequest, conflict_id: int) -> HttpResponse:
    _require_owner(request)
    conflict = _conflict_or_404(request, conflict_id)
    form = DismissForm(request.POST)
    if not form.is_valid():
        return _conflict_page(request, conflict, form, status=400)
    since = timezone.now()
    try:
        conflict_dismiss(
            conflict_id=conflict.pk,
            reason=form.justification(),
            user=request.user,
            actor=Actor.of_user(request.user),
        )
    except DomainError as exc:
        messages.error(request, exc.message)
        return redirect("sources:conflict", conflict_id=conflict.pk)
    messages.success(request, _("Conflict dismissed. The answers it held are re-evaluated."))
    return _progress_redirect(request, conflict.documents, since)


@login_required
@require_POST
def conflict_reopen_view(request: HttpRequest, conflict_id: int) -> HttpResponse:
    _require_owner(request)
    conflict = _conflict_or_404(request, conflict_id)
    since = timezone.now()
    try:
        conflict_reopen(conflict_id=conflict.pk, actor=Actor.of_user(request.user))
    except DomainError as exc:
        messages.error(request, exc.message)
        return redirect("sources:conflict", conflict_id=conflict.pk)
    messages.success(request, _("Conflict reopened."))
    return _progress_redirect(request, conflict.documents, since)


def _fact_formset(document: Document, data: Any = None) -> Any:
    revision = document.current_revision
    initial = [
        {
            "fact_id": f.pk,
            "value": _as_input(f.value),
            "valid_from": f.valid_from,
            "valid_until": f.valid_until,
        }
        for f in (revision.facts.order_by("position") if revision else [])
    ]
    return FactEditFormSet(data=data, initial=initial, prefix="facts")


def _as_input(value: Any) -> str:
    import json

    return value if isinstance(value, str) and not _looks_typed(value) else json.dumps(value)


def _looks_typed(text: str) -> bool:
    """A string that would read back as a number or boolean is shown quoted."""
    import json

    try:
        return not isinstance(json.loads(text), str)
    except ValueError:
        return False


def _document_page(request: HttpRequest, document: Document, **extra: Any) -> HttpResponse:
    revision = document.current_revision
    facts = list(revision.facts.order_by("position")) if revision else []
    passages = {p.span: p.text for p in revision.passages.all()} if revision else {}
    formset = extra.pop("formset", None) or _fact_formset(document)
    context = {
        "document": document,
        "revision": revision,
        "facts": facts,
        "rows": [
            (form, f, passages.get(f.span, ""))
            for form, f in zip(formset.forms, facts, strict=False)
        ],
        "formset": formset,
        "note_form": extra.pop("note_form", None) or CorrectionNoteForm(),
        "history": selectors.document_history(document)[:20],
        "conflicts": Conflict.objects.filter(documents__contains=[document.key]).exclude(
            status=Conflict.Status.CLOSED
        ),
        "today": timezone.localdate(),
        "soon": timezone.localdate() + timedelta(days=30),
        **extra,
    }
    return render(
        request, "sources/document.html", context, status=400 if extra.get("error") else 200
    )


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
    formset = _fact_formset(document, request.POST)
    note_form = CorrectionNoteForm(request.POST)
    if not (formset.is_valid() and note_form.is_valid()):
        return _document_page(
            request,
            document,
            formset=formset,
            note_form=note_form,
            error=_("Some values need fixing."),
        )
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
    if not edits and not note_form.cleaned_data["note"]:
        messages.info(request, _("Nothing changed, so nothing was published."))
        return redirect("sources:document", key=document.key)
    return _publish_then_progress(
        request,
        document,
        lambda: services.revision_publish_corrected(
            document=document,
            edits=edits,
            note=note_form.cleaned_data["note"],
            actor=Actor.of_user(request.user),
            user=request.user,
        ),
        formset=formset,
        note_form=note_form,
    )


@login_required
@require_POST
def document_end_validity(request: HttpRequest, key: str) -> HttpResponse:
    _require_owner(request)
    document = _document_or_404(request, key)
    form = EndValidityForm(request.POST)
    if not form.is_valid():
        return _document_page(
            request, document, end_form=form, error=_("Give the last valid day as YYYY-MM-DD.")
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
    )


def _publish_then_progress(
    request: HttpRequest, document: Document, publish: Any, **page: Any
) -> HttpResponse:
    since = timezone.now()
    try:
        result = publish()
    except FieldError as exc:
        return _document_page(request, document, error=exc.message, **page)
    except DomainError as exc:
        messages.error(request, exc.message)
        return redirect("sources:document", key=document.key)
    messages.success(
        request,
        _("Published revision %(revision)s. Answers citing it are re-evaluated.")
        % {"revision": result.revision.revision},
    )
    keys = [document.key, *_conflict_documents(document.key)]
    return _progress_redirect(request, keys, since)


def _conflict_documents(key: str) -> list[str]:
    rows = Conflict.objects.filter(documents__contains=[key]).values_list("documents", flat=True)
    return [k for documents in rows for k in documents]


@login_required
@require_POST
def document_withdraw(request: HttpRequest, key: str) -> HttpResponse:
    _require_owner(request)
    document = _document_or_404(request, key)
    if request.POST.get("confirm") != document.key:
        messages.error(request, _("Type the document id to confirm the withdrawal."))
        return redirect("sources:document", key=document.key)
    since = timezone.now()
    keys = [document.key, *_conflict_documents(document.key)]
    services.document_withdraw(document_key=document.key, actor=Actor.of_user(request.user))
    messages.success(request, _("Document withdrawn. Answers citing it are re-evaluated."))
    return _progress_redirect(request, keys, since)


@login_required
@require_GET
def progress(request: HttpRequest) -> HttpResponse:
    """The re-evaluations the signed-in person's last action started, with progress bars."""
    _require_owner(request)
    if refused := refuse_unknown_params(request, ("documents", "since")):
        return refused
    from reviewqueue.jobs.models import Job

    keys = [k for k in request.GET.get("documents", "").split(",") if k][:50]
    try:
        since = datetime.fromisoformat(request.GET.get("since", ""))
    except ValueError:
        since = timezone.now() - timedelta(minutes=10)
    jobs = Job.objects.filter(
        requested_by=request.user,
        document_key__in=keys,
        created_at__gte=since - timedelta(seconds=5),
    ).order_by("created_at")[:50]
    return render(request, "sources/progress.html", {"jobs": jobs, "documents": keys})
