"""A rolling deploy: workers of the previous gate version still take chunks while workers of
the new one already stored verdicts. An older gate never replaces a newer gate's verdict."""

from __future__ import annotations

from typing import Any
from unittest import mock

import pytest

import gating
from reviewqueue.audit.services import SYSTEM
from reviewqueue.jobs.models import DeadLetter
from reviewqueue.jobs.services import dead_letter_retry, job_start_for_answers
from reviewqueue.reviews.models import Answer, Verdict

pytestmark = pytest.mark.django_db

PREVIOUS = "2026.12.7"


def previous_gate() -> Any:
    """What a worker still running the previous release computes with."""
    return mock.patch("gating.engine.GATE_VERSION", PREVIOUS)


def current_gate_version(answer: Answer) -> str:
    answer.refresh_from_db()
    return answer.current_verdict.gate_version


def test_a_worker_of_the_previous_gate_does_not_replace_a_newer_verdict(
    publish_doc: Any, ingest: Any, on_commit: Any
) -> None:
    publish_doc("pricing", "r1")
    answer = ingest("t-1")
    with previous_gate(), on_commit():
        job = job_start_for_answers([answer.pk], "manual", None, actor=SYSTEM)

    assert current_gate_version(answer) == gating.GATE_VERSION
    assert not Verdict.objects.filter(gate_version=PREVIOUS).exists()
    job.refresh_from_db()
    # Not counted as re-evaluated: an admin sends it again once the deploy is over.
    assert (job.state, job.done, job.failed, job.changed) == ("finished", 0, 1, 0)
    letter = DeadLetter.objects.get(job=job, answer_id=answer.pk)
    assert PREVIOUS in letter.error_message and gating.GATE_VERSION in letter.error_message


def test_a_verdict_of_the_previous_gate_is_not_made_current_again(
    publish_doc: Any, ingest: Any, on_commit: Any
) -> None:
    publish_doc("pricing", "r1")
    with previous_gate():
        answer = ingest("t-1")
    old = answer.current_verdict_id
    with on_commit():  # the new release's `reevaluate --all`
        job_start_for_answers([answer.pk], "gate_version", None, actor=SYSTEM)
    assert current_gate_version(answer) == gating.GATE_VERSION

    with previous_gate(), on_commit():  # a chunk a draining old worker took meanwhile
        job_start_for_answers([answer.pk], "manual", None, actor=SYSTEM)

    assert current_gate_version(answer) == gating.GATE_VERSION
    assert answer.current_verdict_id != old


def test_sent_again_from_its_dead_letter_after_the_deploy_it_counts_as_done(
    publish_doc: Any, ingest: Any, on_commit: Any, admin_user: Any
) -> None:
    publish_doc("pricing", "r1")
    answer = ingest("t-1")
    with previous_gate(), on_commit():
        job = job_start_for_answers([answer.pk], "manual", None, actor=SYSTEM)
    letter = DeadLetter.objects.get(job=job, answer_id=answer.pk)

    with on_commit():  # every worker runs the new gate now
        dead_letter_retry(dead_letter_id=letter.pk, user=admin_user, actor=SYSTEM)

    job.refresh_from_db()
    assert (job.state, job.done, job.failed) == ("finished", 1, 0)
    letter.refresh_from_db()
    assert letter.resolved_at is not None
    assert current_gate_version(answer) == gating.GATE_VERSION
