"""API for upstream services: submit answers (one or a batch) and read their status."""

from __future__ import annotations

import re
from datetime import date, datetime, time
from typing import Any

from django.conf import settings
from django.urls import reverse
from django.utils import timezone
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

import gating
from gating import CITE_ID
from reviewqueue.accounts.models import ApiToken, Role
from reviewqueue.accounts.principals import is_valid_principal, user_principals
from reviewqueue.accounts.roles import has_role
from reviewqueue.api_base import (
    BodyLimitedAPIView,
    CiteField,
    DayField,
    IdField,
    InstantField,
    JSONScalarField,
    NameField,
    PathIdField,
    PrincipalField,
    RoleAndScope,
    SpanField,
    StrictSerializer,
    lookalike_problem,
    path_id_problem,
    repeats,
    scalar_problem,
)
from reviewqueue.api_errors import (
    domain_error_body,
    flatten_errors,
    invalid_body,
    quarantine_from_request,
)
from reviewqueue.errors import DomainError, NotFound
from reviewqueue.gcpause import collector_paused
from reviewqueue.jobs.models import Job
from reviewqueue.jobs.selectors import reevaluation_waiting
from reviewqueue.reviews.labels import REASONS
from reviewqueue.reviews.models import Answer, OwnerQuestion, Verdict
from reviewqueue.reviews.selectors.answers import (
    answer_detail,
    redact_verdicts,
    user_may_read_answer,
)
from reviewqueue.reviews.services.evaluation import boundary_come
from reviewqueue.reviews.services.ingest import (
    AnswerInput,
    RetrievedInput,
    answer_ingest,
    answers_ingest,
)
from reviewqueue.sources.api import actor_of
from reviewqueue.storable import NOT_STORABLE, storable
from reviewqueue.textmatch import answer_is_blank

TRACE_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,200}$")
_TRACE_ID_RULE = "Use 1 to 200 letters, digits and . _ : - only."
# GET /api/v1/answers/batch is the batch endpoint: an answer of that name could not be read.
# And "." and "..": clients drop them from an address, so /answers/.. is never asked for.
RESERVED_TRACE_IDS = frozenset({"batch", ".", ".."})
MAX_ANSWER_CHARS = 200_000


def answer_bytes_problem(text: str) -> str | None:
    """Why the gate cannot take this answer text, or None: it counts UTF-8 bytes, not
    characters. The fast intake path asks this too."""
    if len(text) * 4 <= gating.MAX_TEXT_BYTES:  # four bytes a character at most
        return None
    size = len(text.encode("utf-8", "surrogatepass"))
    if size <= gating.MAX_TEXT_BYTES:
        return None
    return f"Ensure this text has at most {gating.MAX_TEXT_BYTES} bytes in UTF-8 (it has {size})."


BLANK_ANSWER = ("This field may not be blank, nor hold only citation markers and HTML comments "
                "(which show nothing): the answer's text is what the asker reads.")


class RetrievedIn(StrictSerializer):
    cite = CiteField(max_length=200)
    document_id = PathIdField(max_length=200)
    revision = PathIdField(max_length=200)
    span = SpanField(max_length=200, required=False, allow_blank=True, default="")


class ClaimIn(StrictSerializer):
    subject = NameField(names="subjects", max_length=200, required=False, allow_null=True,
                        default=None)
    key = NameField(names="keys", max_length=200)
    value = JSONScalarField()
    cite = CiteField(max_length=200)


class EditedClaimIn(ClaimIn):
    """A claim of an edit: it may cite an id of the answer's that no marker can name, which
    ingest took before it checked cites (the edit sends every claim, those kept as well)."""

    cite = IdField(max_length=200)


@extend_schema_field({"type": "string", "minLength": 1, "maxLength": 200,
                      "pattern": TRACE_ID.pattern})
class TraceIdField(IdField):
    """A trace id; the schema shows the pattern validate_trace_id holds it to."""


