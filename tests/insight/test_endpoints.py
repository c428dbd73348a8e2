"""The insight page, GET /api/v1/metrics and the Prometheus endpoint: who may read them,
what they accept, and that no text ever leaves through them."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest
from django.test import Client

from tests.insight.conftest import SECRET_QUESTION, SECRET_TEXT, Builder

pytestmark = pytest.mark.django_db

RANGE = "since=2026-10-04&until=2026-10-07"


def _computed(client: Any, url: str, capture: Any, **extra: Any) -> Any:
    """GET `url` once the worker has computed its figures: the first request finds none and
    asks for them (one task, sent on commit); the second reads what the task stored."""
    with capture(execute=True) as sent:
        first = client.get(url, **extra)
    assert first.status_code == 200
    assert len(sent) == 1
    return client.get(url, **extra)


def _sample(text: str, name: str) -> float:
    """The value of an unlabelled sample in Prometheus text."""
    return next(float(line.split()[1]) for line in text.splitlines()
                if line.startswith(f"{name} "))


@pytest.fixture
def admin_api(admin_user: Any, token_client: Any) -> Any:
    return token_client(admin_user)


# --- the page -----------------------------------------------------------------------------------


def test_the_insight_page_draws_its_charts_on_the_server(
    admin_client: Client, scenario: Builder, django_capture_on_commit_callbacks: Any
) -> None:
    response = _computed(admin_client, f"/insight/?{RANGE}", django_capture_on_commit_callbacks)
    assert response.status_code == 200
    page = response.content.decode()
    # Each chart drawn for a wide card and for a phone's; the page's CSS shows one of the two.
    assert page.count('<svg class="chart" data-fit="wide"') == 7
    assert page.count('<svg class="chart" data-fit="phone"') == 7
    # No inline script: any script the page has is a file.
    assert all("src=" in tag for tag in re.findall(r"<script[^>]*>", page))
    assert 'data-testid="hold-rate">41.7%' in page  # 5 of 12
    assert "Answers received 2026-10-04 to 2026-10-07: 12." in page


def test_the_page_names_documents_held_answers_wait_for(
    admin_client: Client, build: Builder, django_capture_on_commit_callbacks: Any
) -> None:
    from reviewqueue.reviews.models import RetrievedItem

    answer = build.answer("waits", when=dt.datetime(2026, 10, 5, tzinfo=dt.UTC),
                          decision="review", reason="invalid_metadata")
    build.queue(answer, entered=dt.datetime(2026, 10, 5, tzinfo=dt.UTC))
    RetrievedItem.objects.create(answer=answer, cite="g1", document_key="hosting-<regions>",
                                 revision="v1")
    page = _computed(admin_client, f"/insight/?{RANGE}",
                     django_capture_on_commit_callbacks).content.decode()
    [banner] = re.findall(r"<p class=\"banner warning\" data-waiting-for-documents>(.*?)</p>",
                          page, re.S)
    assert "1 held answer cites a document the store has not received" in banner
    assert "<code>hosting-&lt;regions&gt;</code>" in banner
    # Why an admin's own queue can show fewer than the backlog here.
    assert "shows only the answers whose every document that person may read" in page


def test_the_page_compares_releases_reason_by_reason(
    admin_client: Client, scenario: Builder, django_capture_on_commit_callbacks: Any
) -> None:
    page = _computed(admin_client, f"/insight/?{RANGE}",
                     django_capture_on_commit_callbacks).content.decode()
    matrix = page.split('data-testid="release-matrix"')[1].split("</table>")[0]
    assert ("<th scope=\"col\" data-verbatim>2026.10</th>"
            "<th scope=\"col\" data-verbatim>2026.09</th>") in matrix
    assert "50.0% <span class=\"muted\">(2)</span>" in matrix  # conflicting_sources in 2026.09


def test_a_release_no_answer_of_the_window_came_from_is_said_with_the_ones_that_did(
    admin_client: Client, scenario: Builder, django_capture_on_commit_callbacks: Any
) -> None:
    _computed(admin_client, f"/insight/?{RANGE}", django_capture_on_commit_callbacks)
    page = _computed(admin_client, f"/insight/?{RANGE}&release=2099.01",
                     django_capture_on_commit_callbacks).content.decode()
    [banner] = re.findall(r'<p class="banner warning" data-unknown-release>(.*?)</p>', page,
                          re.S)
    assert ("No answer received in this window came from index release <code>2099.01</code>."
            in banner)
    assert re.findall(r'<a href="([^"]+)">([^<]+)</a>', banner) == [
        ("?since=2026-10-04&amp;until=2026-10-07&amp;release=2026.10", "2026.10"),
        ("?since=2026-10-04&amp;until=2026-10-07&amp;release=2026.09", "2026.09")]
    # The backlog is not filtered by release, and says so.
    assert "· all releases" in page
    known = _computed(admin_client, f"/insight/?{RANGE}&release=2026.09",
                      django_capture_on_commit_callbacks).content.decode()
    assert "Answers received 2026-10-04 to 2026-10-07: 4." in known
    assert "data-unknown-release" not in known


def test_the_page_defaults_to_the_last_30_days(
    admin_client: Client, db: Any, django_capture_on_commit_callbacks: Any
) -> None:
    from django.utils import timezone

    today = timezone.localdate()
    page = _computed(admin_client, "/insight/",
                     django_capture_on_commit_callbacks).content.decode()
    since = today - dt.timedelta(days=29)
    assert f"Answers received {since.isoformat()} to {today.isoformat()}: 0." in page


def test_the_page_never_shows_question_or_answer_text(
    admin_client: Client, scenario: Builder, django_capture_on_commit_callbacks: Any
) -> None:
    page = _computed(admin_client, f"/insight/?{RANGE}",
                     django_capture_on_commit_callbacks).content.decode()
    assert "Secret" not in page


def test_the_page_counts_nothing_itself_and_asks_the_worker_once(
    admin_client: Client, scenario: Builder, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=False) as sent:
        first = admin_client.get(f"/insight/?{RANGE}")
        second = admin_client.get(f"/insight/?{RANGE}")
    assert len(sent) == 1  # the second request finds the first one's request in flight
    for response in (first, second):
        assert response.status_code == 200
        page = response.content.decode()
        assert "are being computed by a background worker" in page
        assert 'data-testid="hold-rate"' not in page


def test_the_page_says_when_its_figures_were_computed(
    admin_client: Client, scenario: Builder, django_capture_on_commit_callbacks: Any
) -> None:
    from django.utils import timezone

    before = timezone.now()
    page = _computed(admin_client, f"/insight/?{RANGE}",
                     django_capture_on_commit_callbacks).content.decode()
    stamp = page.split('data-testid="computed-at"')[1].split("</p>")[0]
    assert f"Figures computed at {timezone.localtime(before):%Y-%m-%d %H:%M}" in stamp
    assert "ago) by a background worker" in stamp
    assert "These figures are old" not in stamp


def test_old_figures_are_shown_with_their_time_while_fresh_ones_are_computed(
    admin_client: Client, scenario: Builder, django_capture_on_commit_callbacks: Any
) -> None:
    from django.utils import timezone

    from reviewqueue.insight.forms import WindowForm
    from reviewqueue.insight.snapshots import STALE_AFTER, snapshot_refresh

    form = WindowForm({"since": "2026-10-04", "until": "2026-10-07"})
    assert form.is_valid()
    earlier = timezone.now() - dt.timedelta(seconds=STALE_AFTER + 60)
    snapshot_refresh(form.window, now=earlier)
    scenario.answer("late", when=dt.datetime(2026, 10, 6, 9, tzinfo=dt.UTC), decision="review",
                    reason="invalid_metadata")
    with django_capture_on_commit_callbacks(execute=True) as sent:
        page = admin_client.get(f"/insight/?{RANGE}").content.decode()
    assert len(sent) == 1
    assert "These figures are old: a fresh computation has been requested." in page
    assert f"Figures computed at {timezone.localtime(earlier):%Y-%m-%d %H:%M:%S}" in page
    assert 'data-testid="hold-rate">41.7%' in page  # 5 of 12, as computed then
    page = admin_client.get(f"/insight/?{RANGE}").content.decode()
    assert 'data-testid="hold-rate">46.2%' in page  # 6 of 13, computed since
    assert "These figures are old" not in page


def test_beat_refreshes_the_last_30_days_every_minute(
    admin_client: Client, scenario: Builder, django_capture_on_commit_callbacks: Any
) -> None:
    from django.conf import settings
    from django.utils import timezone

    from reviewqueue.insight.tasks import refresh_metrics

    entry = settings.CELERY_BEAT_SCHEDULE["refresh-insight-metrics"]
    assert (entry["task"], entry["schedule"]) == ("insight.refresh_metrics", 60.0)
    scenario.answer("today", when=timezone.now(), decision="review", reason="invalid_metadata")
    refresh_metrics.delay()
    with django_capture_on_commit_callbacks(execute=False) as sent:
        page = admin_client.get("/insight/").content.decode()
    assert sent == []  # fresh: nothing asked of the worker
    assert 'data-testid="hold-rate">100.0%' in page  # 1 of 1 in the last 30 days


@pytest.mark.parametrize("query, message", [
    ("limit=5", "limit: not a search parameter"),
    ("since=2026-10-09&until=2026-10-01", "Must not be before the first day"),
    ("since=2020-01-01&until=2026-01-01", "at most"),
    ("bucket=month", "Select a valid choice"),
])
def test_the_page_refuses_parameters_it_does_not_know(
    admin_client: Client, query: str, message: str
) -> None:
    response = admin_client.get(f"/insight/?{query}")
    assert response.status_code == 400
    assert message in response.content.decode()


def test_a_reviewer_may_not_see_insight(reviewer: Any) -> None:
    client = Client()
    client.force_login(reviewer)
    assert client.get("/insight/").status_code == 403


def test_an_anonymous_visitor_is_sent_to_sign_in(client: Client) -> None:
    assert client.get("/insight/").status_code == 302


# --- GET /api/v1/metrics ------------------------------------------------------------------------


def test_the_metrics_api_returns_every_figure(
    admin_api: Any, scenario: Builder, django_capture_on_commit_callbacks: Any
) -> None:
    response = _computed(admin_api, f"/api/v1/metrics?{RANGE}",
                         django_capture_on_commit_callbacks)
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ready"
    # An instant in UTC ends in Z, as in every body the product sends.
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", body["generated_at"])
    assert body["window"] == {"since": "2026-10-04", "until": "2026-10-07", "release": None,
                              "bucket": "day"}
    assert body["gate"]["held"] == {"count": 5, "of": 12, "rate": round(5 / 12, 6)}
    assert body["review"]["over_hold"]["rate"] == 0.5
    assert body["review"]["time_to_decision_seconds"] == {"median": 9000.0, "p95": 13860.0}
    assert body["citations"]["fabricated"]["count"] == 1
    assert body["review"]["false_pass"]["rejected"]["rate"] == 0.5
    assert [r["release"] for r in body["releases"]] == ["2026.10", "2026.09"]
    assert set(body["operations"]) == {"queue_depth", "queue_depth_by_reason",
                                       "oldest_held_age_seconds", "reevaluation_lag_seconds",
                                       "task_failures", "task_failures_waiting", "audit"}


def test_the_metrics_api_filters_by_release(
    admin_api: Any, scenario: Builder, django_capture_on_commit_callbacks: Any
) -> None:
    body = _computed(admin_api, f"/api/v1/metrics?{RANGE}&release=2026.09",
                     django_capture_on_commit_callbacks).json()
    assert body["gate"]["held"] == {"count": 3, "of": 4, "rate": 0.75}


def test_the_metrics_api_carries_no_text(
    admin_api: Any, scenario: Builder, django_capture_on_commit_callbacks: Any
) -> None:
    body = _computed(admin_api, f"/api/v1/metrics?{RANGE}",
                     django_capture_on_commit_callbacks).content.decode()
    assert '"gate"' in body
    assert SECRET_TEXT not in body
    assert SECRET_QUESTION not in body
    assert "Secret" not in body


def test_the_metrics_api_says_when_the_figures_are_still_being_computed(
    admin_api: Any, scenario: Builder
) -> None:
    response = admin_api.get(f"/api/v1/metrics?{RANGE}")
    assert response["Retry-After"] == "10"
    body = response.json()
    assert body == {"status": "computing", "generated_at": None, "retry_after_seconds": 10,
                    "window": {"since": "2026-10-04", "until": "2026-10-07", "release": None,
                               "bucket": "day"}}


@pytest.mark.parametrize("name", ["limit", "team:name"])
def test_the_metrics_api_refuses_an_unknown_parameter_by_its_name(admin_api: Any,
                                                                  name: str) -> None:
    response = admin_api.get(f"/api/v1/metrics?{name}=5")
    assert response.status_code == 400
    assert response.json()["errors"] == [{"field": name, "message": "not a search parameter"}]
    assert response.json()["detail"] == f"{name}: not a search parameter"


@pytest.mark.parametrize("day", ["10/04/2026", "2026-1-4", "2026-10-4", " 2026-10-04x"])
def test_the_metrics_api_refuses_a_bad_date(admin_api: Any, day: str) -> None:
    """Days are written YYYY-MM-DD, as facts write theirs: not "2026-1-4" either."""
    response = admin_api.get("/api/v1/metrics", {"since": day})
    assert response.status_code == 400
    assert response.json()["errors"] == [{
        "field": "since",
        "message": f"Enter a valid date, such as 2026-12-31: “{day.strip()}” is not one."}]


def test_a_service_token_may_not_read_metrics(service_api: Any) -> None:
    assert service_api.get("/api/v1/metrics").status_code == 403


def test_an_admin_token_without_the_read_scope_may_not_read_metrics(
    admin_user: Any, token_client: Any
) -> None:
    assert token_client(admin_user, scopes=["review"]).get("/api/v1/metrics").status_code == 403


# --- /metrics for Prometheus --------------------------------------------------------------------


def test_prometheus_reads_queue_depth_age_lag_and_failures(
    admin_api: Any, build: Builder, django_capture_on_commit_callbacks: Any
) -> None:
    from django.utils import timezone

    answer = build.answer("q1", when=timezone.now(), decision="review",
                          reason="conflicting_sources")
    build.queue(answer, entered=timezone.now() - dt.timedelta(hours=1))
    response = _computed(admin_api, "/metrics", django_capture_on_commit_callbacks,
                         HTTP_ACCEPT="application/openmetrics-text;version=1.0.0,"
                                     "text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; version=0.0.4; charset=utf-8"
    text = response.content.decode()
    assert "# TYPE reviewqueue_queue_depth gauge\nreviewqueue_queue_depth 1\n" in text
    assert 'reviewqueue_queue_depth_by_reason{reason="conflicting_sources"} 1' in text
    assert 3600 <= _sample(text, "reviewqueue_oldest_held_age_seconds") < 3700
    assert "reviewqueue_reevaluation_lag_seconds 0\n" in text
    assert ("# TYPE reviewqueue_task_failures_total counter\n"
            "reviewqueue_task_failures_total 0\n") in text
    assert "reviewqueue_task_failures_waiting 0\n" in text
    assert "reviewqueue_audit_chain_ok" not in text  # never verified
    computed = _sample(text, "reviewqueue_metrics_computed_timestamp_seconds")
    assert computed == pytest.approx(timezone.now().timestamp(), abs=60)


def test_prometheus_gets_no_queue_figures_before_the_first_snapshot(
    admin_api: Any, db: Any
) -> None:
    text = admin_api.get("/metrics").content.decode()
    assert text == "# The first figures are being computed.\n"


def test_prometheus_sees_the_audit_chain_state(admin_client: Client, db: Any) -> None:
    from reviewqueue.audit.services import audit_verify

    run = audit_verify(trigger="command")
    text = admin_client.get("/metrics").content.decode()
    assert "reviewqueue_audit_chain_ok 1\n" in text
    stamp = _sample(text, "reviewqueue_audit_last_verification_timestamp_seconds")
    assert stamp == pytest.approx(run.finished_at.timestamp())


def test_prometheus_needs_credentials(client: Client) -> None:
    response = client.get("/metrics")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"


def test_a_reviewer_may_not_scrape(reviewer: Any, token_client: Any) -> None:
    assert token_client(reviewer).get("/metrics").status_code == 403


@pytest.mark.parametrize(("since", "until"), [
    (dt.date(2026, 10, 4), dt.date(2026, 12, 5)),    # up to today
    (dt.date(2020, 1, 1), dt.date(2020, 1, 1) + dt.timedelta(days=3 * 366 - 1)),  # at most
    (dt.date(2027, 1, 1), dt.date(2027, 1, 1)),      # a day still to come: that day
])
def test_a_window_given_only_its_first_day_runs_to_today(
    since: dt.date, until: dt.date, monkeypatch: Any
) -> None:
    """As the audit log reads "From": not a silent 30 days after it."""
    from reviewqueue.insight import forms

    monkeypatch.setattr(forms, "default_window",
                        lambda: forms.Window(since=dt.date(2026, 11, 6),
                                             until=dt.date(2026, 12, 5)))
    form = forms.WindowForm({"since": since.isoformat()})
    assert form.is_valid(), form.errors
    assert (form.window.since, form.window.until) == (since, until)


def test_prometheus_reads_a_snapshot_computed_before_the_waiting_failures_were(
    admin_api: Any, db: Any
) -> None:
    """A snapshot the worker stored before an upgrade lacks the newer figure: /metrics still
    answers, with 0 for it, until the next snapshot."""
    from django.core.cache import cache

    from reviewqueue.insight import selectors
    from reviewqueue.insight.snapshots import _key, snapshot_refresh

    window = selectors.default_window()
    metrics = snapshot_refresh(window)
    del metrics["operations"]["task_failures_waiting"]
    cache.set(_key(window), metrics)
    response = admin_api.get("/metrics")
    assert response.status_code == 200
    assert "reviewqueue_task_failures_waiting 0\n" in response.content.decode()
