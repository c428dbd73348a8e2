"""API for the document system: publish revisions, withdraw documents, read history."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.urls import reverse
from django.utils import timezone
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from reviewqueue.accounts.models import ApiToken, Role
from reviewqueue.accounts.principals import may_read, user_principals
from reviewqueue.api_base import (
    BodyLimitedAPIView,
    DayField,
    InstantField,
    JSONScalarField,
    NameField,
    PathIdField,
    PrincipalField,
    RoleAndScope,
    SpanField,
    StrictSerializer,
    merge_errors,
    repeats,
)
from reviewqueue.audit.services import Actor
from reviewqueue.errors import NotFound
from reviewqueue.instants import instant_text
from reviewqueue.jobs.selectors import job_visible_to
from reviewqueue.sources import selectors, services


class PassageIn(StrictSerializer):
    span = SpanField(max_length=200)
    text = serializers.CharField(max_length=100_000, trim_whitespace=False)


class FactIn(StrictSerializer):
    # No subject may be sent as absent, "" or null, as a claim's may.
    subject = NameField(names="subjects", max_length=200, required=False, allow_blank=True,
                        allow_null=True, default="")
    key = NameField(names="keys", max_length=200)
    value = JSONScalarField()
    valid_from = DayField()
    valid_until = DayField(allow_null=True, required=False, default=None)
    span = SpanField(max_length=200, required=False, allow_blank=True, default="")

    def cross_field_errors(self, attrs: dict[str, Any]) -> dict[str, Any]:
        start, end = attrs.get("valid_from"), attrs.get("valid_until")
        if start is not None and end is not None and start > end:
            return {"valid_until": ["Must not be before valid_from."]}
        return {}


# How far ahead of this server's clock a source's `updated_at` may be (clocks drift).
UPDATED_AT_AHEAD = timedelta(days=1)


class RevisionIn(StrictSerializer):
    title = serializers.CharField(max_length=500)
    url = serializers.URLField(max_length=2000, required=False, allow_blank=True, default="")
    owner = serializers.CharField(max_length=150)
    updated_at = InstantField(help_text="When the source was last updated; the newest revision "
                              "is current. At most a day ahead of the server's clock.")
    allowed_principals = serializers.ListField(
        child=PrincipalField(max_length=200), allow_empty=False, min_length=1, max_length=200,
    )
    passages = serializers.ListField(child=PassageIn(), max_length=1000)
    facts = serializers.ListField(child=FactIn(), max_length=1000)
    note = serializers.CharField(max_length=5000, required=False, allow_blank=True, default="")

    def validate_updated_at(self, value: datetime) -> datetime:
        # The newest `updated_at` is current: a revision dated years ahead by mistake would
        # leave every later one, correctly dated, "received late" for good.
        latest = timezone.now() + UPDATED_AT_AHEAD
        if value > latest:
            raise serializers.ValidationError(
                f"Must not be later than {instant_text(latest.replace(microsecond=0))}, a day "
                f"after this server's clock: {instant_text(value)} has not come yet.")
        return value

    def cross_field_errors(self, attrs: dict[str, Any]) -> dict[str, Any]:
        errors = span_errors(attrs.get("passages"), attrs.get("facts"))
        if again := repeats(attrs.get("allowed_principals") or []):
            # Kept as sent, a repeat would read as a second grant, and make two bodies that
            # grant the same readers differ.
            errors["allowed_principals"] = {
                index: [f"{principal!r} is already in the list."]
                for index, principal in again.items()}
        owner, address = attrs.get("owner"), self.context.get("address")
        if owner is not None and address is not None:
            problem = services.revision_owner_problem(address["document_id"],
                                                      address["revision"], owner,
                                                      attrs.get("updated_at"))
            if problem is not None:
                errors["owner"] = [problem]
        return errors

    def to_input(self) -> services.RevisionInput:
        d = self.validated_data
        return services.RevisionInput(
            title=d["title"],
            url=d["url"],
            owner=d["owner"],
            updated_at=d["updated_at"],
            allowed_principals=tuple(d["allowed_principals"]),
            note=d["note"],
            passages=tuple(services.PassageInput(p["span"], p["text"]) for p in d["passages"]),
            facts=tuple(
                services.FactInput(
                    key=f["key"],
                    value=f["value"],
                    valid_from=f["valid_from"],
                    valid_until=f["valid_until"],
                    subject=f["subject"] or "",
                    span=f["span"],
                )
                for f in d["facts"]
            ),
        )


def span_errors(passages: list[Any] | None, facts: list[Any] | None) -> dict[str, Any]:
    """A span used by two passages, a fact's span naming no passage: found among the passages
    and facts whose span validated (a bad item is None, or lacks what failed)."""
    if passages is None:
        return {}  # no list of passages: nothing to check spans against
    errors: dict[str, Any] = {}
    spans = [(passage or {}).get("span") for passage in passages]  # None: bad or missing
    if again := repeats(spans):
        errors["passages"] = {
            index: {"span": [f"Span {span!r} is already used by another passage."]}
            for index, span in again.items()}
    # While a passage's span is bad or missing, no fact is said to name no passage: that
    # passage may be the one it names.
    if None not in spans:
        known = set(spans)
        named = [(fact or {}).get("span") for fact in facts or []]
        unknown = {index: {"span": [f"No passage with span {span!r}."]}
                   for index, span in enumerate(named) if span and span not in known}
        if unknown:
            errors["facts"] = unknown
    return errors


class RevisionPath(serializers.Serializer):
    """The ids in the address, held to the lengths their columns take."""

    document_id = PathIdField(max_length=200)
    revision = PathIdField(max_length=200)


class RevisionOut(serializers.Serializer):
    document_id = serializers.CharField(source="document.key")
    revision = serializers.CharField()
    seq = serializers.IntegerField()
    title = serializers.CharField()
    url = serializers.CharField()
    updated_at = InstantField()
    published_at = InstantField()
    allowed_principals = serializers.ListField(child=serializers.CharField())
    current = serializers.SerializerMethodField()

    def get_current(self, obj: Any) -> bool:
        return obj.document.current_revision_id == obj.pk


class StartedJobOut(serializers.Serializer):
    id = serializers.CharField(source="pk")
    document_id = serializers.CharField(source="document_key",
                                        help_text="The document whose answers it re-evaluates")
    url = serializers.SerializerMethodField(help_text="Its progress, followed with the same "
                                                      "token")

    def get_url(self, obj: Any) -> str:
        return reverse("api:job", args=[obj.pk])


@extend_schema_field(StartedJobOut(many=True))
class StartedJobsField(serializers.Field):
    """The re-evaluation jobs the request started: the `jobs` of the serializer's context, those
    its `user` may follow."""

    def __init__(self) -> None:
        super().__init__(read_only=True, source="*",
                         help_text="The re-evaluation jobs this request started, the "
                                   "document's own first, then those of the documents its "
                                   "conflicts name; for the same request again, those the "
                                   "first one started; empty when it changed nothing. Follow "
                                   "each at its `url` with the same token.")

    def to_representation(self, value: Any) -> Any:
        user = self.context["user"]
        return StartedJobOut([job for job in self.context["jobs"] if job_visible_to(job, user)],
                             many=True).data


class RevisionPublishedOut(RevisionOut):
    jobs = StartedJobsField()


class HistoryEntryOut(serializers.Serializer):
    revision = serializers.CharField()
    seq = serializers.IntegerField()
    title = serializers.CharField(allow_null=True,
                                  help_text="null for a revision the caller may not read")
    updated_at = InstantField()
    published_at = InstantField()


class DocumentOut(serializers.Serializer):
    document_id = serializers.CharField(source="key")
    owner = serializers.CharField(source="owner.username")
    withdrawn = serializers.SerializerMethodField()
    current_revision = serializers.SerializerMethodField()
    history = serializers.SerializerMethodField()

    def get_withdrawn(self, obj: Any) -> bool:
        return obj.withdrawn_at is not None

    def get_current_revision(self, obj: Any) -> str | None:
        return obj.current_revision.revision if obj.current_revision else None

    @extend_schema_field(HistoryEntryOut(many=True))
    def get_history(self, obj: Any) -> list[dict[str, Any]]:
        # `principals` in the context: the reader's, when they may not see every revision in
        # full (not a service, an admin or the owner); a revision they may not read keeps its
        # place in the history but not its title.
        principals = self.context.get("principals")
        return [
            {
                "revision": r.revision,
                "seq": r.seq,
                "title": r.title if principals is None or may_read(r.allowed_principals,
                                                                     principals) else None,
                "updated_at": instant_text(r.updated_at),
                "published_at": instant_text(r.published_at),
            }
            for r in selectors.document_history(obj)
        ]


class DocumentChangedOut(DocumentOut):
    jobs = StartedJobsField()


def actor_of(request: Request) -> Actor:
    token = request.auth if isinstance(request.auth, ApiToken) else None
    return Actor.of_user(request.user, token)


class RevisionView(BodyLimitedAPIView):
    permission_classes = [RoleAndScope]
    allowed_roles = (Role.SERVICE,)
    required_scope = ApiToken.Scope.PUBLISH

    @extend_schema(
        request=RevisionIn,
        responses={
            201: RevisionPublishedOut,
            200: RevisionPublishedOut,
            400: OpenApiResponse(description="Bad field"),
            409: OpenApiResponse(description="Revision exists with a different body"),
            413: OpenApiResponse(description="Body too large"),
        },
        summary="Publish a document revision",
        description="The revision becomes the document's current one, unless it is late: older "
                    "(by `updated_at`) than a revision of the document received before it. A "
                    "late revision is kept, and the answers citing the document are evaluated "
                    "again (those generated from it may have waited for it), but the newer "
                    "revision stays current, or the document withdrawn: the reply says "
                    "`\"current\": false`. The reply's `jobs` are the re-evaluations it "
                    "started; the same body again is answered 200 with the same `jobs`.",
    )
    def put(self, request: Request, document_id: str, revision: str) -> Response:
        path = RevisionPath(data={"document_id": document_id, "revision": revision})
        address = path.validated_data if path.is_valid() else None
        # The owner is checked against the document the address names, when it names one.
        serializer = RevisionIn(data=request.data, context={"address": address})
        if not serializer.is_valid() or address is None:
            raise serializers.ValidationError(merge_errors(dict(path.errors), serializer.errors))
        result = services.revision_publish(
            document_key=document_id,
            revision=revision,
            data=serializer.to_input(),
            actor=actor_of(request),
            user=request.user,
        )
        context = {"jobs": result.jobs, "user": request.user}
        return Response(RevisionPublishedOut(result.revision, context=context).data,
                        status=201 if result.created else 200)


class DocumentRestoreView(BodyLimitedAPIView):
    permission_classes = [RoleAndScope]
    allowed_roles = (Role.SERVICE,)
    required_scope = ApiToken.Scope.PUBLISH
    body_methods: frozenset[str] = frozenset()  # a restore takes no options

    @extend_schema(
        request=None,
        responses={200: DocumentChangedOut,
                   404: OpenApiResponse(description="No such document")},
        summary="Restore a withdrawn document",
        description="Undoes a withdrawal: the document's newest revision is current again, "
                    "readable by the principals it names, and the answers that cite it or claim "
                    "its keys are re-evaluated. A document that is not withdrawn is returned "
                    "unchanged: restored last, with the `jobs` that restoration started (a "
                    "retry is told what the first call started), else with no `jobs` "
                    "(republishing a revision already received restores nothing).",
    )
    def post(self, request: Request, document_id: str) -> Response:
        restored = services.document_restore(document_key=document_id, actor=actor_of(request))
        document = selectors.document_get(document_id)
        jobs = restored.jobs if restored else ()
        return Response(DocumentChangedOut(document,
                                           context={"jobs": jobs, "user": request.user}).data)


class DocumentView(BodyLimitedAPIView):
    permission_classes = [RoleAndScope]
    allowed_roles = (Role.SERVICE, Role.ADMIN, Role.OWNER, Role.REVIEWER)

    def get_permissions(self):  # type: ignore[no-untyped-def]
        self.required_scope = (
            ApiToken.Scope.PUBLISH if self.request.method == "DELETE" else ApiToken.Scope.READ
        )
        if self.request.method == "DELETE":
            self.allowed_roles = (Role.SERVICE,)
        return super().get_permissions()

    @extend_schema(
        responses={200: DocumentOut, 404: OpenApiResponse(description="No such document")},
        summary="A document's current revision and history",
        description="A revision the caller may not read (by its own allowed principals) keeps "
                    "its place in the history with a null title; services and the document's "
                    "owner see every title. An admin sees every document, and the titles of "
                    "the revisions their principals may read.",
    )
    def get(self, request: Request, document_id: str) -> Response:
        document = selectors.document_get(document_id)
        if document is None or not self._may_see(request, document):
            raise NotFound(f"no document {document_id!r}")
        principals = None if self._sees_all(request, document) else user_principals(request.user)
        return Response(DocumentOut(document, context={"principals": principals}).data)

    @extend_schema(request=None, summary="Withdraw a document",
                   description="The answers that cite it or claim its keys are re-evaluated: "
                               "the reply's `jobs`. A document withdrawn already is returned "
                               "unchanged, with the jobs its withdrawal started.",
                   responses={200: DocumentChangedOut,
                              404: OpenApiResponse(description="No such document")})
    def delete(self, request: Request, document_id: str) -> Response:
        withdrawal = services.document_withdraw(document_key=document_id, actor=actor_of(request))
        return Response(DocumentChangedOut(withdrawal.document, context={
            "jobs": withdrawal.jobs, "user": request.user}).data)

    @staticmethod
    def _sees_all(request: Request, document: Any) -> bool:
        """Services and the document's owner see every revision of it in full; being an admin
        is no reason to read a restricted revision."""
        from reviewqueue.accounts.roles import has_role

        return has_role(request.user, Role.SERVICE) or document.owner_id == request.user.pk

    def _may_see(self, request: Request, document: Any) -> bool:
        from reviewqueue.accounts.roles import has_role

        return (self._sees_all(request, document) or has_role(request.user, Role.ADMIN)
                or may_read(document.allowed_principals, user_principals(request.user)))