class AnswerIn(StrictSerializer):
    trace_id = TraceIdField(max_length=200)
    question = serializers.CharField(max_length=20_000)
    answer = serializers.CharField(
        max_length=MAX_ANSWER_CHARS, trim_whitespace=False,
        error_messages={"blank": BLANK_ANSWER},
        help_text=f"At most {MAX_ANSWER_CHARS:,} characters and {gating.MAX_TEXT_BYTES:,} bytes "
                  "in UTF-8 (the gate counts bytes)",
    )
    asked_by = serializers.ListField(child=PrincipalField(max_length=200), max_length=200)
    index_release = NameField(names="ids", max_length=200, allow_blank=True)
    as_of = DayField(required=False, allow_null=True, default=None)
    retrieved = serializers.ListField(child=RetrievedIn(), max_length=1000)
    claims = serializers.ListField(child=ClaimIn(), max_length=1000)

    def validate_trace_id(self, value: str) -> str:
        if not TRACE_ID.fullmatch(value):
            raise serializers.ValidationError(_TRACE_ID_RULE)
        if value in RESERVED_TRACE_IDS:
            raise serializers.ValidationError(f"{value!r} is reserved; use another trace_id.")
        return value

    def validate_answer(self, value: str) -> str:
        if answer_is_blank(value):
            # The gate reads the claims, not the wording: a text of spaces, markers or comments
            # would be released on its claims with nothing for the asker to read.
            raise serializers.ValidationError(BLANK_ANSWER)
        problem = answer_bytes_problem(value)
        if problem is not None:
            raise serializers.ValidationError(problem)
        return value

    def cross_field_errors(self, attrs: dict[str, Any]) -> dict[str, Any]:
        # Among the items whose cite validated (a bad item is None, or lacks what failed).
        cites = [(item or {}).get("cite") for item in attrs.get("retrieved") or []]
        again = {index: {"cite": [f"Duplicate cite {cite!r}."]}
                 for index, cite in repeats(cites).items()}
        errors: dict[str, Any] = {"retrieved": again} if again else {}
        if twice := repeats(attrs.get("asked_by") or []):
            # One asker's principals: a repeat would make two bodies asking the same differ.
            errors["asked_by"] = {index: [f"{principal!r} is already in the list."]
                                  for index, principal in twice.items()}
        return errors

    def to_input(self) -> AnswerInput:
        d = self.validated_data
        return AnswerInput(
            trace_id=d["trace_id"],
            question=d["question"],
            answer=d["answer"],
            asked_by=tuple(d["asked_by"]),
            index_release=d["index_release"],
            as_of=d["as_of"],
            retrieved=tuple(
                RetrievedInput(r["cite"], r["document_id"], r["revision"], r["span"])
                for r in d["retrieved"]
            ),
            claims=tuple(
                {k: v for k, v in c.items() if not (k == "subject" and v is None)}
                for c in d["claims"]
            ),
        )


# --- The fast path ----------------------------------------------------------------------------
# AnswerIn costs about half a millisecond per answer, more than gating it; a batch of 500 would
# spend most of its time there. The check below accepts only bodies AnswerIn certainly accepts,
# and builds the same AnswerInput; anything else (errors included) goes through AnswerIn, so
# every error message still comes from one place. tests/platform/test_fast_intake.py holds the
# two to that.

_ISO_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_ANSWER_KEYS = frozenset(AnswerIn().fields)
_REQUIRED = _ANSWER_KEYS - {"as_of"}
_RETRIEVED_KEYS = frozenset(RetrievedIn().fields)
_CLAIM_KEYS = frozenset(ClaimIn().fields)


def _text(value: Any, limit: int, *, blank: bool = False, trimmed: bool = True) -> bool:
    return (
        type(value) is str
        and (blank or value != "")
        and len(value) <= limit
        and (not trimmed or value == value.strip())
        and not NOT_STORABLE.search(value)
    )


