"""Pages of the reviewer's workspace."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from reviewqueue.accounts.principals import user_principals
from reviewqueue.reviews.models import ReviewItem
from reviewqueue.reviews.selectors.answers import answer_detail, user_may_read_answer


@login_required
def queue(request: HttpRequest) -> HttpResponse:
    items = ReviewItem.objects.select_related("answer").order_by("entered_at", "id")[:50]
    return render(request, "reviews/queue.html", {"items": items})


@login_required
def item(request: HttpRequest, trace_id: str) -> HttpResponse:
    answer = answer_detail(trace_id)
    if answer is None or not user_may_read_answer(answer, user_principals(request.user)):
        raise Http404("No such answer")
    return render(request, "reviews/item.html", {"answer": answer})
