"""Pages of re-evaluation jobs: the admins' list, one job's progress, and its JSON."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST

from reviewqueue.accounts.models import Role
from reviewqueue.accounts.principals import user_principals
from reviewqueue.accounts.roles import has_role
from reviewqueue.audit.services import Actor
from reviewqueue.counting import bounded_count
from reviewqueue.errors import NotFound
from reviewqueue.jobs.forms import DocumentJobForm
from reviewqueue.jobs.models import Job
from reviewqueue.jobs.selectors import (
    dead_letters_waiting,
    job_progress,
    job_visible_to,
    jobs_page,
)
from reviewqueue.jobs.services import job_start_by_hand_for_document, job_start_for_all
from reviewqueue.params import refuse_unknown_params
from reviewqueue.reviews.models import Answer, Verdict
from reviewqueue.reviews.selectors.answers import user_may_read_answer
from reviewqueue.sources.forms import DOCUMENT_HELP
from reviewqueue.sources.selectors import document_get, document_titles, may_see_document


def _dead_letters() -> dict[str, Any]:
    """Dead letters neither sent again nor resolved by a later run of their chunk, counted
    up to a cap: the banner says "1000+" beyond."""
    return {"dead_letters": bounded_count(dead_letters_waiting())}


def _job_list(request: HttpRequest, before: Job | None = None) -> dict[str, Any]:
    """A page of jobs, newest first (older than `before`), each document job with the title of
    its document where the admin may read it (one query for the page), and the dead letters'
    banner."""
    jobs, older = jobs_page(before=before)
    titles = document_titles(request.user, [j.document_key for j in jobs if j.document_key])
    for job in jobs:
        job.document_title = titles.get(job.document_key, "")
        job.cause_shown = _cause(job)  # the list is for admins, who see every document's id
    return {"jobs": jobs, "older": older, "paged": before is not None,
            "document_help": DOCUMENT_HELP, **_dead_letters()}


def _cause(job: Job) -> str:
    """The document whose change started the job, when it is another than the job's own
    (a document sharing a conflict with it): the job's own label says what kind of change."""
    return job.cause if job.cause and job.cause != job.document_key else ""


def _visible_job(request: HttpRequest, job_id: UUID) -> Job:
    job = Job.objects.filter(pk=job_id).first()
    # Someone else's job is answered like a missing one: job ids are not to be probed.
    if job is None or not job_visible_to(job, request.user):
        raise Http404("No such job")
    return job


@login_required
@require_GET
def job_list(request: HttpRequest) -> HttpResponse:
    if not has_role(request.user, Role.ADMIN):
        raise PermissionDenied
    if refused := refuse_unknown_params(request, ["before"]):
        return refused
    raw = request.GET.get("before")
    before = None
    if raw is not None:
        try:
            before_id = UUID(raw)
        except ValueError:
            return render(request, "bad_params.html", {
                "problems": [("before", _("not a job id"))], "without_url": request.path,
            }, status=400)
        before = Job.objects.filter(pk=before_id).first()
        if before is None:  # gone, or never was: an empty page that leads back
            return render(request, "jobs/list.html", {
                "jobs": [], "older": None, "paged": True, "document_help": DOCUMENT_HELP,
                **_dead_letters()})
    return render(request, "jobs/list.html", _job_list(request, before))


@login_required
@require_GET
def job_detail(request: HttpRequest, job_id: UUID) -> HttpResponse:
    job = _visible_job(request, job_id)
    # "Re-evaluate now" on an item page comes here with ?answer=<trace_id>: a way back to it,
    # for an answer the reader may read.
    trace_id = request.GET.get("answer", "")[:200]
    answer = (Answer.objects.select_related("current_verdict").filter(trace_id=trace_id).first()
              if trace_id else None)
    if answer is not None and not user_may_read_answer(answer, user_principals(request.user)):
        answer = None
    # The item page keeps only the queue's own parameters of `back`.
    back = request.GET.get("back", "")[:2000] if answer is not None else ""
    cause = _cause(job)
    document = document_get(cause) if cause else None
    # Named to whoever may see that document (the job is theirs, or they are an admin).
    job.cause_shown = cause if document is not None and (
        has_role(request.user, Role.ADMIN) or may_see_document(request.user, document)) else ""
    return render(request, "jobs/detail.html", {"job": job, "answer": answer, "back": back,
                                                "is_admin": has_role(request.user, Role.ADMIN)})


@never_cache
@login_required
@require_GET
def job_progress_json(request: HttpRequest, job_id: UUID) -> JsonResponse:
    """The job's progress, with the words the page shows in the reader's language."""
    job = _visible_job(request, job_id)
    changed = (ngettext("%(changed)s answer got a new verdict.",
                        "%(changed)s answers got a new verdict.", job.changed)
               if job.state in (Job.State.FINISHED, Job.State.FAILED) else
               ngettext("%(changed)s answer got a new verdict so far.",
                        "%(changed)s answers got a new verdict so far.", job.changed))
    return JsonResponse({
        **job_progress(job),
        "text": job.summary,
        "state_label": job.get_state_display(),
        # The sentence under the bar on the job's own page, as the page draws it.
        "changed_text": changed % {"changed": job.changed},
    })


@login_required
@require_POST
def job_start(request: HttpRequest) -> HttpResponse:
    """Admins start a re-evaluation of one document's answers or of every answer."""
    if not has_role(request.user, Role.ADMIN):
        raise PermissionDenied
    actor = Actor.of_user(request.user)
    typed = request.POST.get("document_id", "").strip()
    about_document = False  # whether the error is about the document field
    if request.POST.get("scope") == "all":
        if request.POST.get("confirm") == "all":
            # Started by hand: `manage.py reevaluate --all` records a gate version change.
            job = job_start_for_all(trigger=Verdict.Trigger.MANUAL, actor=actor,
                                    user=request.user)
            return redirect(job)
        error = _("Tick the box to confirm re-evaluating every stored answer.")
    else:
        about_document = True
        form = DocumentJobForm(request.POST, user=request.user)
        if form.is_valid():
            document_key = form.cleaned_data["document_id"]
            try:
                return redirect(job_start_by_hand_for_document(
                    document_key=document_key, actor=actor, user=request.user))
            except NotFound:  # the service looks again: gone since the form found it
                error = _("There is no document %(key)s.") % {"key": document_key}
        else:
            error = " ".join(str(e) for e in form.errors["document_id"])
    return render(request, "jobs/list.html", {
        **_job_list(request), "error": error, "document_id": typed,
        "document_error": about_document,
    }, status=400)