def _retrieved_item(item: Any) -> RetrievedInput | None:
    if type(item) is not dict or not _RETRIEVED_KEYS.issuperset(item):
        return None
    cite, document, revision = item.get("cite"), item.get("document_id"), item.get("revision")
    span = item.get("span", "")
    if _text(cite, 200) and CITE_ID.fullmatch(cite) and _text(document, 200) \
            and _text(revision, 200) and _text(span, 200, blank=True) \
            and not path_id_problem(document) and not path_id_problem(revision) \
            and not lookalike_problem(span):
        return RetrievedInput(cite, document, revision, span)
    return None


def _claim(item: Any) -> dict[str, Any] | None:
    if type(item) is not dict or not _CLAIM_KEYS.issuperset(item):
        return None
    subject, key, value, cite = (item.get("subject"), item.get("key"), item.get("value"),
                                 item.get("cite"))
    if not (_text(key, 200) and _text(cite, 200) and CITE_ID.fullmatch(cite) and "value" in item
            and scalar_problem(value) is None
            and not lookalike_problem(key)):
        return None
    if subject is None:
        return {"key": key, "value": value, "cite": cite}
    if not _text(subject, 200) or lookalike_problem(subject):
        return None
    return {"subject": subject, "key": key, "value": value, "cite": cite}


def fast_answer_input(raw: Any) -> AnswerInput | None:
    """The AnswerInput for a plainly well-formed body, or None to let AnswerIn decide."""
    if type(raw) is not dict or not _ANSWER_KEYS.issuperset(raw) or not raw.keys() >= _REQUIRED:
        return None
    as_of = raw.get("as_of")
    if as_of is not None:
        if type(as_of) is not str or not _ISO_DAY.fullmatch(as_of):
            return None
        try:
            as_of = date.fromisoformat(as_of)
        except ValueError:
            return None
    asked_by, retrieved, claims = raw["asked_by"], raw["retrieved"], raw["claims"]
    if not (
        type(raw["trace_id"]) is str and TRACE_ID.fullmatch(raw["trace_id"])
        and raw["trace_id"] not in RESERVED_TRACE_IDS
        and _text(raw["question"], 20_000)
        and _text(raw["answer"], MAX_ANSWER_CHARS, trimmed=False)
        and not answer_is_blank(raw["answer"])
        and answer_bytes_problem(raw["answer"]) is None
        and _text(raw["index_release"], 200, blank=True)
        and not lookalike_problem(raw["index_release"])
        and type(asked_by) is list and len(asked_by) <= 200
        and all(_text(p, 200) and is_valid_principal(p) for p in asked_by)
        and len(set(asked_by)) == len(asked_by)
        and type(retrieved) is list and len(retrieved) <= 1000
        and type(claims) is list and len(claims) <= 1000
    ):
        return None
    items = [_retrieved_item(item) for item in retrieved]
    facts = [_claim(item) for item in claims]
    if None in items or None in facts:
        return None
    if len({r.cite for r in items if r is not None}) != len(items):
        return None
    return AnswerInput(
        trace_id=raw["trace_id"],
        question=raw["question"],
        answer=raw["answer"],
        asked_by=tuple(asked_by),
        index_release=raw["index_release"],
        as_of=as_of,
        retrieved=tuple(items),  # type: ignore[arg-type]
        claims=tuple(facts),  # type: ignore[arg-type]
    )


def answer_input(raw: Any) -> tuple[AnswerInput | None, Any]:
    """(the input, None) for a valid body, or (None, AnswerIn's errors)."""
    fast = fast_answer_input(raw)
    if fast is not None:
        return fast, None
    serializer = AnswerIn(data=raw)
    if not serializer.is_valid():
        return None, serializer.errors
    return serializer.to_input(), None


@extend_schema_field({"type": "object"})
class _ParsedJSON(serializers.Field):
    """A JSON value the parser already decoded, taken as it is; each answer is checked on its
    own, so one bad answer does not refuse the batch."""

    def to_internal_value(self, data: Any) -> Any:
        return data


