from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from reviewqueue.accounts.principals import user_principals
from reviewqueue.admin_base import ReadableOnlyAdmin, fixed_choices_filter
from reviewqueue.reviews.labels import REASON_LABELS
from reviewqueue.reviews.models import Answer, Decision, ReviewItem, Verdict
from reviewqueue.reviews.selectors.answers import redact_verdicts
from reviewqueue.reviews.selectors.queue import readable_rows


class ReadableAnswersAdmin(ReadableOnlyAdmin):
    """Rows of answers the signed-in person may read, as the product's pages and API show an
    answer: one whose every retrieved document they may read. Being an admin is no reason to
    read a question, a comment or a finding about a restricted document (invariant 5)."""

    # How a row names its answer.
    answer_ref = "answer_id"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        return readable_rows(super().get_queryset(request), user_principals(request.user),
                             self.answer_ref)


# Answers, queue entries and documents change only through the product's own pages and API,
# which audit every change, re-evaluate and keep the queue in step: here they are shown only.
@admin.register(Answer)
class AnswerAdmin(ReadableAnswersAdmin):
    answer_ref = "pk"
    list_display = ("trace_id", "status", "index_release", "status_changed_at")
    list_filter = ("status",)
    search_fields = ("trace_id",)


@admin.register(Verdict)
class VerdictAdmin(ReadableAnswersAdmin):
    list_display = ("id", "answer", "decision", "reason", "trigger", "as_of", "created_at")
    # The gate's reasons are a fixed list; a plain "reason" would read every verdict for it.
    list_filter = ("decision", fixed_choices_filter("reason", REASON_LABELS, _("reason")),
                   "trigger")
    list_select_related = ("answer",)
    # Shown only through `get_readonly_fields`, as the API shows them to this admin.
    exclude = ("findings", "warnings")

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[Any]:
        """A finding or warning drawn from a document this admin may not read names neither
        the document nor its value, as in the API: being an admin is no reason to read it."""
        principals = user_principals(request.user)

        def shown(name: str) -> Callable[[Verdict], str]:
            @admin.display(description=Verdict._meta.get_field(name).verbose_name)
            def field(verdict: Verdict) -> str:
                body = {"findings": verdict.findings, "warnings": verdict.warnings,
                        "revisions_used": verdict.revisions_used}
                return json.dumps(redact_verdicts([body], principals)[0][name],
                                  ensure_ascii=False, indent=2)
            return field

        names = [f.name for f in Verdict._meta.fields if f.name not in self.exclude]
        return [*names, shown("findings"), shown("warnings")]


@admin.register(ReviewItem)
class ReviewItemAdmin(ReadableAnswersAdmin):
    list_display = ("answer", "primary_reason", "entered_at", "leased_by", "lease_until")
    list_select_related = ("answer", "leased_by")


@admin.register(Decision)
class DecisionAdmin(ReadableAnswersAdmin):
    list_display = ("answer", "action", "reviewer", "verdict", "created_at")
    # Every column that shows a related row is joined, or each row costs a query of its own.
    list_select_related = ("answer", "reviewer", "verdict")
