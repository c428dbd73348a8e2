"""The Celery set-up: one place, JSON only, late acks, limits, retries, beat, catch-up."""

from __future__ import annotations

from typing import Any
from unittest import mock

import kombu.exceptions
import pytest
import redis.exceptions
from celery.schedules import crontab
from django.conf import settings
from django.db import InterfaceError, OperationalError

from reviewqueue.celery import app, catch_up_when_a_worker_starts
from tests.conftest import frozen_and_walked


def test_celery_reads_its_settings_from_django_under_the_celery_namespace() -> None:
    assert app.conf.task_serializer == "json"
    assert app.conf.result_serializer == "json"
    assert app.conf.accept_content == ["json"]
    assert app.conf.task_acks_late is True
    assert app.conf.task_reject_on_worker_lost is True
    assert app.conf.worker_prefetch_multiplier == 1
    assert app.conf.timezone == settings.TIME_ZONE


def test_the_visibility_timeout_outlasts_the_hard_time_limit() -> None:
    soft, hard = app.conf.task_soft_time_limit, app.conf.task_time_limit
    visibility = app.conf.broker_transport_options["visibility_timeout"]
    assert 0 < soft < hard < visibility
    # A retry is a message with a countdown; Redis must not hand it out twice meanwhile.
    assert visibility > settings.CELERY_TASK_RETRY_BACKOFF_MAX


# Importing the task modules runs Django's checks (Celery's Django fix-up), which read the
# database.
@pytest.mark.django_db
@pytest.mark.parametrize("entry, task", [
    ("reevaluate-validity-boundaries", "jobs.sweep_validity_boundaries"),
    ("close-ended-conflicts", "sources.close_ended_conflicts"),
])
def test_the_days_sweep_and_close_are_asked_for_every_hour_from_just_after_midnight(
        entry: str, task: str) -> None:
    # Every hour, not once a day: beat does not send again a task whose send failed.
    app.loader.import_default_modules()
    scheduled = app.conf.beat_schedule[entry]
    assert scheduled["task"] == task
    assert scheduled["schedule"] == crontab(minute=5)
    assert scheduled["task"] in app.tasks


@pytest.mark.django_db  # as above
def test_every_scheduled_task_exists() -> None:
    app.loader.import_default_modules()
    for name, entry in app.conf.beat_schedule.items():
        assert entry["task"] in app.tasks, name


def test_reevaluation_tasks_retry_transient_errors_with_backoff_and_jitter() -> None:
    task = app.tasks["reviews.reevaluate_answers"]
    for error in (OperationalError, InterfaceError, kombu.exceptions.OperationalError,
                  redis.exceptions.ConnectionError):
        assert issubclass(error, task.autoretry_for)
    assert task.retry_backoff and task.retry_jitter
    assert task.max_retries == settings.CELERY_TASK_MAX_RETRIES


def test_a_starting_worker_catches_up_on_the_sweep_the_close_and_stalled_jobs(
        settings: Any) -> None:
    settings.REEVALUATION_CATCH_UP_ON_START = True
    with mock.patch.object(app, "send_task") as send:
        catch_up_when_a_worker_starts()
    assert [c.args[0] for c in send.call_args_list] == ["jobs.sweep_validity_boundaries",
                                                         "sources.close_ended_conflicts",
                                                         "jobs.resume_stalled"]


def test_a_worker_starts_even_when_the_catch_up_cannot_be_sent(settings: Any) -> None:
    settings.REEVALUATION_CATCH_UP_ON_START = True
    with mock.patch.object(app, "send_task",
                           side_effect=kombu.exceptions.OperationalError("down")):
        catch_up_when_a_worker_starts()  # logs, does not raise


def test_a_process_that_runs_tasks_keeps_its_startup_objects_out_of_full_collections() -> None:
    """In a fresh process, as a worker starts one: once Django and every task module are
    loaded, the process's start (worker_process_init) leaves what it loaded out of the
    collector's passes, so a full pass walks few objects."""
    frozen, walked = frozen_and_walked(
        "import django; django.setup(); from celery.signals import worker_process_init; "
        "from reviewqueue.celery import app; app.loader.import_default_modules(); "
        "worker_process_init.send(sender='test')")
    assert frozen > 10 * walked, (frozen, walked)