class BatchIn(StrictSerializer):
    # A null answer is that answer's error, as any other bad one. allow_empty words the error
    # for an empty list; min_length puts minItems in the schema.
    answers = serializers.ListField(child=_ParsedJSON(allow_null=True), allow_empty=False,
                                    min_length=1, max_length=settings.API_MAX_BATCH)


_STRINGS = {"type": "array", "items": {"type": "string"}}
_NUMBER_OR_NULL = {"type": "integer", "nullable": True}
# What the gate reports (gating.Finding / gating.GateWarning.to_dict), as stored with a verdict.
_WARNING = {
    "code": {"type": "string"},
    "claim": {**_NUMBER_OR_NULL, "description": "index of the claim, from 0; null: no one claim"},
    "evidence": {**_STRINGS, "description": "the evidence (cite) ids involved"},
    "message": {"type": "string"},
    "kb_documents": {**_STRINGS, "description": "knowledge-base documents the message draws on"},
}
_FINDING = {"step": {"type": "string", "description": "row of the decision order, 0 to 7b"},
            **_WARNING}


def _array_of(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "array", "items": {"type": "object", "properties": properties,
                                        "required": required or list(properties)}}


@extend_schema_field(_array_of(_FINDING, ["code", "step", "claim", "evidence", "message"]))
class FindingsField(serializers.JSONField):
    pass


@extend_schema_field(_array_of(_WARNING, ["code", "claim", "evidence", "message"]))
class WarningsField(serializers.JSONField):
    pass


@extend_schema_field(_array_of({
    "cite": {"type": "string"},
    "document": {"type": "string"},
    "revision": {"type": "string", "description": "the revision the answer was generated from"},
    "current": {"type": "string", "nullable": True,
                "description": "the document's current revision the gate read; null when it "
                               "read none (withdrawn, never received, passage not found)"},
    "withdrawn": {"type": "boolean", "description": "present (true) when withdrawn"},
    "received": {"type": "boolean",
                 "description": "present (false) when the store never received the revision"},
    "passage_found": {"type": "boolean",
                      "description": "present (false) when the revision has no such passage"},
}, required=["cite", "document", "revision", "current"]))
class RevisionsUsedField(serializers.JSONField):
    pass


class VerdictOut(serializers.Serializer):
    id = serializers.IntegerField()
    # Choices, so that the schema lists the values a client branches on.
    decision = serializers.ChoiceField(choices=Verdict.Decision.choices)
    reason = serializers.ChoiceField(
        choices=REASONS,
        help_text="The primary reason: the first step of the decision order that failed, "
                  "`supported` when none did")
    findings = FindingsField()
    warnings = WarningsField()
    as_of = serializers.DateField()
    trigger = serializers.CharField()
    gate_version = serializers.CharField()
    created_at = InstantField()
    revisions_used = RevisionsUsedField()


ANSWER_STATUS_HELP = (
    "As the gate decided: `candidate`, `held` (in the review queue, at `review_url`; a "
    "candidate may be held too, as an audit sample) or `abstained`; as a reviewer decided: "
    "`approved` or `rejected`. A new verdict after a source changed may move it: a rejection "
    "stays, an approval the new verdict does not support is `held` again.")


class IngestOut(serializers.Serializer):
    trace_id = serializers.CharField()
    status = serializers.ChoiceField(choices=Answer.Status.choices, help_text=ANSWER_STATUS_HELP)
    verdict = VerdictOut()
    review_url = serializers.CharField(allow_null=True)


class AnswerDecisionOut(serializers.Serializer):
    """A decision as the answer's history gives it: the fields a decision's own reply has, its
    comment null where the answer's `question` is (`reads` in the context)."""

    id = serializers.IntegerField()
    action = serializers.CharField()
    verdict = serializers.IntegerField(source="verdict_id")
    reviewer = serializers.CharField(source="reviewer.username")
    comment = serializers.SerializerMethodField()
    reject_reason = serializers.CharField()
    new_version = serializers.SerializerMethodField()
    read_passages = serializers.BooleanField()
    created_at = InstantField()

    def get_comment(self, decision: Any) -> str | None:
        return decision.comment if self.context.get("reads") else None

    def get_new_version(self, decision: Any) -> int | None:
        return decision.new_version.number if decision.new_version_id else None


