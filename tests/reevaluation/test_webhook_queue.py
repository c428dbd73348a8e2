"""Webhook deliveries have a queue of their own, so that a receiver that is slow, or down and
retried all day, cannot take the worker slots that re-evaluation needs. A worker started without
`-Q` still takes both queues, as one did before they were split."""

from __future__ import annotations

from typing import Any

import pytest

from reviewqueue.audit.services import Actor
from reviewqueue.jobs.models import Job
from reviewqueue.webhooks.models import WebhookAttempt, WebhookDelivery
from reviewqueue.webhooks.services import webhook_endpoint_register
from tests.reevaluation.builders import ingest as ingest_answer
from tests.reevaluation.conftest import Receiver, fact, redis_client, wait_until

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def _job_finished(document: str) -> bool:
    """Every job the document's revisions started has finished, one of them with answers to
    re-evaluate. Each publish commits its job row with it, so the job of r2 is there to wait
    for; the job of r1 may reach the answers ingested after it and finish first."""
    jobs = Job.objects.filter(document_key=document)
    return (jobs.filter(total__gt=0, state=Job.State.FINISHED).exists()
            and not jobs.exclude(state=Job.State.FINISHED).exists())


def test_reevaluation_finishes_on_its_own_worker_while_deliveries_wait_for_theirs(
    start_worker: Any, publish: Any, receiver: Receiver
) -> None:
    webhook_endpoint_register(url=receiver.url, secret="queue-test-secret-0123456789",
                              user=None, actor=Actor("system", "test"))
    start_worker(queues="celery")  # as docker-compose's `worker`
    publish("pricing", "r1", facts=[fact()])
    for number in range(3):
        ingest_answer(f"t-{number}")
    publish("pricing", "r2", facts=[fact()])

    wait_until(lambda: _job_finished("pricing"), timeout=60,
               message="the revision's job did not finish on the re-evaluation worker")
    # Three new answers, then three held by the re-evaluation: none sent yet, all waiting in
    # the webhooks queue for a worker of their own.
    assert WebhookDelivery.objects.count() == 6
    assert not WebhookAttempt.objects.exists() and receiver.requests == []
    assert redis_client().llen("webhooks") >= 1

    start_worker(queues="webhooks")  # as docker-compose's `webhooks`
    wait_until(lambda: len(receiver.delivered()) == 6, timeout=60,
               message="the webhooks worker did not send the waiting deliveries")


def test_a_worker_started_without_queues_takes_both(
    start_worker: Any, publish: Any, receiver: Receiver
) -> None:
    webhook_endpoint_register(url=receiver.url, secret="queue-test-secret-0123456789",
                              user=None, actor=Actor("system", "test"))
    start_worker()
    publish("pricing", "r1", facts=[fact()])
    ingest_answer("t-0")
    publish("pricing", "r2", facts=[fact()])
    wait_until(lambda: _job_finished("pricing") and len(receiver.delivered()) == 2,
               timeout=60, message="one worker did not do both kinds of work")
