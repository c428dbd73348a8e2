"""API of re-evaluation jobs: start one, follow its progress."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response

from reviewqueue.accounts.models import ApiToken, Role
from reviewqueue.accounts.roles import has_role
from reviewqueue.api_base import (
    BodyLimitedAPIView,
    IdField,
    InstantField,
    RoleAndScope,
    StrictSerializer,
    token_scopes,
)
from reviewqueue.errors import NotFound
from reviewqueue.jobs.models import Job
from reviewqueue.jobs.selectors import job_progress, job_visible_to
from reviewqueue.jobs.services import job_start_by_hand_for_document, job_start_for_answers
from reviewqueue.reviews.models import Answer, Verdict
from reviewqueue.sources.api import actor_of
from reviewqueue.sources.selectors import readable_answers

MAX_TRACE_IDS = 500


class JobOut(serializers.Serializer):
    id = serializers.CharField()
    scope = serializers.CharField()
    document_id = serializers.CharField(allow_null=True)
    trigger = serializers.CharField()
    state = serializers.CharField()
    total = serializers.IntegerField()
    done = serializers.IntegerField()
    failed = serializers.IntegerField()
    changed = serializers.IntegerField()
    percent = serializers.IntegerField()
    finished = serializers.BooleanField()
    created_at = InstantField()
    finished_at = InstantField(allow_null=True)
    url = serializers.CharField(help_text="This job in the API, followed with the same token")
    progress_url = serializers.CharField(help_text="Its progress for a signed-in browser (JSON)")
    page_url = serializers.CharField(help_text="Its page, for a signed-in browser")


class JobIn(StrictSerializer):
    # Ids as sent, as everywhere: " t-1 " is refused, not trimmed into another answer's id.
    trace_ids = serializers.ListField(child=IdField(max_length=200),
                                      max_length=MAX_TRACE_IDS, required=False)
    document_id = IdField(max_length=200, required=False)

    def cross_field_errors(self, attrs: dict[str, Any]) -> dict[str, Any]:
        # By what was sent, valid or not: a bad id is its own error, and still counts as given.
        # Named by field, as every refusal is: a client reads `errors[].field`.
        given = [name for name in ("trace_ids", "document_id")
                 if self.initial_data.get(name) not in (None, "", [])]
        if len(given) == 2:
            return {"document_id": ["Give either trace_ids or document_id, not both."]}
        if not given:
            return {"trace_ids": ["Give either trace_ids (at least one) or document_id."]}
        return {}


class JobStartView(BodyLimitedAPIView):
    permission_classes = [RoleAndScope]
    allowed_roles = (Role.REVIEWER, Role.ADMIN)
    required_scope = ApiToken.Scope.REVIEW  # it writes verdicts: a read-only token may not

    @extend_schema(request=JobIn, responses={202: JobOut,
                                             400: OpenApiResponse(description="Bad field"),
                                             404: OpenApiResponse(description="Unknown answer")},
                   summary="Re-evaluate answers now (reviewers: answers they may read; "
                           "admins: also every answer citing a document)",
                   description="Give either `trace_ids` (1 to 500) or `document_id`. The job "
                               "runs in the background; follow it at `url`. An "
                               "answer or document you may not read is answered as missing.")
    def post(self, request: Request) -> Response:
        serializer = JobIn(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        actor = actor_of(request)
        if data.get("document_id"):
            if not has_role(request.user, Role.ADMIN):
                raise PermissionDenied("Only admins re-evaluate every answer citing a document.")
            job = job_start_by_hand_for_document(document_key=data["document_id"],
                                                 actor=actor, user=request.user)
        else:
            ids = self._readable_answer_ids(request, data["trace_ids"])
            job = job_start_for_answers(ids, Verdict.Trigger.MANUAL, request.user, actor=actor)
        job.refresh_from_db()
        return Response(job_progress(job), status=202)

    def _readable_answer_ids(self, request: Request, trace_ids: list[str]) -> list[int]:
        """The same few queries however many ids: the answers, what they cite, who reads it."""
        ids = dict(Answer.objects.filter(trace_id__in=set(trace_ids))
                   .values_list("trace_id", "pk"))
        readable = readable_answers(set(ids.values()), request.user)
        for trace_id in trace_ids:
            if ids.get(trace_id) not in readable:
                raise NotFound(f"no answer {trace_id!r}")
        return list(ids.values())


class JobDetailView(BodyLimitedAPIView):
    permission_classes = [RoleAndScope]
    allowed_roles = (Role.REVIEWER, Role.ADMIN, Role.SERVICE)

    def get_permissions(self):  # type: ignore[no-untyped-def]
        # `read`, or the scope with which the caller's role starts jobs (what it alone may
        # follow is narrowed below): `publish` for a service, `review` for anyone else.
        starts = (ApiToken.Scope.PUBLISH if has_role(self.request.user, Role.SERVICE)
                  else ApiToken.Scope.REVIEW)
        self.required_scope = (ApiToken.Scope.READ, starts)
        return super().get_permissions()

    @extend_schema(responses={200: JobOut,
                              403: OpenApiResponse(description="Not a reviewer, admin or "
                                                               "service, or a token with "
                                                               "neither `read` nor the scope "
                                                               "that starts jobs"),
                              404: OpenApiResponse(description="No such job, or one the caller "
                                                               "may not follow")},
                   summary="Progress of a re-evaluation job",
                   description="Reviewers follow the jobs they started, except one that "
                               "names a document they may no longer see; services the jobs "
                               "their publications, withdrawals and restorations started (the "
                               "`jobs` of those replies); admins follow every job. A token "
                               "needs the `read` scope, or the scope with which its role starts "
                               "jobs (`publish` for a service, `review` for anyone else): "
                               "without `read` it follows only the jobs its user started. A "
                               "job the caller may not follow is answered as missing.")
    def get(self, request: Request, job_id: UUID) -> Response:
        scopes = token_scopes(request)
        # A token that may start jobs (`review`, `publish`) must be able to follow them, but
        # neither is `read`: it must not open every job to an admin's token.
        started_only = scopes is not None and ApiToken.Scope.READ not in scopes
        job = Job.objects.filter(pk=job_id).first()
        if job is None or not job_visible_to(job, request.user,
                                             started_by_user_only=started_only):
            raise NotFound("no such job")
        return Response(job_progress(job))