class OwnerQuestionOut(serializers.Serializer):
    asked_by = serializers.CharField(source="asked_by.username", allow_null=True)
    asked_at = InstantField()
    note = serializers.CharField(allow_null=True)
    replied_by = serializers.CharField(source="replied_by.username", allow_null=True)
    replied_at = InstantField(allow_null=True)
    reply = serializers.CharField(allow_null=True, help_text="null until an owner replied")


class AnswerOut(IngestOut):
    question = serializers.CharField(
        allow_null=True, help_text="null for an admin who may not read every document the "
                                   "answer retrieved")
    version = serializers.IntegerField(help_text="The number of the answer's current version "
                                                 "(1 as ingested; each edit adds one)")
    answer = serializers.CharField(
        allow_null=True, help_text="The current version's text, which an edit starts from; "
                                   "null when `question` is")
    claims = serializers.ListField(
        child=serializers.DictField(), allow_null=True,
        help_text="The current version's claims (`key`, `value`, `cite`, and `subject` when "
                  "given), which an edit sends back whole; null when `question` is")
    index_release = serializers.CharField()
    verdicts = VerdictOut(many=True)
    decisions = AnswerDecisionOut(many=True)
    owner_questions = OwnerQuestionOut(
        many=True, help_text="What reviewers asked the owners, oldest first, with each "
                             "reply; `note` and `reply` are null for an admin who gets "
                             "`question` null")
    reevaluation_waiting_since = InstantField(
        allow_null=True,
        help_text="When a re-evaluation that has not reached this answer yet was started (a "
                  "source it cites or claims changed, a validity date came, or someone asked): "
                  "until a worker has run it, `verdict` may be behind the sources. When a fact "
                  "the verdict weighed started or stopped holding and the daily validity check "
                  "has not started yet, the start of that day. null when none waits")


_TIMESTAMP = InstantField()


def verdict_body(verdict: Verdict) -> dict[str, Any]:
    """What VerdictOut gives, written out: DRF's serializer costs more than the gate does,
    and a batch returns 500 of these."""
    as_of = verdict.as_of
    return {
        "id": verdict.pk,
        "decision": verdict.decision,
        "reason": verdict.reason,
        "findings": verdict.findings,
        "warnings": verdict.warnings,
        "as_of": as_of if isinstance(as_of, str) else as_of.isoformat(),
        "trigger": verdict.trigger,
        "gate_version": verdict.gate_version,
        "created_at": _TIMESTAMP.to_representation(verdict.created_at),
        "revisions_used": verdict.revisions_used,
    }


def ingest_body(request: Request, answer: Answer) -> dict[str, Any]:
    verdict: Verdict = answer.current_verdict  # type: ignore[assignment]
    review_url = None
    if answer.status == Answer.Status.HELD:
        review_url = request.build_absolute_uri(reverse("reviews:item", args=[answer.trace_id]))
    return {
        "trace_id": answer.trace_id,
        "status": answer.status,
        "verdict": verdict_body(verdict),
        "review_url": review_url,
    }


class AnswerCreateView(BodyLimitedAPIView):
    permission_classes = [RoleAndScope]
    allowed_roles = (Role.SERVICE,)
    required_scope = ApiToken.Scope.SUBMIT

    @extend_schema(
        request=AnswerIn,
        responses={
            201: IngestOut,
            200: IngestOut,
            400: OpenApiResponse(description="A bad field, named by its path"),
            409: OpenApiResponse(description="trace_id already used for another body"),
            413: OpenApiResponse(description="Body too large"),
        },
        summary="Submit an answer; the gate runs at once",
        description="201 with the verdict the first time; 200 with the stored result for the "
                    "same body again (the trace_id is the idempotency key); 409 when the "
                    "trace_id was used for another body. A bad body is a 400 naming each bad "
                    "field and is kept in the quarantine.",
    )
    def post(self, request: Request) -> Response:
        data, errors = answer_input(request.data)
        if data is None:
            raise serializers.ValidationError(errors)
        result = answer_ingest(data=data, actor=actor_of(request), user=request.user)
        return Response(ingest_body(request, result.answer), status=201 if result.created else 200)


