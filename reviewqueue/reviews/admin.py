from django.contrib import admin

from reviewqueue.admin_base import ReadOnlyAdmin, fixed_choices_filter
from reviewqueue.reviews.labels import REASON_LABELS
from reviewqueue.reviews.models import Answer, Decision, ReviewItem, Verdict


# Answers, queue entries and documents change only through the product's own pages and API,
# which audit every change, re-evaluate and keep the queue in step: here they are shown only.
@admin.register(Answer)
class AnswerAdmin(ReadOnlyAdmin):
    list_display = ("trace_id", "status", "index_release", "status_changed_at")
    list_filter = ("status",)
    search_fields = ("trace_id",)


@admin.register(Verdict)
class VerdictAdmin(ReadOnlyAdmin):
    list_display = ("id", "answer", "decision", "reason", "trigger", "as_of", "created_at")
    # The gate's reasons are a fixed list; a plain "reason" would read every verdict for it.
    list_filter = ("decision", fixed_choices_filter("reason", REASON_LABELS), "trigger")
    list_select_related = ("answer",)


@admin.register(ReviewItem)
class ReviewItemAdmin(ReadOnlyAdmin):
    list_display = ("answer", "primary_reason", "entered_at", "leased_by", "lease_until")
    list_select_related = ("answer", "leased_by")


@admin.register(Decision)
class DecisionAdmin(ReadOnlyAdmin):
    list_display = ("answer", "action", "reviewer", "verdict", "created_at")
    # Every column that shows a related row is joined, or each row costs a query of its own.
    list_select_related = ("answer", "reviewer", "verdict")
