"""The demo data loads through the product's own services, and its first decisions once."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from reviewqueue import demo
from reviewqueue.accounts.models import ApiToken
from reviewqueue.reviews.models import Answer, Decision, OwnerQuestion, ReviewItem

pytestmark = pytest.mark.django_db


def test_the_demo_starts_with_a_few_decisions_and_two_answers_sent_to_their_owners() -> None:
    out = io.StringIO()
    printed = demo.load(out, answers=40)
    assert printed["rag-service"].count("rq_") == 1

    # 40 answers hold one of each scenario, and some of them twice.
    decisions = set(Decision.objects.values_list("reviewer__username", "action",
                                                 "reject_reason", "comment"))
    assert {d[:3] for d in decisions} == {("alice", "approve", ""), ("alice", "reject", "outdated"),
                                         ("hana", "approve", "")}
    assert "30 days is right here; the EU policy applies to EU customers only." in {
        d[3] for d in decisions}
    decided = Decision.objects.count()
    assert 3 <= decided <= 7
    assert Answer.objects.filter(status__in=["approved", "rejected"]).count() == decided
    sent = ReviewItem.objects.get(waiting_for_owner=True)
    assert sent.owner_question.asked_by.username == "alice"
    assert sent.answer.question == "How long is the free trial?"
    # One more, which its owner answered: back with the reviewers, the reply beside the question.
    replied = OwnerQuestion.objects.get(replied_by__username="oscar")
    assert replied.asked_by.username == "alice"
    assert not ReviewItem.objects.get(answer=replied.answer).waiting_for_owner
    assert replied.reply.startswith("Both are right: workspace data goes after 90 days")
    assert "which do customers get?" in replied.note

    demo.load(io.StringIO(), answers=40)  # `make demo` again: nothing decided twice
    assert Decision.objects.count() == decided
    assert Answer.objects.filter(trace_id__startswith="demo-").count() == 40


def test_load_demo_refuses_a_negative_number_of_answers_and_loads_nothing() -> None:
    with pytest.raises(CommandError) as raised:
        call_command("load_demo", "--answers", "-1", stdout=io.StringIO())
    assert str(raised.value) == "Error: argument --answers: must be 0 or more, not -1"
    assert not ApiToken.objects.exists()