class ErrorItemOut(serializers.Serializer):
    field = serializers.CharField(help_text="Path of the bad value, e.g. retrieved[1].cite")
    message = serializers.CharField()


class BatchItemOut(serializers.Serializer):
    """One item's result: an ingest result (status_code 200 or 201), or an error (any other
    status_code) with error, detail and errors as the single-answer endpoint would send."""

    index = serializers.IntegerField()
    status_code = serializers.IntegerField()
    trace_id = serializers.CharField(allow_null=True)
    status = serializers.ChoiceField(choices=Answer.Status.choices, required=False,
                                     help_text=ANSWER_STATUS_HELP)
    verdict = VerdictOut(required=False)
    review_url = serializers.CharField(allow_null=True, required=False)
    error = serializers.CharField(required=False)
    detail = serializers.CharField(required=False)
    errors = ErrorItemOut(many=True, required=False)


class BatchResultOut(serializers.Serializer):
    results = BatchItemOut(many=True)


class AnswerBatchView(BodyLimitedAPIView):
    permission_classes = [RoleAndScope]
    allowed_roles = (Role.SERVICE,)
    required_scope = ApiToken.Scope.SUBMIT

    @extend_schema(
        request=BatchIn,
        responses={
            200: BatchResultOut,
            400: OpenApiResponse(description="Not a list of 1 to 500 answers; a bad answer is "
                                             "a 400 in its own result, not for the batch"),
            413: OpenApiResponse(description="Body too large"),
        },
        summary="Submit up to 500 answers; one result per item, in order",
        description="Each result carries the status_code the single-answer endpoint would "
                    "give (201, 200 for a replay, 400 naming the field, 409 for a trace_id "
                    "used for another body). A trace_id repeated in the batch answers as a "
                    "replay of its first occurrence.",
    )
    def post(self, request: Request) -> Response:
        with collector_paused():  # a bounded bulk request: see reviewqueue.gcpause
            return self._post(request)

    def _post(self, request: Request) -> Response:
        batch = BatchIn(data=request.data)
        batch.is_valid(raise_exception=True)
        results: list[dict[str, Any] | None] = []
        valid: list[tuple[int, AnswerInput]] = []
        for index, raw in enumerate(batch.validated_data["answers"]):
            data, errors = answer_input(raw)
            if data is not None:
                valid.append((index, data))
                results.append(None)
                continue
            # Echoed only when it is a string: a refused item may hold anything there.
            trace_id = raw.get("trace_id") if isinstance(raw, dict) else None
            trace_id = storable(trace_id) if isinstance(trace_id, str) else None
            # An error about the item as a whole (null, not an object) names the item.
            problems = [{**e, "field": e["field"] or f"answers[{index}]"}
                        for e in flatten_errors(errors)]
            body = invalid_body(problems)
            self._quarantine(request, raw, 400, body)
            results.append({"index": index, "status_code": 400, "trace_id": trace_id, **body})
        ingested = answers_ingest(items=[data for _, data in valid], actor=actor_of(request),
                                  user=request.user)
        raws = batch.validated_data["answers"]
        for (index, data), result in zip(valid, ingested, strict=True):
            if isinstance(result, DomainError):
                body = domain_error_body(result)
                self._quarantine(request, raws[index], result.status_code, body)
                results[index] = {"index": index, "status_code": result.status_code,
                                  "trace_id": data.trace_id, **body}
            else:
                results[index] = {"index": index, "status_code": 201 if result.created else 200,
                                  **ingest_body(request, result.answer)}
        return Response({"results": results}, status=200)

    @staticmethod
    def _quarantine(request: Request, raw: Any, status_code: int, body: dict[str, Any]) -> None:
        import json

        class _One:
            # Quarantine just this item, not the whole batch body.
            method = request.method
            path = request.path
            user = request.user
            # backslashreplace: a lone surrogate is kept as the \udXXX escape it was sent as.
            _rq_raw_body = json.dumps(raw, ensure_ascii=False, default=str).encode(
                errors="backslashreplace")
            _full_data = raw

        quarantine_from_request(_One, Response(body, status=status_code))


