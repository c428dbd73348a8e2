"""API for the reviewer's work: the queue, leases and decisions (the same rules as the pages)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.urls import reverse
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
)
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

import gating
from reviewqueue.accounts.models import ApiToken, Role
from reviewqueue.accounts.principals import user_principals
from reviewqueue.api_base import (
    BodyLimitedAPIView,
    InstantField,
    RoleAndScope,
    StrictSerializer,
)
from reviewqueue.errors import FieldError, NotFound
from reviewqueue.instants import instant_text
from reviewqueue.params import param_problems
from reviewqueue.reviews.api import ANSWER_STATUS_HELP, EditedClaimIn, VerdictOut
from reviewqueue.reviews.labels import REASONS, REJECT_REASONS
from reviewqueue.reviews.models import Answer, Verdict
from reviewqueue.reviews.selectors.answers import (
    redact_findings,
    redact_verdicts,
    user_may_read_answer,
)
from reviewqueue.reviews.selectors.item import item_page
from reviewqueue.reviews.selectors.queue import (
    CLAIM_FILTERS,
    DEFAULT_LIMIT,
    HANDOFF_FILTERS,
    MAX_LIMIT,
    ORDERS,
    BadCursor,
    Cursor,
    QueueFilters,
    QueuePage,
    queue_page,
)
from reviewqueue.reviews.services.decisions import (
    MAX_COMMENT_CHARS,
    DecisionInput,
    EditRefused,
    StaleVerdict,
    answer_decide,
    claim_paths,
)
from reviewqueue.reviews.services.leases import lease_claim, lease_release
from reviewqueue.sources.api import actor_of


class ReviewerView(BodyLimitedAPIView):
    permission_classes = [RoleAndScope]
    allowed_roles = (Role.REVIEWER, Role.ADMIN)
    required_scope = ApiToken.Scope.REVIEW


def readable_answer(request: Request, trace_id: str) -> Answer:
    answer = Answer.objects.filter(trace_id=trace_id).first()
    if answer is None or not user_may_read_answer(answer, user_principals(request.user)):
        # The same 404 whether it does not exist or may not be read.
        raise NotFound(f"no answer {trace_id!r}")
    return answer


def verdict_body(verdict: Any, principals: frozenset[str]) -> dict[str, Any]:
    return redact_verdicts([dict(VerdictOut(verdict).data)], principals)[0]


# --- Queue ------------------------------------------------------------------------------------

class QueueQuery(serializers.Serializer):
    reason = serializers.ChoiceField(choices=REASONS, required=False)
    document = serializers.CharField(max_length=200, required=False)
    release = serializers.CharField(max_length=200, required=False)
    claim = serializers.ChoiceField(choices=CLAIM_FILTERS, required=False, default="all")
    handoff = serializers.ChoiceField(choices=HANDOFF_FILTERS, required=False, default="")
    order = serializers.ChoiceField(choices=ORDERS, required=False, default="oldest")
    cursor = serializers.CharField(max_length=500, required=False)
    limit = serializers.IntegerField(min_value=1, max_value=MAX_LIMIT, required=False,
                                     default=DEFAULT_LIMIT)


class LeaseOut(serializers.Serializer):
    holder = serializers.CharField(allow_null=True)
    until = InstantField(allow_null=True)


class DocumentRefOut(serializers.Serializer):
    document_id = serializers.CharField(source="key")
    title = serializers.CharField()


class QueueRowOut(serializers.Serializer):
    trace_id = serializers.CharField(source="answer.trace_id")
    question = serializers.CharField(source="answer.question")
    primary_reason = serializers.CharField(source="item.primary_reason")
    reasons = serializers.ListField(child=serializers.CharField(), source="item.reasons")
    documents = DocumentRefOut(many=True)
    entered_at = InstantField(source="item.entered_at")
    index_release = serializers.CharField(source="item.index_release")
    audit_sample = serializers.BooleanField(source="item.audit_sample")
    waiting_for_owner = serializers.BooleanField(source="item.waiting_for_owner")
    owner_replied = serializers.SerializerMethodField(
        help_text="An owner the answer was sent to has replied; the reply is on its page.")
    lease = serializers.SerializerMethodField()
    url = serializers.SerializerMethodField()

    @extend_schema_field(LeaseOut(allow_null=True, help_text="null when no one holds it"))
    def get_lease(self, row: Any) -> dict[str, Any] | None:
        if row.lease_holder is None:
            return None
        return {"holder": row.lease_holder, "until": instant_text(row.lease_until)}

    def get_owner_replied(self, row: Any) -> bool:
        return bool(row.item.owner_replied)

    def get_url(self, row: Any) -> str:
        return self.context["request"].build_absolute_uri(
            reverse("reviews:item", args=[row.answer.trace_id]))


class ReasonCountOut(serializers.Serializer):
    count = serializers.IntegerField()
    capped = serializers.BooleanField(help_text="True when there are more than `count`")


class QueueOut(serializers.Serializer):
    results = QueueRowOut(many=True)
    next = serializers.CharField(allow_null=True)
    previous = serializers.CharField(allow_null=True)
    counts = serializers.DictField(child=ReasonCountOut())


class QueueView(ReviewerView):
    @extend_schema(
        parameters=[
            OpenApiParameter("reason", str, enum=list(REASONS),
                             description="Primary reason"),
            OpenApiParameter("document", str, description="A retrieved document id"),
            OpenApiParameter("release", str, description="Index release"),
            OpenApiParameter("claim", str, enum=list(CLAIM_FILTERS)),
            OpenApiParameter("handoff", str, enum=list(HANDOFF_FILTERS),
                             description="`waiting`: sent to the owners, who have not "
                                         "replied; `replied`: an owner answered the latest "
                                         "question"),
            OpenApiParameter("order", str, enum=list(ORDERS),
                             description="By when each answer was held: `oldest` first (the "
                                         "default) or `newest` first"),
            OpenApiParameter("cursor", str, description="From `next` or `previous`"),
            OpenApiParameter("limit", {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                                       "default": DEFAULT_LIMIT}),
        ],
        responses={200: QueueOut, 400: OpenApiResponse(description="A bad filter or cursor")},
        summary="Held answers you may review, oldest (or newest) first, a keyset page at a "
                "time",
        description="Only answers whose every retrieved document you may read. An unknown "
                    "or repeated parameter is a 400 naming it. Counts per reason are capped.",
    )
    def get(self, request: Request) -> Response:
        # Filters come from an allowlist: an unknown or repeated parameter is a 400, never
        # silently ignored or passed on to a query.
        problems = param_problems(request.query_params, frozenset(QueueQuery().fields))
        if problems:
            raise serializers.ValidationError({k: [v] for k, v in problems.items()})
        query = QueueQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        q = query.validated_data
        cursor = None
        if q.get("cursor"):
            try:
                cursor = Cursor.decode(q["cursor"])
            except BadCursor:
                raise FieldError("cursor", "not a cursor this API gave out") from None
        filters = QueueFilters(reason=q.get("reason", ""), document=q.get("document", ""),
                               release=q.get("release", ""), claim=q["claim"],
                               handoff=q["handoff"], order=q["order"])
        page = queue_page(principals=user_principals(request.user), filters=filters,
                          user=request.user, cursor=cursor, limit=q["limit"])
        return Response(self._body(request, page, filters, q["limit"]))

    @staticmethod
    def _body(request: Request, page: QueuePage, filters: QueueFilters, limit: int
              ) -> dict[str, Any]:
        def link(token: str | None) -> str | None:
            if token is None:
                return None
            params = {**filters.as_params(), "cursor": token}
            if limit != DEFAULT_LIMIT:
                params["limit"] = str(limit)
            return request.build_absolute_uri(f"{request.path}?{urlencode(params)}")

        return {
            "results": QueueRowOut(page.rows, many=True, context={"request": request}).data,
            "next": link(page.next_cursor),
            "previous": link(page.previous_cursor),
            "counts": {c.reason: {"count": c.count, "capped": c.capped} for c in page.counts},
        }


# --- Leases -------------------------------------------------------------------------------------

class ClaimOut(serializers.Serializer):
    trace_id = serializers.CharField()
    lease = LeaseOut()


class ClaimView(ReviewerView):
    body_methods: frozenset[str] = frozenset()  # a claim takes no options

    @extend_schema(
        request=None,
        responses={200: ClaimOut,
                   404: OpenApiResponse(description="No such answer, or one you may not read"),
                   409: OpenApiResponse(description="`leased_by_other` (with holder and until)"
                                                    " or `not_held`")},
        summary="Claim a held answer for REVIEW_LEASE_SECONDS, or renew your lease",
        description="Takes no body (or `{}`). A colleague's active lease is a 409 naming "
                    "the holder and until when.",
    )
    def post(self, request: Request, trace_id: str) -> Response:
        answer = readable_answer(request, trace_id)
        lease = lease_claim(answer=answer, user=request.user, actor=actor_of(request))
        return Response({"trace_id": trace_id, "lease": lease.as_dict()})


class ReleaseIn(StrictSerializer):
    force = serializers.BooleanField(
        required=False, default=False,
        help_text="Admins only: break a colleague's lease",
    )


class ReleaseOut(serializers.Serializer):
    trace_id = serializers.CharField()
    released = serializers.BooleanField(help_text="False when the lease was already free")


class ReleaseView(ReviewerView):
    @extend_schema(
        request=ReleaseIn,
        responses={200: ReleaseOut,
                   403: OpenApiResponse(description="force on a colleague's lease, from "
                                                    "someone not an admin (on one's own lease, "
                                                    "force changes nothing)"),
                   409: OpenApiResponse(description="`leased_by_other` or `not_held`")},
        summary="Release your lease (admins: break anyone's with force)",
        description="No body, or `{}`, releases your own lease; `{\"force\": true}` lets an "
                    "admin break a colleague's.",
    )
    def post(self, request: Request, trace_id: str) -> Response:
        # No body means no options; a body must be an object of them.
        body = ReleaseIn(data=request.data if request._rq_raw_body else {})
        body.is_valid(raise_exception=True)
        answer = readable_answer(request, trace_id)
        released = lease_release(answer=answer, user=request.user, actor=actor_of(request),
                                 force=body.validated_data["force"])
        return Response({"trace_id": trace_id, "released": released})


# --- Decisions ----------------------------------------------------------------------------------

class DecisionIn(StrictSerializer):
    action = serializers.ChoiceField(choices=["approve", "reject", "edit"])
    verdict = serializers.IntegerField(min_value=1, max_value=gating.MAX_INT,
                                       help_text="Id of the verdict the decision was made on")
    comment = serializers.CharField(max_length=MAX_COMMENT_CHARS, required=False,
                                    allow_blank=True, default="")
    reason = serializers.ChoiceField(choices=list(REJECT_REASONS), required=False)
    answer = serializers.CharField(max_length=200_000, required=False, trim_whitespace=False)
    claims = serializers.ListField(child=EditedClaimIn(), required=False, max_length=1000)
    despite = serializers.BooleanField(
        required=False, default=False,
        help_text="Approve although some claims do not hold against their sources (✗ on the "
                  "answer's page): such an approval is refused without it, as the page asks "
                  "for a second yes")
    claims_checked = serializers.BooleanField(
        required=False, default=False,
        help_text="Save an edit whose text no longer says a value that its claims, left as "
                  "they were, state (the gate checks the claims, not the text): such an edit "
                  "is refused without it")

    def cross_field_errors(self, attrs: dict[str, Any]) -> dict[str, Any]:
        """What the action asks of the other fields. `attrs` holds the fields that validated;
        a field sent but refused is named by its own error, never by one of these too."""
        action = attrs.get("action")
        if action is None:
            return {}
        sent = self.initial_data
        errors: dict[str, list[str]] = {}
        if action == "reject":
            if "reason" not in sent:  # "" or null is refused by the field itself
                errors["reason"] = ["Required to reject."]
            elif attrs.get("reason") == "other" and "comment" in attrs \
                    and not attrs["comment"].strip():
                errors["comment"] = ["Say why the answer is rejected."]
        elif "reason" in attrs:
            # Kept nowhere otherwise: the caller would believe a reason was recorded.
            errors["reason"] = ["Only a reject takes a reason."]
        if action != "approve" and "despite" in sent:
            errors["despite"] = ["Only an approval takes it."]
        if action != "edit" and "claims_checked" in sent:
            errors["claims_checked"] = ["Only an edit takes it."]
        for name in ("answer", "claims"):
            if action == "edit" and name not in sent:
                errors[name] = ["Required to edit."]
            elif action != "edit" and name in sent:
                errors[name] = ["Only an edit changes the answer."]
        return errors

    def to_input(self) -> DecisionInput:
        d = self.validated_data
        claims = None
        if "claims" in d:
            claims = [{k: v for k, v in c.items() if not (k == "subject" and v is None)}
                      for c in d["claims"]]
        return DecisionInput(action=d["action"], verdict_id=d["verdict"], comment=d["comment"],
                             reject_reason=d.get("reason", ""), text=d.get("answer"),
                             claims=claims, claims_checked=d["claims_checked"])


class DecisionOut(serializers.Serializer):
    id = serializers.IntegerField()
    action = serializers.CharField()
    verdict = serializers.IntegerField(source="verdict_id")
    reviewer = serializers.CharField(source="reviewer.username")
    comment = serializers.CharField()
    reject_reason = serializers.CharField()
    new_version = serializers.SerializerMethodField()
    read_passages = serializers.BooleanField()
    created_at = InstantField()

    def get_new_version(self, decision: Any) -> int | None:
        return decision.new_version.number if decision.new_version_id else None


class DecisionCreatedOut(serializers.Serializer):
    trace_id = serializers.CharField()
    status = serializers.ChoiceField(choices=Answer.Status.choices, help_text=ANSWER_STATUS_HELP)
    decision = DecisionOut()
    verdict = VerdictOut()


def claim_names(request: Request, trace_id: str) -> dict[str, set[str]]:
    """The keys and subjects of the answer's claims now, by field, for an edit (which sends
    back every claim) to keep as they came: one stored before tabs and line breaks were
    refused in names is the answer's own. No names for an answer the caller may not read: the
    404 that follows the body's checks says all there is to say of it."""
    if not (isinstance(request.data, dict) and request.data.get("claims")):
        return {}
    answer = Answer.objects.filter(trace_id=trace_id).select_related("current_version").first()
    if answer is None or answer.current_version is None \
            or not user_may_read_answer(answer, user_principals(request.user)):
        return {}
    claims = [c for c in answer.current_version.claims if isinstance(c, dict)]
    return {name: {c[name] for c in claims if isinstance(c.get(name), str)}
            for name in ("key", "subject")}