def _owner_question(question: OwnerQuestion, reads: bool) -> dict[str, Any]:
    body: dict[str, Any] = OwnerQuestionOut(question).data
    if question.replied_at is None:
        body["reply"] = None
    if not reads:
        # Both texts talk about the documents, as the question does.
        body["note"] = body["reply"] = None
    return body


class AnswerDetailView(BodyLimitedAPIView):
    permission_classes = [RoleAndScope]
    allowed_roles = (Role.SERVICE, Role.ADMIN, Role.REVIEWER, Role.OWNER)
    # A reviewer's tool reads the answer it decides on (the verdict id, the text and claims
    # an edit starts from) with its `review` token.
    required_scope = (ApiToken.Scope.READ, ApiToken.Scope.REVIEW)

    @extend_schema(
        responses={
            200: AnswerOut,
            404: OpenApiResponse(description="No such answer, or one you may not read"),
        },
        summary="Status, text, claims, verdicts and decisions of an answer",
        description="People see only answers whose every retrieved document they may read "
                    "(services and admins see all, but an admin gets `question` null unless "
                    "they may read them too); a finding drawn from a document the "
                    "caller may not read says only that such a document exists.",
    )
    def get(self, request: Request, trace_id: str) -> Response:
        answer = answer_detail(trace_id)
        service = has_role(request.user, Role.SERVICE)
        reads = service or (answer is not None and user_may_read_answer(
            answer, user_principals(request.user)))
        if answer is None or not (reads or has_role(request.user, Role.ADMIN)):
            # The same 404 whether it does not exist or may not be read: nothing leaks.
            raise NotFound(f"no answer {trace_id!r}")
        body = ingest_body(request, answer)
        waiting = reevaluation_waiting(answer)
        version = answer.current_version
        assert version is not None
        verdicts = [verdict_body(v) for v in answer.verdicts.all()]
        if not service:
            # A finding or warning drawn from a knowledge-base document the caller may not read
            # names neither the document nor its value (the service sent all of it; people did
            # not). One query for every verdict.
            principals = user_principals(request.user)
            body["verdict"], *verdicts = redact_verdicts([body["verdict"], *verdicts], principals)
        body.update(
            # An admin audits the history of any answer, but reads what was asked only where
            # they may read every document it retrieved, as on the audit pages.
            question=answer.question if reads else None,
            version=version.number,
            answer=version.text if reads else None,
            claims=version.claims if reads else None,
            index_release=answer.index_release,
            verdicts=verdicts,
            decisions=AnswerDecisionOut(answer.decisions.all(), many=True,
                                        context={"reads": reads}).data,
            owner_questions=[_owner_question(q, reads) for q in answer.owner_questions.all()],
            reevaluation_waiting_since=_waiting_since(answer, waiting),
        )
        return Response(body)


def _waiting_since(answer: Answer, waiting: Job | None) -> str | None:
    """When the answer's verdict fell behind, with a re-evaluation yet to reach it: the start
    of the job that waits; with none started yet, the start of the day on which a fact the
    verdict weighed started or stopped holding (the daily validity check has yet to come), as
    the answer's page says. None when the verdict is not known to be behind."""
    if waiting is not None:
        return _TIMESTAMP.to_representation(waiting.created_at)
    assert answer.current_verdict is not None
    day = boundary_come(answer, answer.current_verdict)
    if day is None:
        return None
    return _TIMESTAMP.to_representation(timezone.make_aware(datetime.combine(day, time.min)))