class DecisionView(ReviewerView):
    @extend_schema(
        request=DecisionIn,
        responses={
            201: DecisionCreatedOut,
            200: OpenApiResponse(DecisionCreatedOut, description="The same decision sent again "
                                 "by the reviewer who made it (a retry): nothing new is "
                                 "recorded; the body is the stored decision and the answer now"),
            400: OpenApiResponse(description="A bad field, or `edit_refused`: the gate "
                                             "abstains on the edit (nothing stored)"),
            403: OpenApiResponse(description="Not a reviewer, or a token without `review`"),
            404: OpenApiResponse(description="No such answer, or one you may not read"),
            409: OpenApiResponse(description="`stale_verdict` (with the current verdict), "
                                             "`not_held` (with the `decision` that approved "
                                             "or rejected it), `recorded_before` (the same "
                                             "decision of yours was recorded, and the answer "
                                             "has come back to the queue since: with that "
                                             "`decision` and the `current_verdict` id; nothing "
                                             "is claimed), `leased_by_other`, or "
                                             "`approve_refused`: the current verdict "
                                             "abstains, so the answer can only be rejected "
                                             "or edited"),
        },
        summary="Approve, reject or edit a held answer, on the verdict you saw",
        description="`verdict` is the id of the verdict the decision was made on. If it is "
                    "no longer the answer's current verdict, or no longer fresh, nothing is "
                    "applied: the answer is re-evaluated and the 409 carries the current "
                    "verdict. An id that is not one of the answer's verdicts is a 400 naming "
                    "`verdict`. Deciding on a free item claims it first, and the claim "
                    "stands when the decision is refused as stale: the caller holds the item "
                    "to decide again on the verdict the 409 carries (release it otherwise).",
    )
    def post(self, request: Request, trace_id: str) -> Response:
        body = DecisionIn(data=request.data, context={
            "names_as_they_came": claim_names(request, trace_id)})
        body.is_valid(raise_exception=True)
        principals = user_principals(request.user)
        readable_answer(request, trace_id)
        sent = body.validated_data
        if sent["action"] == "approve" and not sent["despite"]:
            # The claims as the answer's page shows them now, whatever the caller saw. Asked
            # only of an approval that could land: one on an old verdict that told otherwise,
            # of an answer no longer held, or leased by another reviewer, gets the service's
            # 409 instead.
            page = item_page(trace_id=trace_id, user=request.user)
            # Nor of a verdict that abstains, which no `despite` lets through: the service
            # refuses it (approve_refused) rather than ask for a flag that cannot help.
            if (page is not None and page.may_decide
                    and page.verdict.decision != Verdict.Decision.ABSTAIN
                    and page.asks_despite(sent["verdict"])):
                # Named by their index in `claims`, as the findings name them; those whose
                # source could not be read are not said to be wrong.
                refuted = [n for n in page.contradicted if n not in page.unchecked]
                said = []
                if refuted:
                    said.append(claim_paths(refuted, "does not hold against what it cites",
                                            "do not hold against what they cite"))
                if page.unchecked:
                    said.append(claim_paths(page.unchecked, "cannot be checked: what it cites "
                                            "could not be read", "cannot be checked: what they "
                                            "cite could not be read"))
                which = "; ".join(said)
                raise FieldError("despite", f"{which}: send true to approve the answer all the "
                                 "same, or edit or reject it")
        try:
            result = answer_decide(trace_id=trace_id, user=request.user,
                                   actor=actor_of(request), data=body.to_input())
        except StaleVerdict as exc:
            exc.extra = {"status": exc.answer.status,
                         "verdict": verdict_body(exc.verdict, principals)}
            raise
        except EditRefused as exc:
            findings = redact_findings([f.to_dict() for f in exc.verdict.findings], principals)
            # Each finding named at the field it is about, as every refusal names its fields:
            # the claim by its index, the text (a marker citing nothing) as `answer`.
            errors = [{"field": "answer" if f.get("claim") is None else f"claims[{f['claim']}]",
                       "message": f["message"]} for f in findings]
            exc.extra = {"decision": exc.verdict.decision, "reason": exc.verdict.reason,
                         "findings": findings, "errors": errors}
            raise
        return Response({
            "trace_id": trace_id,
            "status": result.status,
            "decision": DecisionOut(result.decision).data,
            "verdict": verdict_body(result.verdict, principals),
        }, status=200 if result.replayed else 201)
